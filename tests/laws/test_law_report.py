"""The report functions of chapters 2, 3 and 7 (laws/report.py): the book's one verdict rule on
every slope table, the width trend next to it, law constants, configuration comparisons and the
glued numbers, against facts set by hand."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from attnrank_lite.laws import ball_law as bl  # noqa: E402
from attnrank_lite.laws import plots as lp  # noqa: E402
from attnrank_lite.laws import report as lr  # noqa: E402
from attnrank_lite.laws.verdicts import SLOPE_COLUMNS, WIDTH_SENTENCE  # noqa: E402


def _brackets(betas, lower_exp, upper_exp, n=10**6, eps=(0.1, 0.25)):
    # a deterministic wiggle of 2% so that no interval has zero width (exactly geometric data
    # put the exponent on an interval's edge, where rounding decides the verdict)
    rows = []
    for e in eps:
        for i, b in enumerate(betas):
            w = 1 + 0.02 * (-1) ** i
            rows.append({"beta": b, "eps": e, "n": n, "lower": 2 * b ** lower_exp * w,
                         "upper": 6 * b ** upper_exp * w, "lower_kind": "neumann",
                         "upper_source": "harmonic degree 7"})
    return pd.DataFrame(rows)


def test_law_slopes_follow_the_rule_and_leave_out_capped_rows():
    betas = [16.0, 32.0, 64.0, 128.0, 256.0]
    # d = 3: exponent 1; lower grows like beta^0.5 (below), upper like beta^1 (inside)
    t = lr.law_slopes(_brackets(betas, 0.5, 1.0), 3)
    assert tuple(t.columns[:7]) == SLOPE_COLUMNS and (t["d"] == 3).all()
    lo, up = t[t.end == "lower"], t[t.end == "upper"]
    assert (lo.verdict == "below").all() and (up.verdict == "inside").all()
    assert np.allclose(lo.slope, 0.5, atol=0.02) and np.allclose(up.slope, 1.0, atol=0.02)
    # the last row's upper end reaches n: left out of both ends' fits, counted
    capped = _brackets(betas, 0.5, 1.0, eps=(0.25,))
    capped.loc[4, "upper"] = capped.loc[4, "n"]
    c = lr.law_slopes(capped, 3)
    assert (c.left_out == 1).all() and (c.points == 4).all()
    assert np.allclose(c.slope, [0.5, 1.0], atol=0.02)
    # three points left: inconclusive whatever the interval
    few = lr.law_slopes(_brackets(betas[:3], 1.0, 1.0, eps=(0.25,)), 3)
    assert (few.verdict == "inconclusive").all()


def test_law_section_widths_are_upper_over_lower_per_beta():
    betas = [16.0, 64.0, 256.0, 1024.0]
    slopes, widths, fig = lr.law_section(_brackets(betas, 0.5, 1.0), 3, "t")
    assert list(widths.columns) == ["eps = 0.1", "eps = 0.25"]
    # 6 beta / (2 beta^0.5) = 3 sqrt(beta) (the wiggle cancels in the ratio)
    assert np.allclose(widths["eps = 0.25"], 3 * np.sqrt(betas))
    assert fig.axes and len(slopes) == 4
    text = lr.slopes_text(slopes)
    assert text.startswith("ε = 0.1: lower 0.49 [") and "(below)" in text and "(inside)" in text


def test_law_numbers_count_the_verdict_column():
    betas = [16.0, 32.0, 64.0, 128.0, 256.0]
    b2 = _brackets(betas, 0.5, 0.5)                 # d = 2: all inside
    b3 = _brackets(betas, 0.5, 1.0)                 # d = 3: lower below, upper inside
    b3.loc[4, "upper"] = b3.loc[4, "n"]             # one capped row at eps = 0.1 (4 left)
    sections = [(2, b2, lr.law_slopes(b2, 2)), (3, b3, lr.law_slopes(b3, 3)), (5, None, None)]
    slopes, nums = lr.law_numbers(sections, b3)
    assert len(slopes) == 8
    assert nums["ch02_verdicts"] == ("inside for 6, above for 0, below for 2 and "
                                     "inconclusive for 0 of 8")
    assert nums["ch02_left_out"] == "2"             # both ends of the eps = 0.1, d = 3 fit
    assert nums["ch02_widest"] == "3"
    assert nums["ch02_width_trend"].startswith("d = 2, ε = 0.1: 3 → 3 (β = 16 → 256)")
    assert nums["ch02_width_sentence"] == WIDTH_SENTENCE
    assert nums["ch02_d4_lower"] == "inverse-norm" and nums["ch02_d4_upper"] == "harmonic"


def test_n_sweep_saturates_at_n_for_far_apart_points():
    # 4 points on the circle at beta = 1024: A is the identity up to e^-1024, rank n
    table, fig = lr.n_sweep(1024.0, [4, 8], [0.25])
    assert (table["lower"] == table["n_points"]).all()
    assert (table["upper"] == table["n_points"]).all()


def test_upper_and_lower_checks_hold_on_a_small_sphere():
    from attnrank_lite.laws.geometry import well_spread_sphere
    from attnrank_lite.laws.sweeps import bracket_sweep, spherical_instance
    X = well_spread_sphere(400, 3)
    sphere = bracket_sweep(lambda b: spherical_instance(X, b), [16.0], [0.25], l1_limit=0)
    up, unums = lr.upper_check(X, [16.0], [0.25], sphere)
    assert unums["ch02_up_ok"] == "holds"
    assert (up.L_construction <= up.L_closed).all() and "upper" in up.columns
    lo, lnums = lr.lower_check(X, [16.0], [0.25], sphere)
    assert lnums["ch02_lo_ok"] == "holds" and lnums["ch02_lo_need"] == "0.625"
    assert float(lnums["ch02_lo_mass"]) > 0.625


def test_heuristic_counts_grow_with_beta_and_spectrum_check():
    table, fig = lr.heuristic_table(0.1, betas=[4.0, 64.0, 1024.0], dims=(2, 3))
    for _, g in table.groupby("d"):
        assert (np.diff(g["harmonic_count"].to_numpy()) > 0).all()
    spec, fig, dev = lr.spectrum_check(256, 8.0)
    assert spec["index"].iloc[0] == 1 and np.isfinite(dev)
    # the largest singular value of a row-stochastic A with near-constant row sums is about 1
    assert spec["empirical"].iloc[0] == pytest.approx(1.0, abs=0.05)


def _configs():
    return pd.DataFrame({
        "configuration": ["well-spread"] * 2 + ["random"] * 2 + ["clustered"] * 2,
        "beta": [8.0, 16.0] * 3, "eps": [0.25] * 6, "n": [100] * 6,
        "lower": [10, 20, 25, 12, 2, 3], "upper": [15, 30, 40, 35, 9, 30]})


def test_comparison_outcomes_by_hand():
    cmp = lr.compare_configurations(_configs())
    got = dict(zip(zip(cmp.configuration, cmp.beta), cmp.outcome))
    # random beta=8: lower 25 > well-spread upper 15 -> certified above
    assert got[("random", 8.0)] == "certified above"
    # random beta=16: [12, 35] vs [20, 30] overlap
    assert got[("random", 16.0)] == "overlapping"
    # clustered beta=8: upper 9 <= well-spread lower 10
    assert got[("clustered", 8.0)] == "certified below"
    assert got[("clustered", 16.0)] == "overlapping"
    assert cmp.upper_above_ref_upper.tolist() == [True, True, False, False]
    text = lr.comparison_sentence(cmp)
    assert "eps): 4;" in text and "certified above it: 1;" in text
    assert "not to be the worst case" in text
    s = lr.comparison_summary(cmp).set_index("configuration")
    assert s.loc["random"].tolist() == [0, 1, 1]
    assert s.loc["clustered"].tolist() == [1, 1, 0]


def test_comparison_needs_reference():
    df = _configs()
    with pytest.raises(ValueError, match="reference"):
        lr.compare_configurations(df[df.configuration != "well-spread"])
    with pytest.raises(ValueError, match="every"):
        lr.compare_configurations(df[~((df.configuration == "well-spread")
                                    & (df.beta == 8.0))])


def test_constant_brackets_scale():
    df = _configs()[:2]
    c = lr.constant_brackets(df, 3)
    assert np.allclose(c.c_lower, [10 / 9, 20 / 17])
    assert np.allclose(c.c_upper, [15 / 9, 30 / 17])
    c2 = lr.constant_brackets(df, 2)
    assert np.allclose(c2.c_upper, [15 / 3, 30 / np.sqrt(17)])
    s = lr.constants_summary([c, c2]).set_index("d")
    assert np.isclose(s.loc[3, "c1_low"], 10 / 9)
    assert np.isclose(s.loc[3, "c1_high"], 15 / 9)
    assert np.isclose(s.loc[3, "c2_low"], 20 / 17)
    assert np.isclose(s.loc[3, "c2_high"], 30 / 17)
    with pytest.raises(ValueError, match="lacks"):
        lr.constant_brackets(df.drop(columns="n"), 3)


def test_configuration_sweep_and_comparison_end_to_end():
    from attnrank_lite.laws.sweeps import configuration_sweep
    df = configuration_sweep(150, 3, [4.0, 8.0], [0.25],
                             kinds=("well-spread", "clustered"))
    assert df.verified.all()
    assert df.configuration.tolist() == ["well-spread"] * 2 + ["clustered"] * 2
    cmp = lr.compare_configurations(df)
    assert len(cmp) == 2 and set(cmp.outcome) <= {"certified below", "overlapping",
                                                   "certified above"}


def test_interval_text_adds_digits_only_when_needed():
    from attnrank_lite.laws.fitting import interval_text
    assert interval_text(0.9, 0.8, 1.05) == "0.90 [0.80, 1.05]"
    # a narrow interval that two decimals would print as [0.52, 0.52]
    assert interval_text(0.5203, 0.5198, 0.5209) == "0.5203 [0.5198, 0.5209]"
    # an exact power law: all three equal, no extra digits
    assert interval_text(0.5, 0.5, 0.5) == "0.50 [0.50, 0.50]"


def test_regularity_drift():
    lo = pd.DataFrame({"beta": [16.0, 16.0, 32.0], "kappa": [0.5, 0.5, 0.4],
                       "K": [0.58, 0.58, 0.6]})
    assert lr.regularity_drift(lo) == ("1.16 → 1.5 (β = 16, 32): it grows at every step as "
                                    "the smallest scale shrinks")
    assert lr.regularity_drift(lo.assign(K=[0.58, 0.58, 0.4])).endswith(
        "does not grow at every step")


def test_key_numbers_survive_a_dimension_without_token_rows():
    tokens = bl.token_count_table([1], [8.0, 64.0], 1.0)  # no d = 2 rows
    rounding = bl.rounding_table(2, [64.0, 128.0], 1.0, 3)
    slopes = pd.DataFrame([{"weights": w, "eps": 0.25, "end": e, "slope": 1.0, "ci_low": 0.5,
                            "ci_high": 1.5, "verdict": f"v-{w}-{e}"}
                           for w in ("gaussian", "uniform") for e in ("lower", "upper")])
    order = pd.DataFrame({"beta": [64.0, 128.0], "order": ["circle above", "overlap"]})
    nums = lr.key_numbers(2, 0.25, tokens, rounding, slopes, order, float("nan"), 1e-3)
    assert nums["c3_tokens_grid"] == "n/a" and nums["c3_log_f_last"] == "n/a"
    assert nums["c3_tokens_beta"] == "n/a"
    assert nums["c3_circle_above"] == "β = 64" and nums["c3_ball_above"] == "no β of this run"
    # the verdicts are read from the table's verdict column (Gaussian weights, eps0)
    assert nums["c3_lo_verdict"] == "v-gaussian-lower" and nums["c3_K"] == "3"
    assert nums["c3_up_verdict"] == "v-gaussian-upper"


def test_fixed_n_numbers_read_the_tables():
    betas = [64.0, 128.0, 256.0, 512.0]
    ball = pd.DataFrame({"beta": betas, "eps": 0.25, "n": [50, 100, 200, 400],
                         "lower": 1, "upper": [20, 40, 90, 180]})
    fixed = pd.DataFrame({"beta": betas, "eps": 0.25, "n": 400, "lower": 1,
                          "upper": [40, 60, 90, 135]})
    slopes = pd.DataFrame({"eps": [0.25], "end": ["upper"], "slope": [0.585],
                           "ci_low": [0.58], "ci_high": [0.59], "points": [4]})
    nums = lr.fixed_n_numbers(2, 0.25, ball, fixed, slopes)
    assert nums["c3_upper_n"] == "0.40 to 0.45"
    assert nums["c3_fixed_n"] == "400"
    assert nums["c3_fixed_upper_n"] == "0.10 at β = 64 to 0.34 at β = 512"
    assert nums["c3_fixed_up"] == "0.585 [0.580, 0.590]"
    assert nums["c3_fixed_verdict"] == "below"  # 0.59 < d/2 = 1


def _sweep(betas, slope, n, scale):
    b = np.asarray(betas, dtype=float)
    return pd.DataFrame({"beta": b, "eps": 0.25, "n": n, "lower": scale * b ** slope,
                         "upper": 2 * scale * b ** slope})


def test_ball_slopes_follow_the_rule():
    betas = [64.0, 128.0, 256.0, 512.0, 1024.0]
    ball = _sweep(betas, 1.0, 10**6, 0.5)           # exactly d/2 = 1 for d = 2
    uniform = _sweep(betas, 0.5, 10**6, 3.0)        # exactly (d-1)/2
    uniform.loc[4, "upper"] = uniform.loc[4, "n"]   # a capped row: left out of both ends
    t = lr.ball_slopes(ball, uniform, 2)
    assert tuple(t.columns[:7]) == SLOPE_COLUMNS
    g, u = t[t.weights == "gaussian"], t[t.weights == "uniform"]
    assert (g.verdict == "inside").all() and (g.left_out == 0).all()
    assert list(g.reference) == [1.0, 1.0] and list(u.reference) == [0.5, 0.5]
    assert (u.left_out == 1).all() and (u.points == 4).all()
    assert np.allclose(u.slope, 0.5)                 # the capped row is not in the fit
    assert list(t["can fail"]) == [True, False, True, False]
    fx = lr.fixed_slopes(_sweep(betas[:3], 1.0, 10**6, 1.0), 2)
    assert (fx.verdict == "inconclusive").all()      # 3 points
    nums = lr.verdict_numbers(t, fx)
    assert nums["c3_verdicts"] == "inside for 4, above for 0, below for 0 and inconclusive for 0 of 4"
    assert nums["c3_left_out"] == "2"
    assert nums["c3_fixed_verdicts"].endswith("inconclusive for 2 of 2")


def test_width_report_per_weights():
    ball = pd.DataFrame({"beta": [1.0, 2.0], "eps": 0.25, "n": 9, "lower": [1.0, 2.0],
                         "upper": [2.0, 8.0]})
    table, text = lr.width_report(ball, ball.assign(upper=[3.0, 3.0]))
    assert list(table["gaussian, eps = 0.25"]) == [2.0, 4.0]
    assert list(table["uniform, eps = 0.25"]) == [3.0, 1.5]
    assert text.startswith("weights = gaussian, eps = 0.25: 2 (β = 1) → 4 (β = 2)")


def test_fixed_grid_keeps_the_matrix_size_and_moves_the_token_count():
    fixed = lr.fixed_grid_sweep(2, 2.0, [16.0, 32.0], 0.25)
    assert fixed["n"].nunique() == 1 and (fixed["weights"] == "gaussian, fixed grid").all()
    # log n_eff = beta/8 + log sum_j exp(-beta |x_j|^2 / 2) moves with beta on the same grid
    assert fixed["log_n_eff"].iloc[1] > fixed["log_n_eff"].iloc[0] + 16.0 / 8 - 1
    table, phrase = lr.fixed_widths(fixed)
    assert np.allclose(table.iloc[:, 0], (fixed["upper"] / fixed["lower"]).to_numpy())
    assert phrase.startswith("eps = 0.25:")
    slopes = pd.DataFrame({"eps": [0.25], "end": ["upper"], "slope": [1.0], "ci_low": [0.9],
                           "ci_high": [1.1], "points": [2], "verdict": ["inconclusive"]})
    nums = lr.fixed_n_numbers(2, 0.25, fixed, fixed, slopes)
    first, last = fixed["log_n_eff"].iloc[0], fixed["log_n_eff"].iloc[-1]
    assert nums["c3_fixed_neff"] == f"{first:.1f} at β = 16 to {last:.1f} at β = 32"


def test_ball_sweeps_and_d3_sweep_are_verified_and_judged():
    ball, uniform = lr.ball_sweeps(1, 2.0, [16.0, 64.0], [0.25])
    assert ball["verified"].all() and uniform["verified"].all()
    assert (ball["n"] == uniform["n"]).all()        # the same points, other weights
    assert lp.ball_figure(ball, uniform, 1, 2.0, 0.25).axes
    b3, s3, w3 = lr.d3_sweep([4.0], 2.0, [0.25])
    assert w3.iloc[0, 0] == pytest.approx(b3.upper.iloc[0] / b3.lower.iloc[0])
    assert tuple(s3.columns[:7]) == SLOPE_COLUMNS
    assert (s3.verdict == "inconclusive").all()     # one beta
    assert list(s3["can fail"]) == [True, False]


def test_format_values():
    assert lr.format_values([64.0, 128.0, 256.0]) == "64, 128 and 256"
    assert lr.format_values([]) == "none"
    assert lr.format_values([], "β") == "no β of this run"
    assert lr.format_values([64.0], "β") == "β = 64"
