"""Harmonic (sphere-polynomial) upper certificates: counts, basis, certificate, search."""
from itertools import combinations_with_replacement
from math import comb

import numpy as np
import pytest

from attnrank_lite import softmax_attention
from attnrank_lite.engine.harmonic import HarmonicBasis, harmonic_upper_bound
from attnrank_lite.engine.norms import row_l1
from attnrank_lite.laws.geometry import fibonacci_sphere, random_sphere
from attnrank_lite.laws.spectra import harmonic_count


def _monomial_matrix(X, L):
    """All monomials of degree <= L (brute force: every multiset of coordinates)."""
    cols = [np.ones(X.shape[0])]
    for deg in range(1, L + 1):
        for idx in combinations_with_replacement(range(X.shape[1]), deg):
            cols.append(np.prod(X[:, list(idx)], axis=1))
    return np.column_stack(cols)


@pytest.mark.parametrize("d,L", [(2, 5), (3, 4), (4, 3), (5, 2)])
def test_harmonic_count_is_rank_of_monomials_on_random_sphere_points(d, L):
    # brute force: the numerical rank of every monomial of degree <= L at random sphere points
    X = random_sphere(400, d, seed=d)
    E = _monomial_matrix(X, L)
    s = np.linalg.svd(E, compute_uv=False)
    brute = int(np.sum(s > 1e-9 * s[0]))
    assert brute == harmonic_count(L, d)
    # and the closed form matches the count of monomials with exponent of x_0 at most 1
    assert harmonic_count(L, d) == sum(comb(l + d - 2, d - 2) + (comb(l + d - 3, d - 2) if l else 0)
                                       for l in range(L + 1))
    # the Arnoldi basis has exactly that many columns, orthonormal, spanning the monomials
    b = HarmonicBasis(X)
    V = b.columns(L)
    assert V.shape[1] == harmonic_count(L, d) and not b.deficient
    assert np.abs(V.T @ V - np.eye(V.shape[1])).max() < 1e-10
    resid = E - V @ (V.T @ E)
    assert np.linalg.norm(resid) < 1e-8 * np.linalg.norm(E)


def test_basis_is_nested_and_saturates_at_m():
    X = random_sphere(30, 3, seed=1)
    b = HarmonicBasis(X)
    V3 = b.columns(3).copy()
    V8 = b.columns(8)
    assert np.array_equal(V8[:, : V3.shape[1]], V3)  # nested: a prefix, built once
    assert b.dimension(8) == 30  # harmonic_count(8, 3) = 81 > m = 30: the span is all of R^30
    assert np.abs(V8.T @ V8 - np.eye(30)).max() < 1e-9


def test_keys_must_lie_on_the_sphere():
    with pytest.raises(ValueError, match="unit sphere"):
        HarmonicBasis(2 * fibonacci_sphere(10))
    with pytest.raises(TypeError):
        HarmonicBasis(fibonacci_sphere(10).astype(complex))


@pytest.mark.parametrize("beta,eps", [(16.0, 0.25), (16.0, 0.1), (64.0, 0.25)])
def test_harmonic_certificate_on_fibonacci_sphere(beta, eps):
    X = fibonacci_sphere(1200)
    A = softmax_attention(X, beta=beta)
    cert = harmonic_upper_bound(A, X, eps)
    L = cert.degree
    assert cert.source == f"harmonic degree {L}"
    assert cert.rank == harmonic_count(L, 3) == (L + 1) ** 2
    assert cert.verify(A, eps)
    # the degree is the smallest of the family: the projection of degree L - 1 misses eps
    V = HarmonicBasis(X).columns(L - 1)
    assert row_l1(A - (A @ V) @ V.T) > eps


def test_reference_measurement_fibonacci_2048():
    # SPEC reference: Fibonacci sphere n = 2048, eps = 0.25, beta = 16 -> L = 8, k = 81
    X = fibonacci_sphere(2048)
    A = softmax_attention(X, beta=16.0)
    cert = harmonic_upper_bound(A, X, 0.25)
    assert (cert.degree, cert.rank) == (8, 81) and cert.verify(A, 0.25)


