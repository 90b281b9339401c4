"""Finite polynomial certificates: counts by brute force, explicit B of small cases, verify."""
from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from attnrank_lite import row_l1, softmax_attention
from attnrank_lite.interaction import visible_coordinates
from attnrank_lite.polynomial import (
    harmonic_count,
    monomial_count,
    polynomial_certificate,
    polynomial_matrix,
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
        assert np.linalg.matrix_rank(E, tol=1e-9 * np.linalg.norm(E, 2)) == harmonic_count(d, D)
    assert harmonic_count(2, 7) == 15 and harmonic_count(3, 4) == 25


def _instance(r, n=150, m=160, seed=0, nuisance=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, r))
    Y = rng.uniform(-1, 1, (n, r))
    K = np.hstack([X, np.full((m, nuisance), 0.5)])
    Q = np.hstack([Y, rng.standard_normal((n, nuisance))])
    return Q, K


@pytest.mark.parametrize("r,beta,eps", [(1, 8.0, 0.1), (2, 4.0, 0.1), (3, 2.0, 0.2), (2, 20.0, 0.25)])
def test_explicit_certificate_small_cases(r, beta, eps):
    Q, K = _instance(r, seed=r)
    A = softmax_attention(Q, K, beta)
    Qv, Kv = visible_coordinates(Q, K)
    assert Qv.shape[1] == r
    cert = polynomial_certificate(Qv, Kv, beta, eps)
    assert cert is not None and cert.dim == r
    assert cert.count == monomial_count(r, cert.degree)
    B = cert.matrix()
    assert cert.count < min(B.shape)  # the rank claim is not trivial
    sig = np.linalg.svd(B, compute_uv=False)
    assert np.count_nonzero(sig > 1e-10 * sig[0]) <= cert.count
    err = row_l1(A - B)
    assert err <= eps and np.isclose(err, cert.error, rtol=1e-6, atol=1e-12)
    assert cert.verify(A, eps)
    # every row of B lies in span{(k_j^alpha)_j : |alpha| <= D} (uniform weights)
    E = np.column_stack([np.prod(Kv ** np.array(a), axis=1) for a in _exponents(r, cert.degree)])
    coef, *_ = np.linalg.lstsq(E, B.T, rcond=None)
    assert np.abs(E @ coef - B.T).max() < 1e-8 * np.abs(B).max()
    # the degree is the smallest that works: one less misses eps
    if cert.degree > 0:
        assert row_l1(A - polynomial_matrix(Qv, Kv, beta, cert.degree - 1)) > eps


def test_verify_rejects_tampered_certificates():
    Q, K = _instance(2, seed=5)
    beta, eps = 6.0, 0.1
    A = softmax_attention(Q, K, beta)
    Qv, Kv = visible_coordinates(Q, K)
    cert = polynomial_certificate(Qv, Kv, beta, eps)
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
    """A key of weight w acts as w identical keys (Prop 1.4): the certificate's B matches."""
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
