"""Combining certified brackets (prop-invariances, prop-multiplicity): the combined ends are
still certified, checked against exact ranks of matrices whose rank_eps is known in closed form."""
import numpy as np
import pandas as pd
import pytest

from attnrank_lite import rank_bracket
from attnrank_lite.engine.bracket_algebra import intersect, monotone_envelope


def test_intersection_of_permuted_brackets_contains_the_exact_rank():
    # block-diagonal uniform matrix: rank_eps = b for eps < 1 (prop-exact-cases)
    b, size = 5, 4
    A = np.kron(np.eye(b), np.full((size, size), 1.0 / size))
    rng = np.random.default_rng(0)
    pr, pc = rng.permutation(A.shape[0]), rng.permutation(A.shape[1])
    brs = [rank_bracket(A, 0.3), rank_bracket(A[pr][:, pc], 0.3)]
    lo, up = intersect([x.lower for x in brs], [x.upper for x in brs])
    assert lo <= b <= up


def test_intersection_refuses_disjoint_brackets():
    assert intersect([3, 5], [9, 7]) == (5, 7)
    with pytest.raises(ValueError, match="do not overlap"):
        intersect([3, 8], [5, 9])
    with pytest.raises(ValueError, match="non-empty"):
        intersect([], [])


def test_monotone_envelope_tightens_and_stays_valid():
    t = pd.DataFrame({"eps": [0.5, 0.1, 0.25], "lower": [4, 3, 5], "upper": [6, 9, 8]})
    out = monotone_envelope(t)
    assert list(out.eps) == [0.1, 0.25, 0.5]
    # lower at 0.1 inherits 5 (certified at 0.25); upper at 0.5 keeps 6, at 0.25 keeps 8
    assert list(out.lower_envelope) == [5, 5, 4]
    assert list(out.upper_envelope) == [9, 8, 6]
    bad = pd.DataFrame({"eps": [0.1, 0.5], "lower": [1, 7], "upper": [6, 9]})
    with pytest.raises(ValueError, match="non-increasing"):
        monotone_envelope(bad)


def test_envelope_of_the_identity_is_exact():
    # rank_eps(I_n) = n for eps < 1 and 0 for eps >= 1
    n = 12
    t = pd.DataFrame([rank_bracket(np.eye(n), e).as_dict() for e in (0.2, 0.9, 1.0)])
    out = monotone_envelope(t)
    assert list(out.lower_envelope) == [n, n, 0] and list(out.upper_envelope) == [n, n, 0]
