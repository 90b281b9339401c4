"""Spectra against independent facts: circulant DFT, quadrature of the Funk–Hecke integral,
closed forms of harmonic dimensions and brute-force counts of harmonic polynomials."""
import itertools

import numpy as np
import pytest
import sympy
from scipy import integrate
from scipy.special import eval_gegenbauer, eval_legendre

from attnrank_lite.laws.geometry import fibonacci_sphere, random_sphere
from attnrank_lite.laws.spectra import (
    circulant_kernel_spectrum,
    funk_hecke_eigenvalues,
    harmonic_count,
    harmonic_degree_for_tolerance,
    harmonic_dimension,
    predicted_attention_spectrum,
    spectral_rank_heuristic,
)


def empirical_kernel_spectrum(X, beta):
    """Eigenvalues of e^{-beta} K / n, K_ij = e^{beta <x_i, x_j>}, decreasing."""
    return np.linalg.eigvalsh(np.exp(beta * (X @ X.T - 1.0)) / X.shape[0])[::-1]


def _brute_harmonic_dimension(l, d):
    """Null space of the Laplacian on homogeneous degree-l polynomials in d variables (exact rank)."""
    monos = [m for m in itertools.product(range(l + 1), repeat=d) if sum(m) == l]
    lows = [m for m in itertools.product(range(max(l - 1, 1)), repeat=d) if sum(m) == l - 2]
    if not lows:
        return len(monos)
    index = {m: i for i, m in enumerate(lows)}
    M = sympy.zeros(len(lows), len(monos))
    for c, m in enumerate(monos):
        for v in range(d):
            if m[v] >= 2:
                t = list(m)
                t[v] -= 2
                M[index[tuple(t)], c] += m[v] * (m[v] - 1)
    return len(monos) - M.rank()


def test_harmonic_dimension_closed_forms():
    assert [harmonic_dimension(l, 2) for l in range(6)] == [1, 2, 2, 2, 2, 2]
    assert [harmonic_dimension(l, 3) for l in range(8)] == [2 * l + 1 for l in range(8)]
    # d = 4: (l + 1)^2
    assert [harmonic_dimension(l, 4) for l in range(8)] == [(l + 1) ** 2 for l in range(8)]
    assert [harmonic_count(L, 3) for L in range(8)] == [(L + 1) ** 2 for L in range(8)]
    for d in (2, 3, 4, 5, 7):
        for L in range(9):
            assert harmonic_count(L, d) == sum(harmonic_dimension(l, d) for l in range(L + 1))


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_harmonic_dimension_brute_force(d):
    for l in range(0, 6 if d <= 4 else 4):
        assert harmonic_dimension(l, d) == _brute_harmonic_dimension(l, d), (l, d)


