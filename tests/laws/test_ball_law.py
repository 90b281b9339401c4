"""The Gaussian-ball construction in whole tokens (prop-gaussian-ball), against facts not
derived from the package: brute-force lattice sums, explicit token lists, closed forms."""
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from attnrank_lite import softmax_attention
from attnrank_lite.laws import ball_law as bl
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