def test_forged_harmonic_factors_are_rejected():
    X = fibonacci_sphere(300)
    A = softmax_attention(X, beta=8.0)
    cert = harmonic_upper_bound(A, X, 0.25)
    assert cert.verify(A, 0.25)
    bad = type(cert)(cert.L.copy(), cert.R.copy())
    bad.L[0, 0] = np.nan
    assert not bad.verify(A, 0.25)
    assert not type(cert)(cert.L[:-1], cert.R).verify(A, 0.25)  # shape mismatch
    # a claim below the certified degree: the degree L - 1 factors miss eps, and verify says so
    k = harmonic_count(cert.degree - 1, 3)
    low = type(cert)(cert.L[:, :k], cert.R[:k])
    assert row_l1(A - low.L @ low.R) > 0.25 and not low.verify(A, 0.25)


def test_degenerate_keys_keep_only_independent_columns():
    # a great circle of S^2: polynomials of degree <= L restrict to trigonometric polynomials,
    # dimension 2L + 1 (not (L + 1)^2); the basis detects the dependent columns
    from attnrank_lite.laws.geometry import circle_points

    X = np.column_stack([circle_points(200), np.zeros(200)])
    b = HarmonicBasis(X)
    assert [b.dimension(L) for L in range(6)] == [2 * L + 1 for L in range(6)] and b.deficient
    V = b.columns(5)
    assert np.abs(V.T @ V - np.eye(11)).max() < 1e-9
    A = softmax_attention(X, beta=8.0)
    cert = harmonic_upper_bound(A, X, 0.25, basis=b)
    assert cert.verify(A, 0.25) and cert.rank == 2 * cert.degree + 1


def test_a_degree_that_adds_no_direction_ends_the_growth():
    # two distinct keys, repeated: every polynomial restricts to a function on two points
    # (dimension 2); once a degree adds no direction the later degrees have nothing to multiply
    # (this raised on an empty block before)
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] * 5)
    b = HarmonicBasis(X)
    assert [b.dimension(L) for L in range(6)] == [1, 2, 2, 2, 2, 2]
    V = b.columns(5)
    assert np.linalg.matrix_rank(_monomial_matrix(X, 5)) == 2
    assert np.abs(V.T @ V - np.eye(2)).max() < 1e-12


def test_point_brackets_with_extreme_log_weights_at_huge_beta():
    # SPEC section 7: beta up to 1e6 with log-weights down to -1e4 (raised in the harmonic basis)
    from attnrank_lite import point_brackets

    X = fibonacci_sphere(100)
    lw = np.linspace(-1e4, 0.0, 100)
    A = softmax_attention(X, X, 1e4, log_weights=lw)
    for b in point_brackets(X, 1e4, [0.1, 0.25], log_weights=lw):
        assert b.verify(A, b.eps) and b.lower <= b.upper


def test_short_recurrence_basis_is_orthonormal_and_spans_the_weighted_monomials():
    # the first Gram-Schmidt pass runs against the last two degrees only (the discrete
    # three-term argument); the basis must still be orthonormal and span w * monomials
    X = random_sphere(500, 4, seed=3)
    lw = np.random.default_rng(3).normal(scale=2.0, size=500)
    b = HarmonicBasis(X, log_weights=lw)
    V = b.columns(5)
    assert V.shape[1] == harmonic_count(5, 4) and not b.deficient
    assert np.abs(V.T @ V - np.eye(V.shape[1])).max() < 1e-10
    E = np.exp(lw - lw.max())[:, None] * _monomial_matrix(X, 5)
    assert np.linalg.norm(E - V @ (V.T @ E)) < 1e-8 * np.linalg.norm(E)


def test_probe_keeps_the_basis_orthonormal_at_high_degree():
    # the pass against every earlier column runs only when a probe finds rounding built up
    # (PROBE_TOL); without it the short recurrence loses orthogonality about 2x per degree
    # (about 5e-4 here at degree 36); with it the loss stays near PROBE_TOL
    X = fibonacci_sphere(1500)
    V = HarmonicBasis(X).columns(36)
    assert V.shape[1] == 37 ** 2
    assert np.abs(V.T @ V - np.eye(V.shape[1])).max() < 1e-8


def test_search_builds_no_degree_beyond_the_certificate():
    # the headroom degree is built only after a failed full check
    X = fibonacci_sphere(1200)
    A = softmax_attention(X, beta=16.0)
    b = HarmonicBasis(X)
    cert = harmonic_upper_bound(A, X, 0.25, basis=b)
    assert cert.verify(A, 0.25) and b.degree == cert.degree
