"""Chapter 2's proofs of the spherical law: their constants against independent computations."""
import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev as C
from scipy import integrate
from scipy.special import ive

from attnrank_lite.engine.attention import softmax_attention
from attnrank_lite.laws import sphere_proofs as P
from attnrank_lite.laws.geometry import circle_points, fibonacci_sphere, random_sphere
from attnrank_lite.laws.spectra import harmonic_count


@pytest.mark.parametrize("beta", [0.5, 3.0, 16.0, 100.0, 2000.0])
def test_bessel_bound_against_scipy(beta):
    k = np.arange(1, 3000)
    v = ive(k, beta)
    ok = v > 0
    assert ok.sum() > 10
    assert (np.log(v[ok]) <= -P.bessel_bound_exponent(beta, k[ok]) + 1e-12).all()


@pytest.mark.parametrize("beta", [1.0, 8.0, 40.0])
def test_chebyshev_coefficients_match_interpolation(beta):
    # numpy's Chebyshev interpolant of the scaled exponential (independent quadrature)
    ref = C.chebinterpolate(lambda t: np.exp(beta * (t - 1)), 80)
    ours = P.chebyshev_exp_coefficients(beta, 40)
    assert np.allclose(ours, ref[:41], atol=1e-13, rtol=0)


@pytest.mark.parametrize("beta", [2.0, 16.0, 64.0])
def test_tail_bounds_sup_error_and_closed_form(beta):
    t = np.linspace(-1, 1, 20001)
    f = np.exp(beta * (t - 1))
    c = P.chebyshev_exp_coefficients(beta, 120)
    for L in (0, 3, 10, 25, 50):
        sup = np.abs(f - C.chebval(t, c[:L + 1])).max()
        tail = P.chebyshev_tail(beta, L)
        assert sup <= tail * (1 + 1e-9) + 1e-15
        assert tail <= P.chebyshev_tail_bound(beta, L)
    # the sup error is the tail up to grid resolution at t = 1 (all T_k(1) = 1)
    assert np.isclose(f[-1] - C.chebval(1.0, c[:6]), P.chebyshev_tail(beta, 5),
                      rtol=1e-8)


@pytest.mark.parametrize("beta,delta", [(1.0, 0.1), (16.0, 1e-3), (500.0, 1e-6)])
def test_proven_degree_is_least_and_obeys_closed_form(beta, delta):
    L = P.proven_degree(beta, delta)
    assert P.chebyshev_tail_bound(beta, L) <= delta
    if L > 0:
        assert P.chebyshev_tail_bound(beta, L - 1) > delta
    lam = math.log(4 * (1 + beta) / delta)
    assert L <= lam + math.sqrt(2 * beta * lam)


@pytest.mark.parametrize("beta", [1.0, 16.0, 128.0])
def test_bessel_sum_lies_between_exact_tail_and_closed_form(beta):
    for L in (0, 5, 20, 60):
        # the Bessel bound summed by a plain loop far past the terms that matter
        k = np.arange(L + 1, L + 1 + 20000, dtype=float)
        direct = 2 * math.fsum(np.exp(-k * k / (2 * beta + k)))
        assert np.isclose(P.bessel_bound_tail(beta, L), direct, rtol=1e-12)
        assert P.chebyshev_tail(beta, L) <= direct * (1 + 1e-12)
        assert direct <= P.chebyshev_tail_bound(beta, L)


@pytest.mark.parametrize("beta,delta", [(16.0, 1e-3), (128.0, 1e-4), (2.0, 0.5)])
def test_bessel_sum_degree_is_least_and_between(beta, delta):
    L = P.bessel_sum_degree(beta, delta)
    assert P.bessel_bound_tail(beta, L) <= delta
    if L > 0:
        assert P.bessel_bound_tail(beta, L - 1) > delta
    exact = next(j for j in range(10_000) if P.chebyshev_tail(beta, j) <= delta)
    assert exact <= L <= P.proven_degree(beta, delta)


def test_normaliser_shares_brute_force():
    X = random_sphere(300, 4, seed=3)
    beta = 7.0
    Z = np.exp(beta * X @ X.T).sum(axis=1)
    assert np.allclose(P.normaliser_shares(X, beta, block=64),
                       Z / (300 * math.exp(beta)), rtol=1e-12)


def test_construction_rank_and_error_bound():
    X = fibonacci_sphere(400)
    beta, L = 12.0, 6
    errs = P.chebyshev_construction_errors(X, beta, L, block=128)
    G = np.clip(X @ X.T, -1, 1)
    c = P.chebyshev_exp_coefficients(beta, L)
    Kmat = np.exp(beta * (G - 1))
    B = C.chebval(G, c) / Kmat.sum(axis=1, keepdims=True)
    A = softmax_attention(X, X, beta)
    assert math.isclose(errs[L], np.abs(A - B).sum(axis=1).max(), rel_tol=1e-9)
    s = np.linalg.svd(B, compute_uv=False)
    assert (s > 1e-10 * s[0]).sum() <= harmonic_count(L, 3)
    mu = P.normaliser_shares(X, beta)
    for k in range(L + 1):
        assert errs[k] <= P.chebyshev_tail(beta, k) / mu.min() * (1 + 1e-9)


