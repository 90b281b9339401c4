"""Neumann (inverse-norm) lower certificates: exact cases, rigour of the bound, forged data."""
from fractions import Fraction

import numpy as np
import pytest

from attnrank_lite import NeumannCertificate, softmax_attention
from attnrank_lite.engine.bracket import rank_brackets
from attnrank_lite.engine.lower import cluster_mass_lower_bound
from attnrank_lite.engine.neumann import inverse_norm_bound, neumann_lower_bound
from attnrank_lite.laws.geometry import fibonacci_sphere, random_sphere


def _exact_inverse_norm(M) -> Fraction:
    """max-row-l1 norm of M^{-1}, Gauss-Jordan in exact rational arithmetic."""
    p = M.shape[0]
    T = [[Fraction(float(x)) for x in row] + [Fraction(int(i == j)) for j in range(p)]
         for i, row in enumerate(M)]
    for c in range(p):
        r = next(r for r in range(c, p) if T[r][c] != 0)
        T[c], T[r] = T[r], T[c]
        piv = T[c][c]
        T[c] = [x / piv for x in T[c]]
        for r in range(p):
            if r != c and T[r][c] != 0:
                f = T[r][c]
                T[r] = [a - f * b for a, b in zip(T[r], T[c])]
    return max(sum(abs(x) for x in row[p:]) for row in T)


@pytest.mark.parametrize("seed", range(4))
def test_inverse_norm_bound_is_an_upper_bound_and_tight(seed):
    rng = np.random.default_rng(seed)
    M = np.eye(5) + 0.3 * rng.standard_normal((5, 5))
    exact = _exact_inverse_norm(M)
    b = inverse_norm_bound(M, np.ones(5), 5)
    assert Fraction(b) >= exact  # rigorous
    assert b <= float(exact) * (1 + 1e-9)  # and not loose


def test_singular_aggregate_gives_no_bound():
    assert inverse_norm_bound(np.ones((3, 3)) / 3, np.ones(3), 3) == float("inf")


@pytest.mark.parametrize("n,eps", [(7, 0.5), (12, 0.99), (12, 0.0)])
def test_identity_has_rank_n(n, eps):
    c = neumann_lower_bound(np.eye(n), eps)
    assert c.rank == n and c.verify(np.eye(n), eps)
    # eps >= 1: nothing (B = 0 is within 1 of I)
    assert neumann_lower_bound(np.eye(n), 1.0).rank == 0
    assert not NeumannCertificate(list(range(n)), [[i] for i in range(n)]).verify(np.eye(n), 1.0)


def test_block_matrix_has_rank_b():
    b, s = 5, 4  # b uniform blocks of size s: rank_eps = b for every eps < 1
    A = np.kron(np.eye(b), np.full((s, s), 1.0 / s))
    for eps in (0.1, 0.9):
        c = neumann_lower_bound(A, eps)
        assert c.rank == b and c.verify(A, eps)
    # two rows of one block make M singular: a claim of b + 1 is refused
    rows = [0, 1] + [s * k for k in range(1, b)]
    groups = [[0, 1], [2, 3]] + [list(range(s * k, s * k + s)) for k in range(1, b)]
    assert not NeumannCertificate(rows, groups).verify(A, 0.1)


@pytest.mark.parametrize("make,beta", [(lambda: fibonacci_sphere(500), 16.0),
                                       (lambda: fibonacci_sphere(500), 64.0),
                                       (lambda: random_sphere(400, 4, seed=3), 16.0)])
def test_generalises_cluster_mass_on_the_same_rows_and_groups(make, beta):
    X = make()
    A = softmax_attention(X, beta=beta)
    for eps in (0.1, 0.25):
        cm = cluster_mass_lower_bound(A, eps)
        assert cm.rank > 0 and cm.verify(A, eps)
        assert NeumannCertificate(cm.rows, cm.groups).verify(A, eps)


def test_reference_measurement_and_bracket_registration():
    # SPEC reference: Fibonacci n = 2048, eps = 0.25, beta = 16: 32 (cluster-mass 25)
    X = fibonacci_sphere(2048)
    A = softmax_attention(X, beta=16.0)
    c = neumann_lower_bound(A, 0.25, points=X)
    assert c.rank == 32 and c.verify(A, 0.25)
    assert cluster_mass_lower_bound(A, 0.25).rank == 25
    b = rank_brackets(A, [0.25], points=X)[0]
    assert b.lower_kind == "neumann" and b.lower == 32 and b.verify(A)
    assert b.lower_rows == c.rows and len(b.lower_groups) == 32


def _good():
    X = fibonacci_sphere(200)
    A = softmax_attention(X, beta=16.0)
    c = neumann_lower_bound(A, 0.25, points=X)
    assert c.rank >= 4 and c.verify(A, 0.25)
    return A, c


@pytest.mark.parametrize("forge", [
    lambda r, g: (r[:-1] + [r[0]], g),  # repeated row
    lambda r, g: ([-1] + r[1:], g),  # negative index (would wrap around)
    lambda r, g: ([10**6] + r[1:], g),  # out of range
    lambda r, g: ([float(x) for x in r], g),  # float indices
    lambda r, g: ([True] * len(r), g),  # boolean indices (a mask, not indices)
    lambda r, g: (r, [g[0] + g[1][:1]] + g[1:]),  # overlapping groups
    lambda r, g: (r, [[]] + g[1:]),  # empty group
    lambda r, g: (r, g[:-1]),  # rows and groups of different lengths
    lambda r, g: (r + [r[0] + 1], g + [[10**6]]),  # a group out of range
    lambda r, g: (r, [[float(j) for j in g[0]]] + g[1:]),  # float key indices
])
def test_forged_data_is_rejected(forge):
    A, c = _good()
    rows, groups = forge(list(c.rows), [list(x) for x in c.groups])
    assert not NeumannCertificate(rows, groups).verify(A, 0.25)


def test_bad_arguments_raise_and_unsupported_rank_fails():
    A, c = _good()
    with pytest.raises(ValueError):
        c.verify(A, float("nan"))
    with pytest.raises(TypeError):
        c.verify(A.astype(complex), 0.25)
    B = A.copy()
    B[0, 0] = np.inf
    with pytest.raises(ValueError):
        c.verify(B, 0.25)
    # the same rows and groups claim nothing on a rank-one matrix (all rows equal)
    J = np.full(A.shape, 1.0 / A.shape[1])
    assert not c.verify(J, 0.25)
    # nor on a matrix whose shape does not fit the indices
    assert not c.verify(A[:3, :3], 0.25)
