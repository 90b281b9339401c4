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
