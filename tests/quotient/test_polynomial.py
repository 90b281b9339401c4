"""Finite polynomial certificates: counts by brute force, explicit B of small cases, verify."""
from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from attnrank_lite import row_l1, softmax_attention
from attnrank_lite.quotient.interaction import visible_coordinates
from attnrank_lite.quotient.polynomial import (
    _least_passing,
    degree_table,
    harmonic_count,
    monomial_count,
    polynomial_certificate,
    polynomial_matrix,
    polynomial_sweep,
)


def _exponents(r, D):
    return [a for a in itertools.product(range(D + 1), repeat=r) if sum(a) <= D]


@pytest.mark.parametrize("r", [1, 2, 3, 4])
def test_monomial_count_brute_force(r):
    for D in range(6):
        assert monomial_count(r, D) == len(_exponents(r, D))


@pytest.mark.parametrize("d", [2, 3, 4])
def test_harmonic_count_is_dimension_of_polynomials_on_sphere(d):
    """Rank of the monomial evaluation matrix at many random points of S^{d-1}."""
    rng = np.random.default_rng(d)
    X = rng.standard_normal((400, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    for D in range(5):
        E = np.column_stack([np.prod(X ** np.array(a), axis=1) for a in _exponents(d, D)])
        assert np.linalg.matrix_rank(E, tol=1e-9 * np.linalg.norm(E, 2)) == harmonic_count(D, d)
    assert harmonic_count(7, 2) == 15 and harmonic_count(4, 3) == 25


def _instance(r, n=150, m=160, seed=0, nuisance=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, r))
    Y = rng.uniform(-1, 1, (n, r))
    K = np.hstack([X, np.full((m, nuisance), 0.5)])
    Q = np.hstack([Y, rng.standard_normal((n, nuisance))])
    return Q, K


@pytest.mark.parametrize("r,beta,eps", [(1, 8.0, 0.1), (2, 4.0, 0.1), (3, 2.0, 0.2), (2, 14.0, 0.25)])
def test_explicit_certificate_small_cases(r, beta, eps):
    Q, K = _instance(r, seed=r)
    A = softmax_attention(Q, K, beta)
    Qv, Kv, off = visible_coordinates(Q, K)
    assert Qv.shape[1] == r
    lw = beta * off  # the column-scalar logit term is a key log-weight
    cert = polynomial_certificate(Qv, Kv, beta, eps, log_weights=lw)
    assert cert is not None and cert.dim == r
    assert cert.count == monomial_count(r, cert.degree)
    B = cert.matrix()
    assert cert.count < min(B.shape)  # the rank claim is not trivial
    sig = np.linalg.svd(B, compute_uv=False)
    assert np.count_nonzero(sig > 1e-10 * sig[0]) <= cert.count
    err = row_l1(A - B)
    assert err <= eps and np.isclose(err, cert.error, rtol=1e-6, atol=1e-12)
    assert cert.verify(A, eps)
    # every row of B lies in span{(w_j k_j^alpha)_j : |alpha| <= D}
    E = np.column_stack([np.exp(lw) * np.prod(Kv ** np.array(a), axis=1)
                         for a in _exponents(r, cert.degree)])
    coef, *_ = np.linalg.lstsq(E, B.T, rcond=None)
    assert np.abs(E @ coef - B.T).max() < 1e-8 * np.abs(B).max()
    # the degree is the smallest that works: one less misses eps
    if cert.degree > 0:
        B1 = polynomial_matrix(Qv, Kv, beta, cert.degree - 1, log_weights=lw)
        assert row_l1(A - B1) > eps


def test_verify_rejects_tampered_certificates():
    Q, K = _instance(2, seed=5)
    beta, eps = 6.0, 0.1
    A = softmax_attention(Q, K, beta)
    Qv, Kv, off = visible_coordinates(Q, K)
    cert = polynomial_certificate(Qv, Kv, beta, eps, log_weights=beta * off)
    assert cert.verify(A, eps)
    D = cert.degree
    assert not replace(cert, count=cert.count - 1).verify(A, eps)  # claims a smaller rank
    assert not replace(cert, degree=D - 1, count=monomial_count(2, D - 1)).verify(A, eps)  # too low a degree
    assert not replace(cert, Qv=cert.Qv * 1.3).verify(A, eps)  # data that do not produce A
    assert not replace(cert, beta=beta * 0.5).verify(A, eps)
    assert not cert.verify(A[:, :-1], eps)  # wrong shape
    assert not cert.verify(A, cert.error * 0.5)  # tighter eps than achieved
    A2 = A.copy()
    A2[0] = np.roll(A2[0], 1)
    assert not cert.verify(A2, eps)


def test_log_weights_and_multiplicity():
    """A key of weight w acts as w identical keys (`prop-multiplicity`): the certificate's B matches."""
    rng = np.random.default_rng(3)
    Qv = rng.uniform(-1, 1, (30, 2))
    Kv = rng.uniform(-1, 1, (12, 2))
    mult = rng.integers(1, 5, size=12)
    beta, eps = 5.0, 0.05
    cert = polynomial_certificate(Qv, Kv, beta, eps, log_weights=np.log(mult))
    A = softmax_attention(Qv, Kv, beta, log_weights=np.log(mult))
    assert cert.verify(A, eps)
    Krep = np.repeat(Kv, mult, axis=0)
    Brep = polynomial_matrix(Qv, Krep, beta, cert.degree)
    # the repeated-key B, with copies summed, is the weighted B
    summed = np.add.reduceat(Brep, np.concatenate([[0], np.cumsum(mult)[:-1]]), axis=1)
    assert np.allclose(summed, cert.matrix(), atol=1e-13)


def test_exact_cases():
    rng = np.random.default_rng(0)
    Qv = rng.standard_normal((8, 2))
    Kv = rng.standard_normal((9, 2))
    cert = polynomial_certificate(Qv, Kv, 0.0, 1e-12)  # beta = 0: uniform rows, a constant polynomial
    assert cert.degree == 0 and cert.count == 1 and cert.error < 1e-13
    assert cert.verify(np.full((8, 9), 1 / 9), 1e-12)
    # r = 0 (nothing visible): uniform attention, rank 1
    cert0 = polynomial_certificate(np.zeros((5, 0)), np.zeros((7, 0)), 3.0, 1e-12)
    assert cert0.count == 1 and cert0.verify(np.full((5, 7), 1 / 7), 1e-12)


def test_large_beta_is_finite_and_honest():
    rng = np.random.default_rng(1)
    Qv = rng.standard_normal((10, 1))
    Kv = rng.standard_normal((11, 1))
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        cert = polynomial_certificate(Qv, Kv, 1e6, 0.1, max_degree=16)
    assert cert is None  # a degree-16 polynomial cannot follow exp over a range of ~1e6
    with pytest.raises(ValueError):
        polynomial_certificate(Qv, Kv, -1.0, 0.1)
    with pytest.raises(ValueError):
        polynomial_certificate(Qv, Kv, 1.0, 0.1, log_weights=np.zeros(3))


def test_degree_grows_like_sqrt_beta_on_an_interval():
    """Chebyshev interpolation of exp on [-W, 0] needs degree ~ sqrt(W log(1/delta)) (Sachdeva–Vishnoi),
    not ~W: the degree at beta = 256 is far below linear growth from beta = 16."""
    x = np.linspace(-1, 1, 200)[:, None]
    d16 = polynomial_certificate(x, x, 16.0, 0.1).degree
    d256 = polynomial_certificate(x, x, 256.0, 0.1).degree
    assert d256 < 8 * d16  # linear growth would give 16x


def test_degree_needed_grows_with_the_number_of_keys():
    """One query q = 1, one key at x = 1 and m - 1 keys at x = -1: the row
    error of a degree-D certificate is (m - 1) |e^{-2 beta} - p(-2 beta)| / Z
    plus the error at the top key, so at fixed D it grows with m and the least
    degree meeting eps does too; the count at fixed D does not depend on m."""
    beta, eps = 8.0, 0.05
    degrees = []
    for m in (2, 100, 10_000):
        K = np.vstack([[1.0], -np.ones((m - 1, 1))])
        cert = polynomial_certificate(np.ones((1, 1)), K, beta, eps, max_degree=128)
        A = softmax_attention(np.ones((1, 1)), K, beta)
        assert cert.verify(A, eps) and cert.count == cert.degree + 1
        if cert.degree > 0:  # minimal: one less misses eps
            B = polynomial_matrix(np.ones((1, 1)), K, beta, cert.degree - 1)
            assert row_l1(A - B) > eps
        degrees.append(cert.degree)
    assert degrees[0] < degrees[1] < degrees[2]


def test_degree_table_rows():
    rows = degree_table(1, 16.0, 0.25, [10, 1000], n_queries=20)
    assert [r["m"] for r in rows] == [10, 1000]
    for r in rows:
        assert r["verified"] and r["count"] == monomial_count(1, r["degree"])
        assert np.isclose(r["sqrt(beta log(m/eps))"], np.sqrt(16.0 * np.log(r["m"] / 0.25)))
    assert rows[0]["degree"] <= rows[1]["degree"]
    with pytest.raises(ValueError, match="eps"):
        degree_table(1, 16.0, 0.0, [10])


def test_sweep_on_visible_coordinates_verifies_against_the_original_attention():
    """Visible coordinates plus their key offsets reproduce A for every beta,
    so the sweep's certificates verify against the original attention.
    Queries (y, 1) and keys (x, z): z_j is a genuine key log-weight."""
    rng = np.random.default_rng(4)
    Q = np.hstack([rng.uniform(-1, 1, (60, 1)), np.ones((60, 1))])
    K = np.hstack([rng.uniform(-1, 1, (70, 1)), rng.uniform(-0.5, 0.5, (70, 1))])
    Qv, Kv, off = visible_coordinates(Q, K)
    assert Qv.shape[1] == 1 and np.abs(off).max() > 0
    rows = polynomial_sweep(Qv, Kv, [1.0, 8.0], 0.2, key_offsets=off,
                            attention=lambda b: softmax_attention(Q, K, b))
    assert all(r["verified"] and r["dim"] == 1 for r in rows)
    # without the offsets the certificate describes another matrix
    bare = polynomial_sweep(Qv, Kv, [8.0], 1e-3, max_degree=64,
                            attention=lambda b: softmax_attention(Q, K, b))
    assert not bare[0]["verified"]


@pytest.mark.parametrize("threshold", [0, 1, 2, 3, 5, 8, 13, 20, 21, 22])
def test_least_passing_finds_the_threshold_from_any_start(threshold):
    # a monotone check passing from `threshold` on; 21 and 22 lie above high = 20
    low, high = 0, 20
    for start in [None, 0, 1, 4, 7, 12, 19, 20, 35]:
        checked = []

        def check(D):
            checked.append(D)
            return D >= threshold

        got = _least_passing(check, low, high, start)
        assert got == (threshold if threshold <= high else None), (start, got)
        assert len(checked) == len(set(checked)), "a degree was checked twice"
    # from a positive lower end (the certified stage starts above the screened degree)
    assert _least_passing(lambda D: D >= 9, 6, 20, None) == 9
    assert _least_passing(lambda D: True, 6, 20, None) == 6
    assert _least_passing(lambda D: True, 7, 6, None) is None


@pytest.mark.parametrize("beta", [0.5, 3.0, 12.0])
def test_degree_hint_changes_no_degree_and_the_degree_below_fails(beta):
    rng = np.random.default_rng(4)
    Q, K = rng.normal(size=(40, 3)), rng.normal(size=(50, 3))
    lw = 0.3 * rng.normal(size=50)
    eps = 0.05
    A = softmax_attention(Q, K, beta, log_weights=lw)
    base = polynomial_certificate(Q, K, beta, eps, log_weights=lw)
    assert base is not None and base.verify(A, eps)
    for start in [0, 1, base.degree - 1, base.degree, base.degree + 3, 64, 200]:
        cert = polynomial_certificate(Q, K, beta, eps, log_weights=lw, start=start)
        assert cert.degree == base.degree and cert.verify(A, eps)
    if base.degree > 0:  # the degree below misses eps on the computed error alone
        below = polynomial_matrix(Q, K, beta, base.degree - 1, log_weights=lw)
        assert row_l1(A - below) > eps
