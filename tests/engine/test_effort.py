"""The cost-aware default of the best-of rule (issue 23): ``effort="auto"`` against ``"max"``.

No timings here (``benchmarks/bench_default_cost.py`` measures the cost); these tests check
that the default is never wider than harmonic + Neumann, that ``effort="max"`` gives the
brackets of the everything-on rule, that every certificate verifies, and the argument check.
"""
from __future__ import annotations

import numpy as np
import pytest

from attnrank_lite import point_bracket, point_brackets, rank_bracket, softmax_attention
from attnrank_lite.engine import assemble
from attnrank_lite.engine.assemble import CostLimits, Estimate, assemble_brackets, check_effort
from attnrank_lite.engine.bracket import rank_brackets
from attnrank_lite.engine.row_source import RowSource
from attnrank_lite.laws.geometry import fibonacci_sphere, random_sphere, well_spread_sphere

EPS = [0.1, 0.25]


def _harmonic_neumann(X, beta, eps_values):
    """The reference: harmonic upper and Neumann lower (and the small-instance lower families),
    no SVD family, no l1 fit."""
    return point_brackets(X, beta, eps_values, svd=False, limits=CostLimits(l1=0), effort="max")


@pytest.mark.parametrize("name, X, beta", [
    ("fibonacci S^2", fibonacci_sphere(600), 16.0),
    ("random S^2", random_sphere(500, 3, seed=2), 16.0),
    ("well-spread S^3", well_spread_sphere(400, 4), 8.0),
    ("random S^3", random_sphere(400, 4, seed=5), 8.0),
])
def test_default_never_wider_than_harmonic_neumann(name, X, beta):
    auto = point_brackets(X, beta, EPS)
    ref = _harmonic_neumann(X, beta, EPS)
    A = softmax_attention(X, X, beta)
    for a, r, eps in zip(auto, ref, EPS):
        assert a.lower >= r.lower, (name, eps, a, r)
        assert a.upper <= r.upper, (name, eps, a, r)
        assert a.verify(A, eps), (name, eps, a)
        assert r.verify(A, eps), (name, eps, r)


def test_default_runs_the_svd_family_where_the_points_leave_room():
    # 400 points of S^3 at beta 8 do not resolve the harmonic degree the family needs: the probe
    # of the rotated top block finds room and the streamed SVD family narrows the bracket
    X = well_spread_sphere(400, 4)
    auto = point_bracket(X, 8.0, 0.25)
    ref = _harmonic_neumann(X, 8.0, [0.25])[0]
    assert auto.upper < ref.upper
    assert "SVD" in auto.upper_certificate.source
    assert auto.verify(softmax_attention(X, X, 8.0), 0.25)


def test_default_skips_the_svd_family_on_a_harmonic_plateau(monkeypatch):
    # well-spread points of S^2: the top degree's block is a plateau, the SVD family cannot gain
    X = fibonacci_sphere(1024)

    def refuse(*args, **kwargs):
        raise AssertionError("the streamed SVD family ran")

    monkeypatch.setattr(assemble, "randomized_range_finder", refuse)
    b = point_bracket(X, 16.0, 0.25)
    assert b.upper_certificate.source.startswith("harmonic degree")
    assert b.verify(softmax_attention(X, X, 16.0), 0.25)
    with pytest.raises(AssertionError, match="streamed SVD family ran"):
        point_bracket(X, 16.0, 0.25, effort="max")


def test_effort_max_gives_the_everything_on_brackets():
    # the brackets of main before the cost-aware rule (commit 9c59b71), computed there
    got = []
    got += [(b.lower, b.upper, b.upper_certificate.source)
            for b in point_brackets(fibonacci_sphere(500), 16.0, [0.1, 0.25], effort="max")]
    got += [(b.lower, b.upper, b.upper_certificate.source)
            for b in point_brackets(well_spread_sphere(300, 4), 8.0, [0.25], effort="max")]
    X = random_sphere(200, 3, seed=3)
    A = softmax_attention(X, X, 16.0)
    for b in (rank_bracket(A, 0.25, effort="max"), rank_bracket(A, 0.25, points=X, effort="max")):
        assert b.verify(A, 0.25)
        got.append((b.lower, b.upper, b.upper_certificate.source))
    assert got == [
        (47, 111, "l1 fit in streamed randomized SVD (l=131)"),
        (28, 77, "l1 fit in harmonic degree 8"),
        (18, 90, "l1 fit in streamed randomized SVD (l=150)"),
        (27, 62, "l1 fit in dense SVD"),
        (27, 62, "l1 fit in dense SVD"),
    ]


def test_default_on_a_stored_matrix_is_never_wider_than_without_the_l1_family():
    X = random_sphere(200, 3, seed=3)
    A = softmax_attention(X, X, 16.0)
    auto = rank_brackets(A, EPS)
    plain = rank_brackets(A, EPS, limits=CostLimits(l1=0), effort="max")
    for a, p, eps in zip(auto, plain, EPS):
        assert a.lower >= p.lower and a.upper <= p.upper
        assert a.verify(A, eps)


@pytest.mark.parametrize("bad", ["fast", "MAX", "", None, 1, True])
def test_bad_effort_names_the_allowed_values(bad):
    X = fibonacci_sphere(50)
    A = softmax_attention(X, X, 4.0)
    calls = [
        lambda: point_bracket(X, 4.0, 0.25, effort=bad),
        lambda: point_brackets(X, 4.0, [0.25], effort=bad),
        lambda: rank_bracket(A, 0.25, effort=bad),
        lambda: rank_brackets(A, [0.25], effort=bad),
        lambda: assemble_brackets(RowSource.from_matrix(A), [0.25], effort=bad),
        lambda: check_effort(bad),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"effort must be one of 'auto', 'max'"):
            call()


