"""The one nested-family search (engine/nested.py) against brute force over k.

The oracle computes every member's row-l1 error :math:`\\max_i \\sum_j |A - A V_k V_k^\\top|_{ij}`
directly; the levels eps lie midway between distinct errors (at least 1e-3 apart), far from the
search's rounding margins, so a member is accepted exactly when its oracle error is below eps.
"""
from __future__ import annotations

import numpy as np
import pytest

from attnrank_lite.engine import nested
from attnrank_lite.engine.certificates import SubspaceCertificate
from attnrank_lite.engine.row_source import RowSource


def _instance(seed: int, n: int = 12, m: int = 8, K: int = 8):
    """Row-stochastic ``A`` (n, m) and an orthonormal ``V`` (m, K) in a random, not singular, order:
    its nested members' l1 errors need not decrease with k."""
    rng = np.random.default_rng(seed)
    A = rng.dirichlet(np.full(m, 0.3), size=n)
    V = np.linalg.qr(rng.normal(size=(m, m)))[0][:, :K]
    return A, V


def _oracle(A, V, cuts) -> dict[int, float]:
    return {k: float(np.abs(A - A @ V[:, :k] @ V[:, :k].T).sum(axis=1).max()) for k in cuts}


def _levels(errors: dict[int, float]) -> list[float]:
    """Midpoints between distinct errors at least 1e-3 apart, one level below all and one above."""
    vals = sorted(set(errors.values()))
    mids = [(a + b) / 2 for a, b in zip(vals, vals[1:]) if b - a >= 1e-3]
    return [vals[0] / 2] + mids + [vals[-1] + 0.05]


def _check_member(A, V, k, L, eps):
    assert L.shape == (A.shape[0], k)
    np.testing.assert_allclose(L, A @ V[:, :k], atol=1e-12)
    assert SubspaceCertificate(L, V[:, :k].T).verify(A, eps)


@pytest.mark.parametrize("seed", [1, 7, 19])
@pytest.mark.parametrize("lo", [0, 3])
def test_a_full_sample_returns_the_least_member(seed, lo):
    # K = 6 < m: the top member keeps an error, so small levels have no member at all
    A, V = _instance(seed, K=6)
    cuts = list(range(0, 7))
    err = _oracle(A, V, cuts)
    levels = _levels(err)
    found = nested.nested_family_search(RowSource.from_matrix(A), V, cuts, levels, lo=lo)
    for eps, got in zip(levels, found):
        meeting = [k for k in cuts if k > lo and err[k] <= eps]
        if not meeting:
            assert got is None
            continue
        k, L = got
        assert k == min(meeting)  # the sample holds every row: the least member above lo
        _check_member(A, V, k, L, eps)


def test_bisection_on_a_non_monotone_family_returns_a_member_whose_predecessor_fails(monkeypatch):
    # one sample row and one round: a candidate that passes on the sample fails on A, and the
    # bisection between it and the top cut finishes; it keeps err(hi) <= eps < err(lo)
    calls = []
    real = nested._bisect
    monkeypatch.setattr(nested, "_bisect", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    non_monotone = 0
    for seed in (1, 7, 19):
        A, V = _instance(seed)
        cuts = list(range(1, 9))
        err = _oracle(A, V, cuts)
        for eps in _levels(err):
            accepted = [err[k] <= eps for k in cuts]
            non_monotone += any(a and not b for a, b in zip(accepted, accepted[1:]))
            got = nested.nested_family_search(RowSource.from_matrix(A), V, cuts, [eps], sample=1,
                                              max_rounds=1)[0]
            if not any(accepted):
                assert got is None
                continue
            k, L = got
            assert err[k] <= eps
            assert k == cuts[0] or err[k - 1] > eps  # the next smaller member fails
            _check_member(A, V, k, L, eps)
    assert non_monotone and calls  # the instances are not monotone, and the bisection ran


def test_with_many_cuts_the_chunked_sample_still_finds_a_member():
    # more than 2 * CHUNK cuts: sample errors at chunk ends first, the chunk then refined
    A, V = _instance(3, n=40, m=48, K=48)
    cuts = list(range(0, 49))
    err = _oracle(A, V, cuts)
    for eps in _levels(err)[::5]:
        got = nested.nested_family_search(RowSource.from_matrix(A), V, cuts, [eps])[0]
        if not any(e <= eps for e in err.values()):
            assert got is None
            continue
        k, L = got
        assert err[k] <= eps
        _check_member(A, V, k, L, eps)
