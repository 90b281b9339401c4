"""Seeded soundness fuzz of ``rank_bracket`` (issue 10, "Keep it that way").

4,000 small matrices (self-attention on the sphere, Gaussian logits, weighted keys, tiny and
huge inverse temperatures, and signed non-attention matrices) at error levels that include 0,
huge values and values placed one float either side of a row's exact error. Every bracket is
rechecked here, independently of the package's verifiers, against its explicit witnesses:

* the upper factorisation ``B = L R``: its max-row-l1 error, computed exactly in rational
  arithmetic (``fractions.Fraction``) from the stored float factors, is ``<= eps``;
* ``[0, 0]`` exactly when ``eps >= max_i sum_j |A_ij|`` computed exactly (the ``B = 0`` test is
  exact, so both directions hold);
* a cluster-mass lower certificate: rows distinct, groups disjoint and in range, and the condition
  ``|1 - M_aa| + sum_{b != a} |M_ab| < 1 - eps`` recomputed exactly;
* a Neumann (inverse-norm) lower certificate: ``M = A_S G`` inverted exactly, and
  ``||M^{-1}|| eps < 1``;
* a norm lower certificate: the stored row's exact l1 mass exceeds ``eps``;
* a right-inverse lower certificate: rows distinct and in range, and
  ``||I - A_S X|| + eps ||X|| < 1`` recomputed exactly from the stored ``X`` (the family is off in
  the default bracket: a second test turns it on and runs both searches of ``right_inverse_lower``);
* a Frobenius-tail lower certificate: the tail of the spectrum of the exact rational Gram matrix,
  from 50-digit eigenvalues (mpmath, not LAPACK), exceeds the budget ``|S| eps^2``;
* ``lower <= upper``, and the verifier of a stored factorisation is exact at one float either side
  of its exact error.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from reference_math import exact_right_inverse_lhs

from attnrank_lite import (
    SubspaceCertificate,
    rank_bracket,
    row_softmax,
    softmax_attention,
)
from attnrank_lite.engine.assemble import CostLimits
from attnrank_lite.engine.bracket import rank_brackets
from attnrank_lite.engine.right_inverse import RightInverseCertificate, right_inverse_lower

SEED = 20261202
CHUNKS = 10
PER_CHUNK = 400  # 4,000 instances in all


def _sphere(rng, n, d):
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _matrix(rng, kind):
    n, m = (int(x) for x in rng.integers(1, 8, size=2))
    if kind == "sphere":
        return softmax_attention(_sphere(rng, n, int(rng.integers(2, 4))), beta=float(10 ** rng.uniform(-1, 3)))
    if kind == "gaussian logits":
        return row_softmax(rng.normal(size=(n, m)) * float(10 ** rng.uniform(-2, 1.5)))
    if kind == "weighted keys":
        d = int(rng.integers(2, 4))
        w = rng.uniform(-30, 0, size=m)
        w[rng.random(m) < 0.15] = -np.inf  # keys of weight zero
        w[0] = 0.0
        return softmax_attention(_sphere(rng, n, d), _sphere(rng, m, d), beta=float(10 ** rng.uniform(0, 2.5)),
                                 log_weights=w)
    if kind == "tiny beta":
        return softmax_attention(_sphere(rng, n, 3), _sphere(rng, m, 3), beta=float(rng.choice([0.0, 1e-12, 1e-6])))
    if kind == "signed":  # not an attention matrix: only the norm and Frobenius certificates apply
        return rng.normal(size=(n, m)) * float(10 ** rng.uniform(-3, 3))
    if kind == "huge beta":
        return softmax_attention(_sphere(rng, n, 2), _sphere(rng, m, 2), beta=float(rng.choice([1e3, 1e5, 1e6])))
    raise AssertionError(kind)


KINDS = ["sphere", "gaussian logits", "weighted keys", "tiny beta", "huge beta", "signed"]


def _exact(A):
    return [[Fraction(x) for x in row] for row in A.tolist()]


def _exact_row_sums(Aq):
    return [sum(abs(x) for x in row) for row in Aq]


def _exact_error(Aq, L, R):
    """max_i sum_j |A_ij - (L R)_ij| in rational arithmetic from the stored floats."""
    Lq, Rq = _exact(L), _exact(R)
    k = len(Rq)
    worst = Fraction(0)
    for i, row in enumerate(Aq):
        e = sum(abs(a - sum(Lq[i][t] * Rq[t][j] for t in range(k))) for j, a in enumerate(row))
        worst = max(worst, e)
    return worst


def _eps_choices(rng, A, Aq):
    """Error levels: random, 0, huge, and one float either side of a row's exact error."""
    sums = _exact_row_sums(Aq)
    s = float(sums[int(rng.integers(len(sums)))])  # nearest float to one row's exact l1 mass
    top = float(max(sums))
    if rng.random() < 0.55:
        return [float(rng.uniform(0, 1)) * top, float(rng.uniform(0, 1) ** 4) * top, 0.0,
                float(10 ** rng.uniform(0, 300))]
    return [np.nextafter(top, -np.inf), top, np.nextafter(top, np.inf),
            np.nextafter(s, -np.inf), s, np.nextafter(s, np.inf)]