def _regularity_grid(X, h, grid):
    n, d = X.shape
    D = np.sqrt(np.maximum(0, 2 - 2 * X @ X.T))
    vals = np.array([(D <= r).sum(axis=1) / (n * r ** (d - 1)) for r in grid])
    return vals.min(), vals.max()


@pytest.mark.parametrize("X", [circle_points(60), fibonacci_sphere(150),
                               random_sphere(120, 4, seed=1)])
def test_regularity_constants_brute_force(X):
    h = 0.3
    kappa, K = P.regularity_constants(X, h, block=37)
    lo, hi = _regularity_grid(X, h, np.linspace(h, 2, 4001))
    assert kappa <= lo + 1e-12 and K >= hi - 1e-12
    # exact: the extremes are approached within the grid resolution
    assert kappa >= lo - 0.05 * lo and K <= hi + 0.05 * hi


def test_gaussian_tail_moment_quadrature():
    for d in (2, 3, 4, 7):
        for s in (0.0, 1.0, 2.5, 6.0):
            ref = integrate.quad(lambda u, d=d: u ** d * np.exp(-u * u / 2), s, s + 40,
                                 epsabs=0, epsrel=1e-12, limit=200)[0]
            assert math.isclose(P.gaussian_tail_moment(s, d), ref, rel_tol=1e-8)


def test_cap_radius_factor_is_threshold():
    d, eps, ratio = 3, 0.25, 1.3
    s = P.cap_radius_factor(d, eps, ratio)
    tau = math.sqrt(2)
    def f(x):
        return ratio * math.exp(tau ** 2 / 2) * tau ** (1 - d) * P.gaussian_tail_moment(x, d)
    assert f(s) < (1 - eps) / (1 + eps) <= f(s - 1e-6)
    with pytest.raises(ValueError, match="ratio"):
        P.cap_radius_factor(d, eps, 0.5)
    with pytest.raises(ValueError, match="eps"):
        P.cap_radius_factor(d, float("nan"), 1.2)


@pytest.mark.parametrize("beta,eps", [(16.0, 0.25), (64.0, 0.1)])
def test_cap_packing_theorem_on_fibonacci(beta, eps):
    X = fibonacci_sphere(1500)
    d = 3
    h = math.sqrt(d - 1) / math.sqrt(beta)
    kappa, K = P.regularity_constants(X, h)
    sigma = P.cap_radius_factor(d, eps, K / kappa)
    cert = P.cap_packing_certificate(X, beta, sigma)
    A = softmax_attention(X, X, beta)
    assert cert.verify(A, eps)
    assert cert.rank >= P.proven_lower_count(beta, d, K, sigma)
    R = sigma / math.sqrt(beta)
    C_ = X[cert.rows]
    D = np.sqrt(np.maximum(0, 2 - 2 * C_ @ C_.T)) + 10 * np.eye(len(C_))
    assert D.min() >= 2 * R * (1 - 1e-9)
    # every diagonal mass exceeds (1 + eps)/2, as the proof shows
    M = cert.mass_matrix(A)
    assert np.diag(M).min() > (1 + eps) / 2


def test_bad_inputs():
    with pytest.raises(ValueError, match="beta"):
        P.chebyshev_tail(-1.0, 3)
    with pytest.raises(ValueError, match="L"):
        P.chebyshev_exp_coefficients(2.0, -1)
    with pytest.raises(ValueError, match="unit sphere"):
        P.normaliser_shares(2 * fibonacci_sphere(10), 1.0)
    with pytest.raises(ValueError, match="h"):
        P.regularity_constants(fibonacci_sphere(10), 0.0)


def test_proof_tables_small():
    X = fibonacci_sphere(500)
    up = P.upper_proof_table(X, [8.0, 24.0], [0.1, 0.3], harmonic=True)
    # the proof's degrees are sufficient, so never below what the construction needs
    assert (up.L_closed >= up.L_bessel).all()
    assert (up.L_bessel >= up.L_tail).all()
    assert (up.bound_closed == np.minimum(500, up.N_closed)).all()
    assert (up.L_tail >= up.L_construction).all()
    assert (up.L_construction >= 0).all()
    assert (up.L_harmonic >= 0).all()
    assert (up.N_harmonic == [harmonic_count(L, 3) for L in up.L_harmonic]).all()
    lo = P.lower_proof_table(X, [8.0, 24.0], [0.1, 0.3])
    assert lo.verified.all()
    assert (lo.construction >= lo.proven).all()
    assert (lo.min_diag_mass > (1 + lo.eps) / 2).all()


def test_price_of_proof_reads_the_table():
    import pandas as pd
    up = pd.DataFrame({"beta": [16.0, 128.0], "eps": [0.1, 0.1], "n": [100, 100],
                       "L_closed": [25, 70], "L_bessel": [19, 55], "L_tail": [12, 40],
                       "L_construction": [10, 33], "L_harmonic": [8, 30],
                       "N_harmonic": [81, 961], "bound_closed": [100, 100]})
    p = P.price_of_proof(up)
    assert p["closed_bessel"] == "6 to 15"
    assert p["bessel_tail"] == "7 to 15"
    assert p["tail_construction"] == "2 to 7"
    assert p["construction_harmonic"] == "2 to 3"
    assert p["ratio"] == f"{100 / 961:.2f} to {100 / 81:.2f}"
    assert p["at_n"].startswith("2 of 2 rows")