def test_estimate_rule():
    # one percent of the upper end per form-A of cost, and at least one rank
    assert not Estimate(cost=10.0, gain=9, upper=100).worth
    assert Estimate(cost=10.0, gain=10, upper=100).worth
    assert Estimate(cost=10.0, gain=10, upper=100).least_gain == 10
    assert not Estimate(cost=0.1, gain=0, upper=100).worth
    assert Estimate(cost=0.1, gain=1, upper=100).least_gain == 1
    # the l1 fit at rank 81 costs far more than forming A: it must promise a large gain
    assert assemble._l1_cost(81) > 10
    assert np.isclose(assemble._streamed_svd_cost(91), 5 + 5 * 2 * 91 / assemble.FORM_A_FLOPS)


@pytest.mark.parametrize("max_rounds", [1, 2, 6])
def test_nested_search_checks_the_top_cut_only_after_a_failure(max_rounds):
    # the evenly spaced sample misses the rows that need the last coordinate: the first candidate
    # fails on A, and the search must still return a valid member (the top cut is checked then)
    from attnrank_lite.engine.nested import nested_family_search

    n, m = 64, 12
    A = np.zeros((n, m))
    A[:, 0] = 1.0
    hard = [5, 6, 7, 9, 10]  # off the 4-row sample 0, 21, 42, 63
    A[hard, 0] = 0.5
    A[hard, m - 1] = 0.5
    V = np.eye(m)
    eps = 0.25
    src = RowSource.from_matrix(A)
    found = nested_family_search(src, V, range(1, m + 1), [eps], sample=4, max_rounds=max_rounds)
    k, L = found[0]
    err = np.abs(A - L @ V[:, :k].T).sum(axis=1).max()
    assert err <= eps and k == m


def _reference_l1_certifies(A, V, eps, steps=400):
    """Independent plain ADMM l1 fit of every row of ``A`` in the span of ``V`` (SPEC, "Upper:
    l1-fitted subspace certificate"; rho = 1/mean|Z| per row, the best iterate kept per row):
    whether its max row error meets ``eps``."""
    C = A @ V
    Z = A - C @ V.T
    U = np.zeros_like(Z)
    rho = 1.0 / np.maximum(np.abs(Z).mean(axis=1, keepdims=True), 1e-300)
    best = np.abs(Z).sum(axis=1)
    for _ in range(steps):
        C = (A - Z + U) @ V
        R = A - C @ V.T
        best = np.minimum(best, np.abs(R).sum(axis=1))
        W = R + U
        Z = np.sign(W) * np.maximum(np.abs(W) - 1.0 / rho, 0.0)
        U = W - Z
    return float(best.max()) <= eps * (1 - 1e-9)


def test_l1_family_on_the_randomized_stored_path_is_within_3_percent_of_plain_admm():
    # random points of S^3, stored matrix on the randomized path (forced by dense=0) with points:
    # the doubling SVD family is skipped next to the high harmonic rank, and the l1 fit must
    # still get an SVD subspace (the one-sketch family), not the harmonic one alone
    X = random_sphere(300, 4, seed=1)
    A = softmax_attention(X, X, 8.0)
    eps = 0.25
    b = rank_brackets(A, [eps], points=X, effort="max", limits=CostLimits(dense=0))[0]
    assert b.verify(A, eps)
    assert "randomized SVD" in b.upper_certificate.source
    # the reference (plain ADMM, 400 steps, in the dense SVD subspace) certifies no rank at or
    # below k: by monotonicity its bisection would end above k, so upper <= 1.03 * reference
    k = int(np.ceil(b.upper / 1.03)) - 1
    V = np.linalg.svd(A)[2].T
    assert not _reference_l1_certifies(A, V[:, :k], eps)


def test_effort_max_lifts_the_streamed_svd_limit_only_where_the_upper_end_is_capped():
    """Beyond ``limits.streamed_svd``, the default leaves a level whose harmonic count exceeds n
    at n; ``effort="max"`` runs the streamed SVD family there (certificates checked on the dense
    matrix), and not on points whose harmonic end is already below n."""
    lim = CostLimits(streamed_svd=1000)
    X = random_sphere(300, 6, seed=3)
    auto = point_brackets(X, 16.0, [0.25], limits=lim)
    full = point_brackets(X, 16.0, [0.25], limits=lim, effort="max")
    assert auto[0].upper == 300
    assert full[0].upper < 300 and "SVD" in full[0].upper_certificate.source
    assert full[0].verify(softmax_attention(X, X, 16.0), 0.25)
    low = point_brackets(fibonacci_sphere(300), 2.0, [0.25], limits=lim, effort="max")
    assert low[0].upper < 300 and "SVD" not in low[0].upper_certificate.source


def test_default_runs_neumann_on_a_stored_square_matrix_without_points():
    """A Gaussian head (no points): the default's lower end is at least the Neumann certificate
    with centres in attention order, and the bracket verifies on the matrix."""
    from attnrank_lite.engine.neumann import neumann_lower_bound

    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((300, 32)), rng.standard_normal((300, 32))
    A = softmax_attention(Q, K, 1 / np.sqrt(32))
    b = rank_bracket(A, 0.1)
    assert b.lower >= neumann_lower_bound(A, 0.1).rank > 4 and b.verify(A, 0.1)
