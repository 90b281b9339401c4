"""The Gaussian-ball construction in whole tokens (prop-gaussian-ball), against facts not
derived from the package: brute-force lattice sums, explicit token lists, closed forms."""
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from attnrank_lite import softmax_attention
from attnrank_lite.laws import ball_law as bl
from attnrank_lite.laws.ball_report import format_values
from attnrank_lite.laws.geometry import gaussian_ball


def _lattice_sum_1d(s, kmax=2000):
    k = np.arange(-kmax, kmax + 1, dtype=np.float64)
    return math.fsum(np.exp(-0.5 * s * s * k * k))


@pytest.mark.parametrize("s", [0.3, 1.0, 1.7, 2.0, 3.0, 5.0])
def test_theta_is_the_poisson_form_of_the_lattice_sum(s):
    # sum_k exp(-s^2 k^2 / 2) = sqrt(2 pi) / s * theta(s)
    assert bl.theta_factor(s) * math.sqrt(2 * math.pi) / s == pytest.approx(
        _lattice_sum_1d(s), rel=1e-13)
    assert bl.theta_direct(s) == pytest.approx(bl.theta_factor(s), rel=1e-13)


def test_theta_is_a_constant_not_one_plus_little_o():
    # at spacing 2 the Riemann sum exceeds the integral by 1.4% for every beta
    assert bl.theta_factor(2.0) - 1 == pytest.approx(2 * math.exp(-math.pi ** 2 / 2), rel=1e-6)
    assert bl.theta_factor(2.0) > 1.014
    t = bl.token_count_table([1], [256.0, 1024.0, 4096.0], spacing_factor=2.0)
    gaussian_only = 0.5 * math.log(2 * math.pi) - math.log(2.0)
    assert (t.log_ratio - gaussian_only > 0.014).all()


@pytest.mark.parametrize("d,s", [(1, 2.0), (2, 2.0), (2, 1.5), (3, 1.0)])
def test_token_count_against_a_brute_force_lattice_sum(d, s):
    beta = 1024.0 if d < 3 else 256.0
    t = bl.token_count_table([d], [beta], spacing_factor=s)
    # full lattice sum over Z^d, brute force in a box far beyond the Gaussian's width
    kmax = int(12 / s) + 2
    k = np.array(list(itertools.product(range(-kmax, kmax + 1), repeat=d)), dtype=np.float64)
    full = math.fsum(np.exp(-0.5 * s * s * (k ** 2).sum(axis=1)))
    inside = (k ** 2).sum(axis=1) * s * s / beta <= 0.25 * (1 + 1e-12)
    part = math.fsum(np.exp(-0.5 * s * s * (k[inside] ** 2).sum(axis=1)))
    row = t.iloc[0]
    assert row.log_ratio == pytest.approx(math.log(part), abs=1e-10)
    assert row.log_constant == pytest.approx(math.log(full), abs=1e-10)
    assert row.log_mass_fraction == pytest.approx(math.log(part / full), abs=1e-10)


def test_mass_fraction_below_one_and_tending_to_one():
    t = bl.token_count_table([2], [8.0, 32.0, 128.0, 512.0], spacing_factor=1.0)
    f = t.sort_values("beta").log_mass_fraction.to_numpy()
    assert f[0] < -0.1 and (f <= 1e-12).all()
    assert abs(f[-1]) < 1e-12


def test_rounding_bound_closed_form_and_scale():
    for K in (1, 2, 7, 501, 10 ** 6):
        r = (2 * K + 1) / (2 * K - 1)
        closed = 2 * (math.sqrt(r) - 1) / (math.sqrt(r) + 1)  # 2 tanh(log(r) / 4)
        assert bl.rounding_bound(K) == pytest.approx(closed, rel=1e-12)
    assert bl.rounding_bound(10 ** 6) * 10 ** 6 == pytest.approx(0.5, rel=1e-6)
    for tol in (0.3, 1e-2, 1e-3, 1e-6):
        K = bl.integer_scale(tol)
        assert bl.rounding_bound(K) <= tol < bl.rounding_bound(K - 1) if K > 1 else True
    assert bl.integer_scale(0.6) == 1


