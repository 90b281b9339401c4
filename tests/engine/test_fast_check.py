"""The float32 full check of the nested search (``nested._Family.full_check`` with thresholds):
proven bounds, and acceptance never worse than the all-float64 check."""
import numpy as np
import pytest

from attnrank_lite.engine import nested
from attnrank_lite.engine.harmonic import HarmonicBasis
from attnrank_lite.engine.row_source import RowSource
from attnrank_lite.laws.geometry import fibonacci_sphere


@pytest.fixture
def family(monkeypatch):
    monkeypatch.setattr(nested, "FAST_CHECK_MIN", 0)  # every check runs the float32 path
    monkeypatch.setattr(nested, "FAST_CHUNK", 32)  # several products per cut
    X = fibonacci_sphere(700)
    src = RowSource.from_points(X, 16.0, block=128)
    basis = HarmonicBasis(X)
    L = 12
    cuts = [basis.dimension(l) for l in range(L + 1)]
    return src, basis.columns(L), cuts


def _exact_errors(src, left, V, k):
    A = src.dense()
    return np.abs(A - left[:, :k] @ V[:, :k].T).sum(axis=1)


def test_fast_bounds_are_upper_bounds_of_the_returned_factor(family):
    src, V, cuts = family
    checked = [len(cuts) - 4, len(cuts) - 1]
    left, bounds = nested._Family(src, V, cuts).full_check(checked, {i: 0.25 for i in checked})
    for i in checked:
        err = _exact_errors(src, left, V, cuts[i])
        assert np.all(bounds[i] >= err)
        # the margin is small: within 1e-3 of the error on these rows
        assert float((bounds[i] - err).max()) < 1e-3


@pytest.mark.parametrize("shift", [1e-12, -1e-12])
def test_acceptance_matches_the_float64_check_at_its_edge(family, shift):
    # eps just above (below) the float64 check's largest bound: the float32 margin misses it, the
    # rechecks in float64 must decide as the float64 check does
    src, V, cuts = family
    i = len(cuts) - 2
    _, b64 = nested._Family(src, V, cuts).full_check([i])
    eps = float(b64[i].max()) + shift
    left, b32 = nested._Family(src, V, cuts).full_check([i], {i: eps})
    assert bool(np.all(b32[i] <= eps)) == (shift > 0)
    assert np.all(b32[i] >= _exact_errors(src, left, V, cuts[i]))


def test_fast_and_float64_searches_find_the_same_member(family, monkeypatch):
    src, V, cuts = family
    levels = [0.2, 0.25, 0.4]
    fast = nested.nested_family_search(src, V, cuts, levels)
    monkeypatch.setattr(nested, "FAST_CHECK_MIN", 2**62)
    slow = nested.nested_family_search(src, V, cuts, levels)
    assert all(f is not None for f in fast)
    assert [f[0] for f in fast] == [s[0] for s in slow]
    A = src.dense()
    for (k, left), eps in zip(fast, levels):
        assert float(np.abs(A - left @ V[:, :k].T).sum(axis=1).max()) <= eps


def test_fast_bounds_hold_in_exact_arithmetic_and_leave_room_for_verify(family):
    # an oracle outside the code under test: the exact rational row error of the stored float data
    from fractions import Fraction

    from attnrank_lite.engine.norms import row_l1_blockwise

    src, V, cuts = family
    i = len(cuts) - 1
    left, bounds = nested._Family(src, V, cuts).full_check([i], {i: 0.25})
    A, R = src.dense(), V[:, :cuts[i]].T
    L = left[:, :cuts[i]]
    for r in np.argsort(-bounds[i])[:3]:
        exact = sum(abs(Fraction(a) - sum(Fraction(x) * Fraction(y) for x, y in zip(L[r], R[:, j])))
                    for j, a in enumerate(A[r]))
        assert exact <= Fraction(bounds[i][r])
    # verify's float64 check (computed error plus twice its margin) is below the float32 bound, so
    # every row this search accepts passes verify without the exact-arithmetic fallback
    err, rnd = row_l1_blockwise(A, L, R, bound=True)
    assert np.all(err + 2 * rnd <= bounds[i])


def test_bounds_hold_where_float32_rounds_entries_to_subnormals(monkeypatch):
    """At beta = 128 entries of A fall below float32's smallest normal (6% of them at 4,096 points);
    the float32 pass sets those to zero, within its absolute underflow term: the bounds still hold
    for the exact rational errors of the returned factor."""
    from fractions import Fraction

    monkeypatch.setattr(nested, "FAST_CHECK_MIN", 0)
    monkeypatch.setattr(nested, "FAST_CHUNK", 32)
    X = fibonacci_sphere(700)
    src = RowSource.from_points(X, 128.0, block=128)
    A = src.dense()
    A32 = A.astype(np.float32)
    subnormal = ((A32 != 0) & (np.abs(A32) < np.finfo(np.float32).tiny)).sum(axis=1)
    assert subnormal.sum() > 1000  # the instance has what the test is about
    basis = HarmonicBasis(X)
    cuts = [basis.dimension(l) for l in range(13)]
    V = basis.columns(12)
    i = len(cuts) - 1
    left, bounds = nested._Family(src, V, cuts).full_check([i], {i: 0.25})
    L, R = left[:, :cuts[i]], V[:, :cuts[i]].T
    for r in np.argsort(-subnormal)[:2]:
        exact = sum(abs(Fraction(a) - sum(Fraction(x) * Fraction(y) for x, y in zip(L[r], R[:, j])))
                    for j, a in enumerate(A[r]))
        assert exact <= Fraction(bounds[i][r])