@pytest.mark.parametrize("n,beta", [(16, 40.0), (32, 200.0), (12, 10.0), (24, 50.0), (64, 3.0)])
def test_funk_hecke_matches_circulant_spectrum_with_aliasing(n, beta):
    mu = circulant_kernel_spectrum(n, beta)  # exact DFT of the kernel's first row (scaled by e^-beta)
    lam = funk_hecke_eigenvalues(beta, 2, 80 * n)  # d = 2: I_l(beta) e^-beta
    pred = np.array([n * sum(lam[abs(k + p * n)] for p in range(-40, 41)) for k in range(n)])
    assert np.max(np.abs(mu - pred)) <= 1e-13 * mu.max()
    big = pred >= 1e-3 * pred.max()
    assert np.max(np.abs(mu[big] - pred[big]) / pred[big]) <= 1e-12
    if pred.min() >= 1e-3 * pred.max():
        assert np.max(np.abs(mu - pred) / pred) <= 1e-12
    # without the aliased terms the prediction is wrong at k = n/2 (I_{n/2} is counted twice)
    if n % 2 == 0 and pred[n // 2] > 1e-6 * pred.max():
        assert abs(n * lam[n // 2] - mu[n // 2]) > 0.4 * mu[n // 2]


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_funk_hecke_matches_quadrature(d):
    # lambda_l = c_d * int_{-1}^{1} e^{beta t} P_l(t) (1 - t^2)^{(d-3)/2} dt with P_l the Gegenbauer
    # polynomial normalised to P_l(1) = 1 (Chebyshev for d = 2, Legendre for d = 3)
    from math import gamma, pi

    beta = 7.5
    cd = gamma(d / 2) / (np.sqrt(pi) * gamma((d - 1) / 2))
    lam = funk_hecke_eigenvalues(beta, d, 6)
    for l in range(7):
        if d == 2:
            def f(th):
                return np.exp(beta * (np.cos(th) - 1)) * np.cos(l * th) / np.pi
            val = integrate.quad(f, 0, np.pi, epsabs=0, epsrel=1e-13)[0]
        else:
            if d == 3:
                def P(t):
                    return eval_legendre(l, t)
            else:
                a = d / 2 - 1
                def P(t):
                    return eval_gegenbauer(l, a, t) / eval_gegenbauer(l, a, 1.0)
            def f(t):
                return np.exp(beta * (t - 1)) * P(t) * (1 - t * t) ** ((d - 3) / 2)
            val = cd * integrate.quad(f, -1, 1, epsabs=0, epsrel=1e-13, limit=200)[0]
        assert lam[l] == pytest.approx(val, rel=1e-9, abs=1e-15), (d, l)


def test_funk_hecke_d3_closed_form_degree_zero():
    for beta in (0.1, 3.0, 50.0):
        # (1/2) int e^{beta t} dt = sinh(beta)/beta
        assert funk_hecke_eigenvalues(beta, 3, 0)[0] == pytest.approx(-np.expm1(-2 * beta) / (2 * beta), rel=1e-13)


@pytest.mark.parametrize("beta", [4.0, 16.0])
def test_funk_hecke_matches_d3_empirical_spectrum(beta):
    lam = funk_hecke_eigenvalues(beta, 3, 6)
    blocks = [(harmonic_count(l - 1, 3) if l else 0, harmonic_count(l, 3)) for l in range(7)]
    # Fibonacci points are an excellent quadrature: block means agree to 1e-3
    ev = empirical_kernel_spectrum(fibonacci_sphere(2000), beta)
    for l, (a, b) in enumerate(blocks):
        assert ev[a:b].mean() == pytest.approx(lam[l], rel=1e-3)
    # random points: Monte Carlo error, a few times 1/sqrt(n)
    n = 2000
    ev = empirical_kernel_spectrum(random_sphere(n, 3, seed=3), beta)
    for l, (a, b) in enumerate(blocks):
        assert abs(ev[a:b].mean() / lam[l] - 1) < 5 * np.sqrt(beta / n)


def test_predicted_attention_spectrum_matches_fibonacci_attention():
    from attnrank_lite import softmax_attention

    beta, L = 10.0, 5
    s = np.linalg.svd(softmax_attention(fibonacci_sphere(1500), beta=beta), compute_uv=False)
    p = predicted_attention_spectrum(beta, 3, L)
    assert p.size == 36 and p[0] == 1.0
    np.testing.assert_allclose(s[:36], p, rtol=5e-3)


def test_degree_for_tolerance_and_heuristic_growth():
    for beta in (16.0, 256.0, 4096.0):
        L = harmonic_degree_for_tolerance(beta, 3, 0.1)
        lam = funk_hecke_eigenvalues(beta, 3, L + 1)
        assert lam[L] / lam[0] >= 0.1 > lam[L + 1] / lam[0]
        # Gaussian asymptotics I_nu/I_nu0 ~ exp(-(nu^2 - nu0^2)/(2 beta)): L ~ sqrt(2 beta log 10)
        assert L == pytest.approx(np.sqrt(2 * beta * np.log(10)), rel=0.25)
    h = [spectral_rank_heuristic(b, 3, 0.1) for b in (256.0, 4096.0)]
    assert h[1] / h[0] == pytest.approx(16.0, rel=0.15)  # beta^{(d-1)/2} with d = 3


def test_bad_input():
    with pytest.raises(ValueError):
        harmonic_dimension(2, 1)
    with pytest.raises(ValueError):
        funk_hecke_eigenvalues(0.0, 3, 4)
    with pytest.raises(ValueError):
        harmonic_count(-1, 3)