def test_whole_tokens_match_an_explicit_token_list():
    # d = 1, beta = 8: weights up to e; K = 3 gives small integer multiplicities
    beta, K = 8.0, 3
    X, lw = gaussian_ball(1, beta, spacing_factor=0.5)
    log_m = bl.integer_log_multiplicities(lw, K)
    m = np.exp(log_m)
    assert np.allclose(m, np.rint(m), atol=1e-9) and (m >= K).all()
    assert np.array_equal(np.rint(m), np.rint(K * np.exp(lw)))
    tokens = np.repeat(X, np.rint(m).astype(int), axis=0)
    owner = np.repeat(np.arange(X.shape[0]), np.rint(m).astype(int))
    A_tok = softmax_attention(X, tokens, beta)
    A_merged = np.zeros((X.shape[0], X.shape[0]))
    np.add.at(A_merged.T, owner, A_tok.T)
    A_K = softmax_attention(X, X, beta, log_m)
    assert np.abs(A_merged - A_K).max() < 1e-13
    # the exact Gaussian kernel, written out
    G = np.exp(-0.5 * beta * (X - X.T) ** 2)
    G /= G.sum(axis=1, keepdims=True)
    change = np.abs(A_K - G).sum(axis=1).max()
    assert change <= bl.rounding_bound(K)
    change_1 = np.abs(softmax_attention(X, X, beta, bl.integer_log_multiplicities(lw, 1))
                      - G).sum(axis=1).max()
    assert change_1 <= bl.rounding_bound(1)


def test_rounding_table_scaled_change_is_far_below_the_naive_one():
    K = bl.integer_scale(1e-3)
    t = bl.rounding_table(2, [64.0, 256.0], 1.0, K, block=37)
    assert (t.change_K <= t.bound_K).all() and (t.bound_K <= 1e-3).all()
    # rounding w_j itself moves some row by several percent
    assert (t.change_1 > 0.01).all()
    assert (t.log_tokens_K > math.log(K) + np.array([8.0, 32.0])).all()


def test_integer_multiplicities_reject_bad_weights():
    with pytest.raises(ValueError, match="log_weights"):
        bl.integer_log_multiplicities([0.0, -1.0], 3)
    with pytest.raises(ValueError, match="log_weights"):
        bl.integer_log_multiplicities([0.0, np.nan], 3)
    with pytest.raises(TypeError, match="K"):
        bl.integer_log_multiplicities([0.0], 2.5)
    with pytest.raises(ValueError, match="tol"):
        bl.integer_scale(0.0)
    with pytest.raises(ValueError, match="s"):
        bl.theta_factor(-1.0)
    big = bl.integer_log_multiplicities([200.0], 7)
    assert big[0] == pytest.approx(200.0 + math.log(7), rel=1e-15)


def test_certified_order_and_crossing():
    a = pd.DataFrame({"beta": [1.0, 2.0, 4.0], "lower": [1, 5, 20], "upper": [2, 6, 25]})
    b = pd.DataFrame({"beta": [1.0, 2.0, 4.0], "lower": [3, 4, 8], "upper": [4, 7, 10]})
    o = bl.certified_order(a, b, names=("ball", "circle"))
    assert list(o.order) == ["circle above", "overlap", "ball above"]
    x = np.array([1.0, 4.0, 16.0, 64.0])
    # 2 x = 8 sqrt(x) at x = 16
    assert bl.loglog_crossing(x, 2 * x, 8 * np.sqrt(x)) == pytest.approx(16.0, rel=1e-12)
    assert math.isnan(bl.loglog_crossing(x, 2 * x, 3 * x))
    assert format_values([64.0, 128.0, 256.0]) == "64, 128 and 256"
    assert format_values([]) == "none"
    assert format_values([], "β") == "no β of this run"
    assert format_values([64.0], "β") == "β = 64"