def _check_cluster(Aq, eps, rows, groups):
    n, m = len(Aq), len(Aq[0])
    assert len(set(rows)) == len(rows) == len(groups)
    flat = [j for g in groups for j in g]
    assert len(flat) == len(set(flat)) and all(0 <= j < m for j in flat) and all(0 <= i < n for i in rows)
    for a, i in enumerate(rows):
        M = [sum(Aq[i][j] for j in g) for g in groups]
        assert abs(1 - M[a]) + sum(abs(x) for b, x in enumerate(M) if b != a) < 1 - Fraction(eps)


def _exact_inverse(M):
    """Inverse of a square rational matrix by Gauss-Jordan elimination (None if singular)."""
    p = len(M)
    W = [list(row) + [Fraction(int(i == j)) for j in range(p)] for i, row in enumerate(M)]
    for c in range(p):
        piv = next((r for r in range(c, p) if W[r][c] != 0), None)
        if piv is None:
            return None
        W[c], W[piv] = W[piv], W[c]
        inv = 1 / W[c][c]
        W[c] = [x * inv for x in W[c]]
        for r in range(p):
            if r != c and W[r][c] != 0:
                f = W[r][c]
                W[r] = [x - f * y for x, y in zip(W[r], W[c])]
    return [row[p:] for row in W]


def _check_neumann(Aq, eps, rows, groups):
    """rank_eps >= p when M = A_S G (disjoint groups) is invertible with ||M^{-1}|| eps < 1."""
    m = len(Aq[0])
    flat = [j for g in groups for j in g]
    assert len(set(rows)) == len(rows) == len(groups)
    assert len(flat) == len(set(flat)) and all(0 <= j < m for j in flat)
    M = [[sum(Aq[i][j] for j in g) for g in groups] for i in rows]
    Minv = _exact_inverse(M)
    assert Minv is not None
    assert max(sum(abs(x) for x in row) for row in Minv) * Fraction(eps) < 1


