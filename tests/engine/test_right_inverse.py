"""The right-inverse lower certificate (engine/right_inverse.py): exact cases, the issue's
prototype value, exact rational rechecks of the rounding bound, and forged stored data."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from reference_math import exact_right_inverse_lhs

from attnrank_lite import rank_bracket, softmax_attention
from attnrank_lite.engine.neumann import neumann_lower_bound
from attnrank_lite.engine.right_inverse import RightInverseCertificate, right_inverse_lower
from attnrank_lite.laws.geometry import fibonacci_sphere


def test_identity_has_full_rank_below_one_and_not_at_one():
    n = 6
    cert = RightInverseCertificate(rows=list(range(n)), X=np.eye(n), rank=n)
    assert cert.verify(np.eye(n), 0.99)        # ||I - I|| + 0.99 * 1 < 1
    assert not cert.verify(np.eye(n), 1.0)     # equality is not enough


@pytest.fixture(scope="module")
def fib512():
    P = fibonacci_sphere(512)
    return P, softmax_attention(P, beta=16.0)


def test_the_lp_beats_neumann_on_the_issue_instance(fib512):
    """Issue 23's prototype (HiGHS, 7 cells): Neumann 28, LP 37 on 512 Fibonacci points, beta 16."""
    P, A = fib512
    neumann = neumann_lower_bound(A, 0.25, points=P)
    cert = right_inverse_lower(A, 0.25, points=P, p_values=[37], cells=7)
    assert neumann.rank == 28
    assert isinstance(cert, RightInverseCertificate) and cert.rank == 37 and cert.verify(A, 0.25)
    assert cert.rank <= rank_bracket(A, 0.25, points=P).upper  # an independent upper certificate


def test_the_default_search_finds_the_prototype_value_with_few_programs(fib512, monkeypatch):
    """The secant search above Neumann's 28 reaches the prototype's 37 (trying p = 29, 30, ... one
    by one took 11 programs, 29 to 39)."""
    from attnrank_lite.engine import right_inverse as ri

    P, A = fib512
    solved, lp = [], ri.lp_right_inverse
    monkeypatch.setattr(ri, "lp_right_inverse", lambda A, S, **kw: solved.append(S.size) or lp(A, S, **kw))
    cert = right_inverse_lower(A, 0.25, points=P, cells=7, max_seconds=600)
    assert isinstance(cert, RightInverseCertificate) and cert.rank >= 37 and cert.verify(A, 0.25)
    assert len(solved) <= 6 and len(set(solved)) == len(solved), solved  # no p solved twice


def test_without_points_on_a_diffuse_head_it_beats_the_default_lower_end():
    """Generic attention (issue 23): Gaussian queries and keys, no points, centres from A alone.
    The default's lower end is the trivial few (cluster-mass); the LP needs no concentration."""
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((150, 16)), rng.standard_normal((150, 16))
    A = softmax_attention(Q, K, 0.25)
    b = rank_bracket(A, 0.1)
    cert = right_inverse_lower(A, 0.1)
    assert isinstance(cert, RightInverseCertificate) and cert.verify(A, 0.1)
    assert 2 * b.lower <= cert.rank <= b.upper


def test_a_centre_with_an_empty_cell_is_no_error():
    """Two equal rows: the second centre attends most to no key (its Voronoi cell is empty; this
    raised IndexError). A_S X = I has no solution then, and the search goes on without it."""
    from attnrank_lite.engine.right_inverse import lp_right_inverse

    A = softmax_attention(fibonacci_sphere(12), beta=4.0)
    A = np.vstack([A[:1], A])[:, :12]  # row 0 twice
    assert lp_right_inverse(A[:12], np.array([0, 1])) is None
    cert = right_inverse_lower(A[:12], 0.25, p_values=[2, 3])
    assert cert.rank == 0 or cert.verify(A[:12], 0.25)



def test_verify_never_accepts_what_exact_arithmetic_refuses():
    """Near-boundary instances: X a pseudo-inverse of A_S and eps within rounding of 1/||X||, so the
    left side sits at 1 up to rounding; every accepted one must hold in exact arithmetic."""
    rng = np.random.default_rng(7)
    accepted = refused = 0
    for _ in range(300):
        n = int(rng.integers(2, 6))
        p = int(rng.integers(1, n + 1))
        A = rng.random((n, n)) ** 4 + np.eye(n) * rng.random() * 3
        A /= A.sum(axis=1, keepdims=True)
        rows = sorted(rng.choice(n, p, replace=False).tolist())
        X = np.linalg.pinv(A[rows])  # residual ~1e-16: the left side is about eps * ||X||
        x_norm = max(sum(abs(Fraction(float(v))) for v in r) for r in X)
        eps = float(1 / x_norm) * (1 + float(rng.normal(scale=1e-12)))  # within rounding of the boundary
        lhs = exact_right_inverse_lhs(A, rows, X, eps)
        ok = RightInverseCertificate(rows=rows, X=X, rank=p).verify(A, eps)
        if ok:
            assert lhs < 1, (lhs, A, rows, X, eps)
            accepted += 1
        else:
            refused += 1
    assert accepted > 20 and refused > 20, (accepted, refused)  # both sides of the boundary


@pytest.mark.parametrize("forge", ["repeat", "range", "negative", "nan", "inf", "complex", "shape", "bool",
                                   "rank", "perturb", "float_rows"])
def test_forged_stored_data_is_refused(fib512, forge):
    P, A = fib512
    cert = right_inverse_lower(A, 0.25, points=P, p_values=[37])
    assert cert.verify(A, 0.25)
    rows, X, rank = list(cert.rows), np.array(cert.X), cert.rank
    if forge == "repeat":
        rows[1] = rows[0]
    elif forge == "range":
        rows[0] = A.shape[0]
    elif forge == "negative":
        rows[0] = -1
    elif forge == "nan":
        X[3, 2] = np.nan
    elif forge == "inf":
        X[3, 2] = np.inf
    elif forge == "complex":
        X = X.astype(complex)
        X[0, 0] += 1e-30j
    elif forge == "shape":
        X = X[:, :-1]
    elif forge == "bool":
        rows = [True] * len(rows)
    elif forge == "rank":
        rank += 1
    elif forge == "perturb":
        X = X * 1.4  # the residual norm grows past the budget
    elif forge == "float_rows":
        rows = [float(r) for r in rows]
    assert not RightInverseCertificate(rows=rows, X=X, rank=rank).verify(A, 0.25)


def test_bad_arguments_name_themselves(fib512):
    P, A = fib512
    with pytest.raises(ValueError, match="cells"):
        right_inverse_lower(A, 0.25, points=P, cells=0)
    cert = RightInverseCertificate(rows=[0], X=np.ones((A.shape[1], 1)), rank=1)
    with pytest.raises(ValueError, match="eps"):
        cert.verify(A, float("nan"))
