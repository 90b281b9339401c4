"""Chapter 2's report functions (laws/sphere_report.py): the book's one verdict rule on every
slope table, the width trend next to it, and the glued numbers, against facts set by hand."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from attnrank_lite.laws import sphere_report as sr  # noqa: E402
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
    t = sr.law_slopes(_brackets(betas, 0.5, 1.0), 3)
    assert tuple(t.columns[:7]) == SLOPE_COLUMNS and (t["d"] == 3).all()
    lo, up = t[t.end == "lower"], t[t.end == "upper"]
    assert (lo.verdict == "below").all() and (up.verdict == "inside").all()
    assert np.allclose(lo.slope, 0.5, atol=0.02) and np.allclose(up.slope, 1.0, atol=0.02)
    # the last row's upper end reaches n: left out of both ends' fits, counted
    capped = _brackets(betas, 0.5, 1.0, eps=(0.25,))
    capped.loc[4, "upper"] = capped.loc[4, "n"]
    c = sr.law_slopes(capped, 3)
    assert (c.left_out == 1).all() and (c.points == 4).all()
    assert np.allclose(c.slope, [0.5, 1.0], atol=0.02)
    # three points left: inconclusive whatever the interval
    few = sr.law_slopes(_brackets(betas[:3], 1.0, 1.0, eps=(0.25,)), 3)
    assert (few.verdict == "inconclusive").all()


def test_law_section_widths_are_upper_over_lower_per_beta():
    betas = [16.0, 64.0, 256.0, 1024.0]
    slopes, widths, fig = sr.law_section(_brackets(betas, 0.5, 1.0), 3, "t")
    assert list(widths.columns) == ["eps = 0.1", "eps = 0.25"]
    # 6 beta / (2 beta^0.5) = 3 sqrt(beta) (the wiggle cancels in the ratio)
    assert np.allclose(widths["eps = 0.25"], 3 * np.sqrt(betas))
    assert fig.axes and len(slopes) == 4
    text = sr.slopes_text(slopes)
    assert text.startswith("ε = 0.1: lower 0.49 [") and "(below)" in text and "(inside)" in text


def test_law_numbers_count_the_verdict_column():
    betas = [16.0, 32.0, 64.0, 128.0, 256.0]
    b2 = _brackets(betas, 0.5, 0.5)                 # d = 2: all inside
    b3 = _brackets(betas, 0.5, 1.0)                 # d = 3: lower below, upper inside
    b3.loc[4, "upper"] = b3.loc[4, "n"]             # one capped row at eps = 0.1 (4 left)
    sections = [(2, b2, sr.law_slopes(b2, 2)), (3, b3, sr.law_slopes(b3, 3)), (5, None, None)]
    slopes, nums = sr.law_numbers(sections, b3)
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
    table, fig = sr.n_sweep(1024.0, [4, 8], [0.25])
    assert (table["lower"] == table["n_points"]).all()
    assert (table["upper"] == table["n_points"]).all()


def test_upper_and_lower_checks_hold_on_a_small_sphere():
    from attnrank_lite.laws.geometry import well_spread_sphere
    from attnrank_lite.laws.sweeps import bracket_sweep, spherical_instance
    X = well_spread_sphere(400, 3)
    sphere = bracket_sweep(lambda b: spherical_instance(X, b), [16.0], [0.25], l1_limit=0)
    up, unums = sr.upper_check(X, [16.0], [0.25], sphere)
    assert unums["ch02_up_ok"] == "holds"
    assert (up.L_construction <= up.L_closed).all() and "upper" in up.columns
    lo, lnums = sr.lower_check(X, [16.0], [0.25], sphere)
    assert lnums["ch02_lo_ok"] == "holds" and lnums["ch02_lo_need"] == "0.625"
    assert float(lnums["ch02_lo_mass"]) > 0.625


def test_heuristic_counts_grow_with_beta_and_spectrum_check():
    table, fig = sr.heuristic_table(0.1, betas=[4.0, 64.0, 1024.0], dims=(2, 3))
    for _, g in table.groupby("d"):
        assert (np.diff(g["harmonic_count"].to_numpy()) > 0).all()
    spec, fig, dev = sr.spectrum_check(256, 8.0)
    assert spec["index"].iloc[0] == 1 and np.isfinite(dev)
    # the largest singular value of a row-stochastic A with near-constant row sums is about 1
    assert spec["empirical"].iloc[0] == pytest.approx(1.0, abs=0.05)
