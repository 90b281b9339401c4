"""Degenerate inputs at the public entry points give correct certified brackets, not raw errors
(issue 18: every eps >= 1 with points, duplicate keys at eps below the rounding floor, no queries).

Expected values come from the definition: for a row-stochastic ``A`` the matrix ``B = 0`` has
error ``max_i sum_j |A_ij| = 1``, so ``rank_eps(A) = 0`` for ``eps > 1``; two identical rows give a
rank-1 matrix, whose ``rank_0`` is 1; an empty matrix has rank 0.
"""
from __future__ import annotations

import numpy as np
import pytest

from attnrank_lite import rank_bracket, softmax_attention
from attnrank_lite.engine.bracket import rank_brackets
from attnrank_lite.engine.streaming import point_bracket, point_brackets
from attnrank_lite.laws.geometry import circle_points


@pytest.mark.parametrize("eps", [1.0, 1.5, 7.0])
def test_rank_bracket_with_points_when_every_eps_is_at_least_one(eps):
    P = np.eye(2)
    A = softmax_attention(P, beta=1.0)
    b = rank_bracket(A, eps, points=P)
    assert b.verify(A, eps) and b.lower == 0
    if eps > 1:
        assert b.upper == 0  # B = 0 has error exactly max row mass = 1 < eps


def test_rank_brackets_with_points_mixing_small_and_large_eps():
    P = circle_points(64)
    A = softmax_attention(P, beta=64.0)
    eps = [0.1, 1.0, 2.0]
    bs = rank_brackets(A, eps, points=P)
    assert all(b.verify(A, e) for b, e in zip(bs, eps))
    assert bs[0].lower >= 1 and bs[2].upper == 0


@pytest.mark.parametrize("eps", [0.0, 1e-15, 5e-15])
def test_point_bracket_duplicate_keys_below_the_rounding_floor(eps):
    Q = np.array([[1.0, 0.0], [1.0, 0.0]])
    b = point_bracket(Q, 1.0, eps)
    A = softmax_attention(Q, beta=1.0)  # [[.5, .5], [.5, .5]]: rank 1
    assert b.verify(A, eps)
    assert b.lower == 1 and 1 <= b.upper <= 2


def test_point_brackets_duplicate_points_keep_the_harmonic_family_for_ordinary_eps():
    P = circle_points(8)
    Q = np.vstack([P, P])
    A = softmax_attention(Q, beta=1.0)
    eps = [0.0, 0.1]
    bs = point_brackets(Q, 1.0, eps)
    assert all(b.verify(A, e) for b, e in zip(bs, eps))
    assert bs[0].lower >= 1 and bs[1].upper <= 8  # 8 distinct keys: rank A <= 8


def test_point_bracket_without_queries_is_the_empty_rank_zero_bracket():
    K = np.eye(2)
    b = point_bracket(np.zeros((0, 2)), 1.0, 0.1, K=K)
    assert b.lower == b.upper == 0
    assert b.verify(np.zeros((0, 2)), 0.1)


# --- issue 24 item 3: inputs whose conversion to float64 is not exact are refused -----------------
# Facts from the definition: rank_eps([[1/4]]) is 0 for eps >= 1/4 (B = 0 has error exactly 1/4)
# and 1 below; [[2^53+1, 2^53], [2^53, 2^53]] has determinant 2^53 != 0, so exact rank 2.

def test_inexact_fraction_eps_is_refused():
    from fractions import Fraction

    A = np.array([[0.25]])
    b = rank_bracket(A, 0.25)
    assert b.upper == 0
    with pytest.raises(ValueError, match="eps"):
        b.verify(A, Fraction(1, 4) - Fraction(1, 2**80))  # rank_eps = 1 there
    assert b.verify(A, Fraction(1, 4))  # exactly representable: accepted


def test_longdouble_eps_that_rounds_is_refused():
    A = np.array([[0.25]])
    b = rank_bracket(A, 0.25)
    eps = np.longdouble(0.25) - np.longdouble(2.0) ** -62
    if float(eps) != eps:  # platforms where longdouble is wider than float64
        with pytest.raises(ValueError, match="eps"):
            b.verify(A, eps)
    assert b.verify(A, np.longdouble(0.25))


def test_int64_matrix_beyond_two_to_the_53_is_refused():
    big = 2**53
    A = np.array([[big + 1, big], [big, big]], dtype=np.int64)
    assert round(float(np.linalg.det(A.astype(object).astype(float)))) == 0  # float64 loses it
    b = rank_bracket(np.array([[1.0, 1.0], [1.0, 1.0]]), 0.0)
    with pytest.raises(ValueError, match="A"):
        b.verify(A, 0.0)
    # exactly representable large integers are fine
    assert rank_bracket(np.array([[2**60, 0], [0, 2**60]], dtype=np.int64), 0.0).lower == 2


def test_longdouble_matrix_that_rounds_is_refused():
    A = np.eye(2, dtype=np.longdouble)
    A[0, 1] = np.longdouble(1.0) + np.longdouble(2.0) ** -60  # 1 in float64
    if float(A[0, 1]) != A[0, 1]:  # platforms where longdouble is wider than float64
        with pytest.raises(ValueError, match="A"):
            rank_bracket(A, 0.1)
    assert rank_bracket(np.eye(2, dtype=np.longdouble), 0.1).lower >= 1


@pytest.mark.parametrize("eps", [10**400, -(10**400)], ids=["1e400", "-1e400"])
def test_huge_integer_eps_is_the_documented_error(eps):
    A = np.array([[0.25]])
    b = rank_bracket(A, 0.25)
    with pytest.raises(ValueError, match="eps"):
        b.verify(A, eps)
    with pytest.raises(ValueError, match="eps"):
        rank_bracket(A, eps)