def _check_frobenius(Aq, eps, cert):
    rows = list(range(len(Aq))) if cert.rows is None else [int(i) for i in cert.rows]
    cols = list(range(len(Aq[0]))) if cert.cols is None else [int(j) for j in cert.cols]
    assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols)
    S = [[Aq[i][j] for j in cols] for i in rows]
    q = len(cols)
    G = [[sum(S[i][a] * S[i][b] for i in range(len(rows))) for b in range(q)] for a in range(q)]
    with mpmath.workdps(50):
        Gm = mpmath.matrix([[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in G])
        lam = sorted((mpmath.re(x) for x in mpmath.eigsy(Gm, eigvals_only=True)), reverse=True)
        tail = sum(lam[cert.rank - 1:])  # sum_{l >= rank} sigma_l^2
        budget = len(rows) * mpmath.mpf(Fraction(eps).numerator) ** 2 / mpmath.mpf(Fraction(eps).denominator) ** 2
        assert tail > budget * (1 + mpmath.mpf(10) ** -30) + mpmath.mpf(10) ** -40


def _check_right_inverse(A, eps, cert):
    """rank_eps >= p when ||I - A_S X|| + eps ||X|| < 1 (max row sums), from the stored floats of X."""
    rows = [int(i) for i in cert.rows]
    assert len(set(rows)) == len(rows) == cert.rank and all(0 <= i < A.shape[0] for i in rows)
    X = np.asarray(cert.X)
    assert X.shape == (A.shape[1], len(rows))
    assert exact_right_inverse_lhs(A, rows, X, eps) < 1


def _check_bracket(A, Aq, eps, b):
    assert 0 <= b.lower <= b.upper <= min(A.shape)
    assert b.verify(A, eps)
    sums = _exact_row_sums(Aq)
    # [0, 0] exactly when B = 0 meets eps exactly
    assert (b.upper == 0) == (max(sums) <= Fraction(eps))
    L, R = b.upper_factors
    assert L.shape == (A.shape[0], b.upper) and R.shape == (b.upper, A.shape[1])
    if b.upper:
        assert _exact_error(Aq, L, R) <= Fraction(eps)
    kind = b.lower_kind
    c = b.lower_certificate
    if b.lower == 0:
        return
    if kind == "cluster-mass":
        _check_cluster(Aq, eps, b.lower_rows, b.lower_groups)
    elif kind == "norm":
        assert sums[c.row] > Fraction(eps)
    elif kind == "frobenius-tail":
        _check_frobenius(Aq, eps, c)
    elif kind == "neumann":
        _check_neumann(Aq, eps, b.lower_rows, b.lower_groups)
    elif kind == "right-inverse":
        _check_right_inverse(A, eps, c)
    else:  # a lower certificate kind added later: at least the trivial necessary condition
        assert max(sums) > Fraction(eps)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_brackets_are_sound_in_exact_arithmetic(chunk):
    rng = np.random.default_rng([SEED, chunk])
    counts = dict.fromkeys(KINDS, 0)
    for t in range(PER_CHUNK):
        kind = KINDS[t % len(KINDS)]
        A = _matrix(rng, kind)
        Aq = _exact(A)
        eps_all = _eps_choices(rng, A, Aq)
        eps = eps_all[int(rng.integers(len(eps_all)))]
        _check_bracket(A, Aq, eps, rank_bracket(A, eps))
        if t % 10 == 0:  # several levels sharing one factorisation
            for e, b in zip(eps_all, rank_brackets(A, eps_all)):
                _check_bracket(A, Aq, e, b)
        counts[kind] += 1
    assert sum(counts.values()) == PER_CHUNK and min(counts.values()) > 0


@pytest.mark.parametrize("chunk", range(3))
def test_right_inverse_certificates_are_sound_in_exact_arithmetic(chunk):
    """The right-inverse family (off in the default bracket) turned on, and both searches of
    ``right_inverse_lower`` on every square instance: each certificate holds in exact arithmetic."""
    rng = np.random.default_rng([SEED, 50 + chunk])
    found = 0
    for t in range(400):
        A = _matrix(rng, KINDS[t % len(KINDS)])
        Aq = _exact(A)
        eps_all = _eps_choices(rng, A, Aq)
        eps = eps_all[int(rng.integers(len(eps_all)))]
        b = rank_bracket(A, eps, limits=CostLimits(right_inverse=10**9))
        _check_bracket(A, Aq, eps, b)
        found += b.lower_kind == "right-inverse"
        if A.shape[0] != A.shape[1]:
            continue
        for method in ("projection", "lp"):
            c = right_inverse_lower(A, eps, method=method)
            if isinstance(c, RightInverseCertificate):
                assert c.verify(A, eps)
                _check_right_inverse(A, eps, c)
                found += 1
    assert found >= 5, found  # the check ran on certificates, not on nothing


def test_exact_neumann_check_matches_a_closed_form():
    """The exact check used above, on M = a I + b J whose inverse is known in closed form."""
    a, b, p = Fraction(1, 4), Fraction(1, 4), 3
    M = [[a * (i == j) + b for j in range(p)] for i in range(p)]
    Minv = _exact_inverse(M)
    closed = [[(1 / a) * ((i == j) - b / (a + p * b)) for j in range(p)] for i in range(p)]
    assert Minv == closed
    assert _exact_inverse([[Fraction(1), Fraction(2)], [Fraction(2), Fraction(4)]]) is None


@pytest.mark.parametrize("chunk", range(3))
def test_subspace_verify_is_exact_one_float_either_side_of_the_error(chunk):
    """verify(A, e) is True iff the exact error of the stored factors is <= e, at the boundary."""
    rng = np.random.default_rng([SEED, 100 + chunk])
    boundary_hits = 0
    for t in range(100):
        A = _matrix(rng, KINDS[t % len(KINDS)])
        Aq = _exact(A)
        k = int(rng.integers(0, min(A.shape) + 1))
        U, s, Vt = np.linalg.svd(A, full_matrices=False)
        L, R = U[:, :k] * s[:k], Vt[:k]
        err = _exact_error(Aq, L, R) if k else max(_exact_row_sums(Aq))
        f = float(err)
        for e in (np.nextafter(f, -np.inf), f, np.nextafter(f, np.inf)):
            if e < 0:
                continue
            got = SubspaceCertificate(L, R).verify(A, e)
            assert got == (err <= Fraction(e)), (k, f, e)
            boundary_hits += 1
    assert boundary_hits >= 250