def test_key_numbers_survive_a_dimension_without_token_rows():
    from attnrank_lite.laws.ball_report import key_numbers
    tokens = bl.token_count_table([1], [8.0, 64.0], 1.0)  # no d = 2 rows
    rounding = bl.rounding_table(2, [64.0, 128.0], 1.0, 3)
    slopes = pd.DataFrame([{"weights": w, "eps": 0.25, "end": e, "slope": 1.0, "ci_low": 0.5,
                            "ci_high": 1.5, "verdict": f"v-{w}-{e}"}
                           for w in ("gaussian", "uniform") for e in ("lower", "upper")])
    order = pd.DataFrame({"beta": [64.0, 128.0], "order": ["circle above", "overlap"]})
    nums = key_numbers(2, 0.25, tokens, rounding, slopes, order, float("nan"), 1e-3)
    assert nums["c3_tokens_grid"] == "n/a" and nums["c3_log_f_last"] == "n/a"
    assert nums["c3_tokens_beta"] == "n/a"
    assert nums["c3_circle_above"] == "β = 64" and nums["c3_ball_above"] == "no β of this run"
    # the verdicts are read from the table's verdict column (Gaussian weights, eps0)
    assert nums["c3_lo_verdict"] == "v-gaussian-lower" and nums["c3_K"] == "3"
    assert nums["c3_up_verdict"] == "v-gaussian-upper"


def test_ball_maker_fixed_grid_is_the_gaussian_kernel_on_one_grid():
    from attnrank_lite.laws.ball_law import ball_maker
    from attnrank_lite.laws.geometry import gaussian_ball
    X = gaussian_ball(2, 256.0, spacing_factor=1.0)[0]
    make = ball_maker(2, 1.0, grid_beta=256.0)
    sizes = set()
    for beta in (32.0, 256.0):
        A, info = make(beta)
        sizes.add(A.shape[0])
        # the row-normalised Gaussian kernel, computed directly from the distances
        D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        G = np.exp(-beta * D2 / 2)
        assert np.allclose(A, G / G.sum(1, keepdims=True), atol=1e-12)
        assert np.isfinite(info["log_n_eff"])
    assert sizes == {X.shape[0]}
    # at its own beta the fixed grid is the sweep's grid
    assert np.allclose(make(256.0)[0], ball_maker(2, 1.0)(256.0)[0], atol=1e-14)
    # the default grid grows with beta
    assert ball_maker(2, 1.0)(64.0)[0].shape[0] < X.shape[0]


def test_fixed_n_numbers_read_the_tables():
    from attnrank_lite.laws.ball_report import fixed_n_numbers
    betas = [64.0, 128.0, 256.0, 512.0]
    ball = pd.DataFrame({"beta": betas, "eps": 0.25, "n": [50, 100, 200, 400],
                         "lower": 1, "upper": [20, 40, 90, 180]})
    fixed = pd.DataFrame({"beta": betas, "eps": 0.25, "n": 400, "lower": 1,
                          "upper": [40, 60, 90, 135]})
    slopes = pd.DataFrame({"eps": [0.25], "end": ["upper"], "slope": [0.585],
                           "ci_low": [0.58], "ci_high": [0.59], "points": [4]})
    nums = fixed_n_numbers(2, 0.25, ball, fixed, slopes)
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
    from attnrank_lite.laws.ball_report import ball_slopes, fixed_slopes, verdict_numbers
    from attnrank_lite.laws.verdicts import SLOPE_COLUMNS
    betas = [64.0, 128.0, 256.0, 512.0, 1024.0]
    ball = _sweep(betas, 1.0, 10**6, 0.5)           # exactly d/2 = 1 for d = 2
    uniform = _sweep(betas, 0.5, 10**6, 3.0)        # exactly (d-1)/2
    uniform.loc[4, "upper"] = uniform.loc[4, "n"]   # a capped row: left out of both ends
    t = ball_slopes(ball, uniform, 2)
    assert tuple(t.columns[:7]) == SLOPE_COLUMNS
    g, u = t[t.weights == "gaussian"], t[t.weights == "uniform"]
    assert (g.verdict == "inside").all() and (g.left_out == 0).all()
    assert list(g.reference) == [1.0, 1.0] and list(u.reference) == [0.5, 0.5]
    assert (u.left_out == 1).all() and (u.points == 4).all()
    assert np.allclose(u.slope, 0.5)                 # the capped row is not in the fit
    assert list(t["can fail"]) == [True, False, True, False]
    fx = fixed_slopes(_sweep(betas[:3], 1.0, 10**6, 1.0), 2)
    assert (fx.verdict == "inconclusive").all()      # 3 points
    nums = verdict_numbers(t, fx)
    assert nums["c3_verdicts"] == "inside for 4, above for 0, below for 0 and inconclusive for 0 of 4"
    assert nums["c3_left_out"] == "2"
    assert nums["c3_fixed_verdicts"].endswith("inconclusive for 2 of 2")


