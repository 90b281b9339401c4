"""Geometry: point sets and the Gaussian-ball construction, checked against direct formulas."""
import numpy as np
import pytest

from attnrank_lite import softmax_attention
from attnrank_lite.laws.geometry import (
    circle_points,
    gaussian_ball,
    log_effective_token_count,
)


@pytest.mark.parametrize("d,beta,s", [(1, 50.0, 0.5), (2, 64.0, 0.5), (2, 200.0, 1.0), (3, 40.0, 0.7)])
def test_gaussian_ball_is_gaussian_kernel(d, beta, s):
    X, lw = gaussian_ball(d, beta, spacing_factor=s)
    A = softmax_attention(X, X, beta, lw)
    # direct formula, written independently: exp(-beta |x_i - x_j|^2 / 2), rows normalised
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    G = np.exp(-beta * D2 / 2)
    G /= G.sum(axis=1, keepdims=True)
    assert np.allclose(A, G, rtol=1e-10, atol=1e-15)


def test_gaussian_ball_grid_and_weights():
    beta, s = 100.0, 0.5
    X, lw = gaussian_ball(2, beta, spacing_factor=s)
    h = s / np.sqrt(beta)  # 0.05: the grid is {0.05 k : |k| <= 10}
    K = np.rint(X / h)
    assert np.allclose(X, K * h)
    assert (np.linalg.norm(X, axis=1) <= 0.5 + 1e-12).all()
    # brute-force count of lattice points with k1^2 + k2^2 <= 100
    count = sum(1 for a in range(-10, 11) for b in range(-10, 11) if a * a + b * b <= 100)
    assert X.shape[0] == count == 317
    # log-weight 0 on the boundary (points (±0.5, 0) lie on it), beta/8 at the centre
    assert lw.min() == pytest.approx(0.0, abs=1e-12)
    centre = np.argmin(np.linalg.norm(X, axis=1))
    assert lw[centre] == pytest.approx(beta / 8)
    assert np.allclose(lw, beta * (0.25 - (X ** 2).sum(1)) / 2)


def test_effective_token_count_matches_gaussian_integral():
    # n_eff = sum_j e^{beta(1/4 - |x_j|^2)/2} ~ e^{beta/8} (2 pi)^{d/2} / s^d (Riemann sum)
    for d, beta, s in [(1, 400.0, 0.5), (2, 400.0, 0.5), (3, 200.0, 0.5)]:
        _, lw = gaussian_ball(d, beta, spacing_factor=s)
        ratio = np.exp(log_effective_token_count(lw)) / (np.exp(beta / 8) * (2 * np.pi) ** (d / 2) / s ** d)
        assert ratio == pytest.approx(1.0, rel=1e-6)


def test_effective_token_count_basics_and_overflow():
    assert log_effective_token_count(np.zeros(7)) == pytest.approx(np.log(7.0))
    assert log_effective_token_count(np.log([1.0, 2.0, 3.5])) == pytest.approx(np.log(6.5))
    assert log_effective_token_count(np.full(3, 1000.0)) == pytest.approx(1000 + np.log(3))


def test_gaussian_ball_bad_input():
    for args in [(0, 10.0), (2, 0.0), (2, -1.0), (2, float("nan"))]:
        with pytest.raises(ValueError):
            gaussian_ball(*args)
    with pytest.raises(ValueError):
        gaussian_ball(2, 10.0, spacing_factor=0.0)


def test_circle_points_signature_unchanged():
    X = circle_points(4, offset=0.0)
    assert np.allclose(X, [[1, 0], [0, 1], [-1, 0], [0, -1]], atol=1e-15)


def test_sphere_area_closed_forms():
    from attnrank_lite.laws.geometry import sphere_area

    assert np.isclose(sphere_area(2), 2 * np.pi) and np.isclose(sphere_area(3), 4 * np.pi)
    assert np.isclose(sphere_area(4), 2 * np.pi ** 2) and np.isclose(sphere_area(5), 8 * np.pi ** 2 / 3)
    with pytest.raises(ValueError, match="d"):
        sphere_area(0)


@pytest.mark.parametrize("d", [4, 5])
def test_well_spread_sphere_is_deterministic_unit_and_spread(d):
    from attnrank_lite.laws.geometry import random_sphere, spread_report, well_spread_sphere

    X = well_spread_sphere(3000, d)
    assert X.shape == (3000, d) and np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.array_equal(X, well_spread_sphere(3000, d))  # same call, same code path
    r = spread_report(X, probes=20_000)
    # separated far better than random points of the same size, and a covering radius that is
    # a small multiple of the half separation
    rand = spread_report(random_sphere(3000, d, seed=0), probes=20_000)
    assert r["min_separation"] > 3 * rand["min_separation"]
    assert r["ratio"] < 4 and r["covering_radius"] < rand["covering_radius"]


def test_spread_report_on_the_circle():
    from attnrank_lite.laws.geometry import spread_report

    r = spread_report(circle_points(100), probes=5000)
    assert np.isclose(r["min_separation"], 2 * np.sin(np.pi / 100))  # chord of angle 2 pi / n
    assert r["covering_radius"] <= 2 * np.sin(np.pi / 200) + 1e-12  # half-angle chord


@pytest.mark.parametrize("d", [2, 3, 4])
def test_well_spread_names_one_point_set(d):
    """Issue 27: the configuration "well-spread" is the book's well-spread set (chapter 2's
    configuration sweep at d = 3 and chapter 3's circle: bit for bit the circle and the Fibonacci
    sphere they were), and a separated packing is only ever called "packing"."""
    from attnrank_lite.laws.geometry import well_spread_sphere
    from attnrank_lite.laws.sweeps import sphere_configuration

    X = sphere_configuration("well-spread", 300, d)
    assert np.array_equal(X, well_spread_sphere(300, d))
    if d == 2:
        theta = 2 * np.pi * np.arange(300) / 300
        assert np.array_equal(X, np.column_stack([np.cos(theta), np.sin(theta)]))
    if d == 4:
        P = sphere_configuration("packing", 300, d)
        assert P.shape[0] != 300 or not np.array_equal(P, X)
