"""The right-inverse certificate by alternating projections (``engine/right_inverse.py``:
``projected_right_inverse``, ``right_inverse_search``) and its bracket family (``_right_inverse``
in ``engine/assemble.py``): held-back values of issue 23's HiGHS prototype, an exact oracle for the
l1-ball projection, the independent checker on a saved file, and the family off by default."""
from __future__ import annotations

import numpy as np
import pytest

from attnrank_lite import rank_bracket, softmax_attention
from attnrank_lite.engine import right_inverse as ri
from attnrank_lite.engine.assemble import CostLimits
from attnrank_lite.engine.neumann import neumann_lower_bound
from attnrank_lite.engine.streaming import point_brackets
from attnrank_lite.laws.geometry import fibonacci_sphere, well_spread_sphere


def _theta_by_bisection(v, radius):
    """The threshold of the l1-ball projection from its definition: sum(max(|v| - t, 0)) = radius."""
    lo, hi = 0.0, float(np.abs(v).max())
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.maximum(np.abs(v) - mid, 0).sum() > radius else (lo, mid)
    return hi


def test_l1_ball_projection_matches_its_definition():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 9)) * rng.uniform(0.1, 3, (40, 1))
    Y = ri._l1_ball_rows(X, 2.0)
    for x, y in zip(X, Y):
        if np.abs(x).sum() <= 2.0:
            assert np.array_equal(x, y)
        else:
            t = _theta_by_bisection(x, 2.0)
            assert np.allclose(y, np.sign(x) * np.maximum(np.abs(x) - t, 0), atol=1e-12)
            assert abs(np.abs(y).sum() - 2.0) < 1e-9


@pytest.mark.parametrize("make, beta, cells, neumann, least", [
    # issue 23's prototype: Neumann 21, LP 30 on 500 well-spread points of S^3 (beta 8, 13 cells)
    (lambda: well_spread_sphere(500, 4), 8.0, 13, 21, 30),
    # 512 Fibonacci points (beta 16): Neumann 28, LP 37 with 7 cells; the projections reach 35 there
    (lambda: fibonacci_sphere(512), 16.0, 7, 28, 34),
])
def test_projections_beat_neumann_towards_the_lp(make, beta, cells, neumann, least):
    P = make()
    A = softmax_attention(P, beta=beta)
    assert neumann_lower_bound(A, 0.25, points=P).rank == neumann
    cert = ri.right_inverse_lower(A, 0.25, points=P, cells=cells, method="projection")
    assert isinstance(cert, ri.RightInverseCertificate) and cert.rank >= least and cert.verify(A, 0.25)
    assert cert.rank <= rank_bracket(A, 0.25, points=P).upper  # an independent upper certificate


def test_a_failed_program_proves_nothing_and_stops_early(monkeypatch):
    P = fibonacci_sphere(300)
    A = softmax_attention(P, beta=16.0)
    order = ri.farthest_point_order(P, 300)
    S = order[:150]  # far above any certifiable p
    Pm, supports = ri.column_supports(lambda idx: A[idx], S, 300, 7)
    X, left = ri.projected_right_inverse(Pm, supports, 0.25, rounds=400)
    assert left > 1 and (X is None or ri.right_inverse_left(Pm, X, 0.25) >= 1)
    rounds = []
    monkeypatch.setattr(ri, "_l1_ball_rows", lambda X, r, f=ri._l1_ball_rows: rounds.append(1) or f(X, r))
    ri.projected_right_inverse(Pm, supports, 0.25, rounds=400)
    assert len(rounds) < 400  # stalled progress ends the rounds


def test_the_family_is_off_by_default_and_on_within_its_limit():
    X = well_spread_sphere(500, 4)
    A = softmax_attention(X, beta=8.0)
    off = point_brackets(X, 8.0, [0.25], effort="max")[0]
    on = point_brackets(X, 8.0, [0.25], effort="max", limits=CostLimits(right_inverse=10**7))[0]
    assert off.lower_kind != "right-inverse" and on.lower_kind == "right-inverse"
    assert on.lower >= 30 > off.lower and on.upper == off.upper
    assert on.verify(A, 0.25)


def test_the_independent_checker_agrees_on_a_saved_bracket(tmp_path):
    from attnrank_lite.checker import check_file
    from attnrank_lite.engine.certificate_file import verify_file

    X = fibonacci_sphere(200)
    b = point_brackets(X, 16.0, [0.25], effort="max", limits=CostLimits(right_inverse=10**6))[0]
    assert b.lower_kind == "right-inverse"
    path = b.save(tmp_path / "b.npz", Q=X, beta=16.0)
    v, c = verify_file(path), check_file(path)
    assert v.ok and c.ok, (v.line, c.line)


def test_rows_that_vanish_on_a_support_leave_its_equations(monkeypatch):
    # concentrated attention: row 1 is exactly zero on column 0's keys (and row 0 on column 1's);
    # keeping those equations makes P_b P_b^T singular, leaving them out solves A_S X = I exactly
    P = np.array([[0.6, 0.4, 0.0, 0.0], [0.0, 0.0, 0.3, 0.7]])
    supports = [np.array([0, 1]), np.array([2, 3])]
    X, left = ri.projected_right_inverse(P, supports, 0.25)
    assert X is not None and left < 1 and ri.right_inverse_left(P, X, 0.25) < 1
    assert np.allclose(P @ X, np.eye(2))
    monkeypatch.setattr(ri, "EQUATION_FLOOR", -1.0)  # keep every equation
    assert ri.projected_right_inverse(P, supports, 0.25) == (None, float("inf"))


def test_a_program_count_caps_the_search_whatever_the_clock(monkeypatch):
    X = fibonacci_sphere(512)
    A = softmax_attention(X, beta=16.0)
    order = ri.farthest_point_order(X, 512)
    tried = []
    monkeypatch.setattr(ri, "column_supports", lambda *a, f=ri.column_supports, **k: tried.append(a[1].size)
                        or f(*a, **k))
    one = ri.right_inverse_search(lambda idx: A[idx], 512, 0.25, order, lo=28, cells=7,
                                  max_seconds=float("inf"), max_programs=1)
    assert tried == [29] and one is not None and one.rank == 29 and one.verify(A, 0.25)