def test_width_report_per_weights():
    from attnrank_lite.laws.ball_report import width_report
    ball = pd.DataFrame({"beta": [1.0, 2.0], "eps": 0.25, "n": 9, "lower": [1.0, 2.0],
                         "upper": [2.0, 8.0]})
    table, text = width_report(ball, ball.assign(upper=[3.0, 3.0]))
    assert list(table["gaussian, eps = 0.25"]) == [2.0, 4.0]
    assert list(table["uniform, eps = 0.25"]) == [3.0, 1.5]
    assert text.startswith("weights = gaussian, eps = 0.25: 2 (β = 1) → 4 (β = 2)")


def test_fixed_grid_keeps_the_matrix_size_and_moves_the_token_count():
    import matplotlib
    matplotlib.use("Agg")
    from attnrank_lite.laws.ball_report import fixed_grid_sweep, fixed_n_numbers, fixed_widths
    fixed = fixed_grid_sweep(2, 2.0, [16.0, 32.0], 0.25)
    assert fixed["n"].nunique() == 1 and (fixed["weights"] == "gaussian, fixed grid").all()
    # log n_eff = beta/8 + log sum_j exp(-beta |x_j|^2 / 2) moves with beta on the same grid
    assert fixed["log_n_eff"].iloc[1] > fixed["log_n_eff"].iloc[0] + 16.0 / 8 - 1
    table, phrase = fixed_widths(fixed)
    assert np.allclose(table.iloc[:, 0], (fixed["upper"] / fixed["lower"]).to_numpy())
    assert phrase.startswith("eps = 0.25:")
    slopes = pd.DataFrame({"eps": [0.25], "end": ["upper"], "slope": [1.0], "ci_low": [0.9],
                           "ci_high": [1.1], "points": [2], "verdict": ["inconclusive"]})
    nums = fixed_n_numbers(2, 0.25, fixed, fixed, slopes)
    first, last = fixed["log_n_eff"].iloc[0], fixed["log_n_eff"].iloc[-1]
    assert nums["c3_fixed_neff"] == f"{first:.1f} at β = 16 to {last:.1f} at β = 32"


def test_ball_sweeps_and_d3_sweep_are_verified_and_judged():
    import matplotlib
    matplotlib.use("Agg")
    from attnrank_lite.laws.ball_report import ball_figure, ball_sweeps, d3_sweep
    from attnrank_lite.laws.verdicts import SLOPE_COLUMNS
    ball, uniform = ball_sweeps(1, 2.0, [16.0, 64.0], [0.25])
    assert ball["verified"].all() and uniform["verified"].all()
    assert (ball["n"] == uniform["n"]).all()        # the same points, other weights
    assert ball_figure(ball, uniform, 1, 2.0, 0.25).axes
    b3, s3, w3 = d3_sweep([4.0], 2.0, [0.25])
    assert w3.iloc[0, 0] == pytest.approx(b3.upper.iloc[0] / b3.lower.iloc[0])
    assert tuple(s3.columns[:7]) == SLOPE_COLUMNS
    assert (s3.verdict == "inconclusive").all()     # one beta
    assert list(s3["can fail"]) == [True, False]
