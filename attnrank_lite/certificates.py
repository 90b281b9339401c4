r"""Certificate objects for the approximation rank (SPEC §2).

Each certificate stores the data needed to recheck its claim and a ``verify(A, eps)`` method
that recomputes the condition from that data alone, with a rounding margin, so that no
certificate passes because of floating-point error.

* :class:`ClusterMassCertificate` — lower bound ``rank_eps(A) >= k`` from k rows and k disjoint
  key groups whose mass matrix is within ``< 1 - eps`` of the identity.
* :class:`FrobeniusTailCertificate` — lower bound from the singular values of a row/column
  submatrix: ``||E||_F^2 <= (#rows) * eps^2`` for every ``E`` with ``||E|| <= eps``.
* :class:`NormCertificate` — the trivial lower bound ``rank_eps(A) >= 1`` when ``||A|| > eps``.
* :class:`SubspaceCertificate` — upper bound from an explicit factorisation ``B = L R``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

__all__ = [
    "ClusterMassCertificate",
    "FrobeniusTailCertificate",
    "NormCertificate",
    "SubspaceCertificate",
    "UNIT_ROUNDOFF",
    "gamma",
]

UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2


def gamma(k: int) -> float:
    r"""Higham's :math:`\gamma_k = k u / (1 - k u)`: relative error bound of a k-term float64 sum."""
    ku = k * UNIT_ROUNDOFF
    return ku / (1.0 - ku)


def _as_matrix(A) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {A.shape}")
    return A


@dataclass
class ClusterMassCertificate:
    r"""Cluster-mass lower certificate: ``rank_eps(A) >= len(rows)``.

    With :math:`M_{ab} = \sum_{j\in G_b} A_{i_a j}` for rows :math:`i_1..i_k` and pairwise
    disjoint key groups :math:`G_1..G_k`, the condition

    .. math:: \max_a \Big(|1 - M_{aa}| + \sum_{b\ne a} |M_{ab}|\Big) < 1 - \varepsilon

    implies :math:`\mathrm{rank}_\varepsilon(A) \ge k`: selecting rows and summing group columns
    does not increase the max-row-l1 norm, so the k x k image of any admissible B lies within
    distance < 1 of the identity and is invertible.

    Attributes
    ----------
    rows : list of int, length k
    groups : list of list of int, length k
    """

    rows: list = field(default_factory=list)
    groups: list = field(default_factory=list)
    kind: str = "cluster-mass"

    @property
    def rank(self) -> int:
        return len(self.rows)

    def mass_matrix(self, A, block: int = 256) -> np.ndarray:
        r"""The k x k matrix ``M[a, b] = sum(A[rows[a], groups[b]])``.

        Cost :math:`O(k \cdot \sum_b |G_b|)` time and :math:`O(\text{block}\cdot m)` extra
        memory: the selected rows are gathered ``block`` at a time and each group's columns are
        summed with one ``add.reduceat`` over the concatenated group indices.
        """
        A = _as_matrix(A)
        k = len(self.rows)
        M = np.zeros((k, k))
        sizes = np.array([len(g) for g in self.groups], dtype=np.int64)
        nonempty = np.flatnonzero(sizes)
        if k == 0 or nonempty.size == 0:
            return M
        cols = np.concatenate([np.asarray(self.groups[b], dtype=np.int64) for b in nonempty])
        starts = np.concatenate([[0], np.cumsum(sizes[nonempty])[:-1]])
        rows = np.asarray(self.rows, dtype=np.int64)
        for s in range(0, k, block):
            sub = A[rows[s:s + block]][:, cols]
            M[s:s + block, nonempty] = np.add.reduceat(sub, starts, axis=1)
        return M

    def defects(self, A) -> np.ndarray:
        r"""Per selected row: :math:`|1 - M_{aa}| + \sum_{b\ne a}|M_{ab}|` (must stay below 1 - eps)."""
        M = self.mass_matrix(A)
        absM = np.abs(M)
        return np.abs(1.0 - np.diag(M)) + absM.sum(axis=1) - np.diag(absM)

    def verify(self, A, eps: float) -> bool:
        """Recheck the certificate on ``A`` from the stored rows and groups alone."""
        A = _as_matrix(A)
        n, m = A.shape
        k = len(self.rows)
        if k != len(self.groups):
            return False
        if k == 0:
            return True
        if not eps < 1:
            return False
        rows = np.asarray(self.rows)
        if rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= n or len(set(rows.tolist())) != k:
            return False
        seen = np.zeros(m, dtype=bool)
        for g in self.groups:
            g = np.asarray(g)
            if g.size == 0 or g.dtype.kind not in "iu" or g.min() < 0 or g.max() >= m:
                return False
            if len(set(g.tolist())) != g.size or seen[g].any():
                return False  # groups must be pairwise disjoint
            seen[g] = True
        # rounding: every M_ab is a sum of at most m terms of the row's absolute mass
        margin = 4 * gamma(m + 2) * (float(np.abs(A[rows]).sum(axis=1).max()) + 1.0)
        return bool(self.defects(A).max() < 1.0 - eps - margin)


@dataclass
class FrobeniusTailCertificate:
    r"""Frobenius-tail lower certificate: ``rank_eps(A) >= rank``.

    For :math:`\|E\| \le \varepsilon`, :math:`\|E_S\|_F^2 \le \sum_{i\in S}\|E_i\|_1^2 \le |S|\varepsilon^2`
    on any row set S (and any column subset). Eckart–Young then gives

    .. math:: \mathrm{rank}_\varepsilon(A) \ge \min\{k : \textstyle\sum_{l>k} \sigma_l(A_{S,T})^2 \le |S|\varepsilon^2\}.

    The certificate stores the submatrix indices and the claimed ``rank``; ``verify`` recomputes
    the exact singular values of that submatrix.

    Attributes
    ----------
    rank : int
    rows, cols : ndarray of int or None
        Submatrix indices (``None`` = all).
    """

    rank: int = 0
    rows: np.ndarray | None = None
    cols: np.ndarray | None = None
    kind: str = "frobenius-tail"

    def submatrix(self, A) -> np.ndarray:
        A = _as_matrix(A)
        S = A if self.rows is None else A[np.asarray(self.rows)]
        return S if self.cols is None else S[:, np.asarray(self.cols)]

    def verify(self, A, eps: float) -> bool:
        if self.rank == 0:
            return True
        S = self.submatrix(A)
        if self.rows is not None and len(set(np.asarray(self.rows).tolist())) != S.shape[0]:
            return False
        sigma = np.linalg.svd(S, compute_uv=False)
        if self.rank > sigma.size:
            return False
        tail = float(np.sum(sigma[self.rank - 1:] ** 2))
        # backward-stable SVD: each sigma moves by O(u * ||S||_2 * dims); be generous
        fro2 = float(np.sum(S * S))
        margin = 1e-10 * fro2 + 1e-300
        return tail > S.shape[0] * eps ** 2 + margin


@dataclass
class NormCertificate:
    """Trivial lower certificate: ``rank_eps(A) >= 1`` because ``B = 0`` has error ``||A|| > eps``."""

    rank: int = 1
    row: int = 0
    kind: str = "norm"

    def verify(self, A, eps: float) -> bool:
        A = _as_matrix(A)
        if self.rank == 0:
            return True
        if self.rank != 1 or not 0 <= self.row < A.shape[0]:
            return False
        s = float(np.abs(A[self.row]).sum())
        return s > eps + gamma(A.shape[1] + 1) * s


@dataclass
class SubspaceCertificate:
    r"""Upper certificate: an explicit ``B = L @ R`` with ``||A - B|| <= eps``, so ``rank_eps(A) <= k``.

    Attributes
    ----------
    L : ndarray, shape (n, k)
    R : ndarray, shape (k, m)
    source : str
        How the factorisation was found (for the reader; not used by ``verify``).
    """

    L: np.ndarray
    R: np.ndarray
    source: str = ""
    kind: str = "subspace"

    @property
    def rank(self) -> int:
        return int(self.L.shape[1])

    def row_errors(self, A, block: int = 1024) -> tuple[np.ndarray, np.ndarray]:
        r"""Per row: :math:`\sum_j |A - LR|_{ij}` and a rigorous rounding bound for it."""
        A = _as_matrix(A)
        L = np.asarray(self.L, dtype=np.float64)
        R = np.asarray(self.R, dtype=np.float64)
        n, m = A.shape
        k = L.shape[1]
        err = np.empty(n)
        scale = np.empty(n)
        absR = np.abs(R)
        for s in range(0, n, block):
            e = slice(s, min(n, s + block))
            err[e] = np.abs(A[e] - L[e] @ R).sum(axis=1)
            scale[e] = np.abs(A[e]).sum(axis=1) + (np.abs(L[e]) @ absR).sum(axis=1)
        return err, gamma(k + m + 2) * scale

    def verify(self, A, eps: float) -> bool:
        A = _as_matrix(A)
        L = np.asarray(self.L)
        R = np.asarray(self.R)
        if L.ndim != 2 or R.ndim != 2 or L.shape[0] != A.shape[0] or R.shape[1] != A.shape[1]:
            return False
        if L.shape[1] != R.shape[0]:
            return False
        if not (np.isfinite(L).all() and np.isfinite(R).all()):
            return False
        if A.shape[0] == 0:
            return True
        if L.shape[1] == 0:
            return _row_l1_at_most(A, eps)
        err, margin = self.row_errors(A)
        if np.any(err - margin > eps):
            return False
        unsure = np.flatnonzero(err + margin > eps)
        if np.count_nonzero(L[unsure]) * A.shape[1] > 4_000_000:
            return False  # too many rows within rounding of eps to settle exactly: refuse
        return all(_exact_row_error(A[i], L[i], R) <= Fraction(eps) for i in unsure)


def _exact_row_error(a: np.ndarray, l: np.ndarray, R: np.ndarray) -> Fraction:
    """:math:`\\sum_j |a_j - (l R)_j|` in exact rational arithmetic (for rows within rounding of eps)."""
    nz = np.flatnonzero(l)
    lf = [Fraction(x) for x in l[nz].tolist()]
    Rn = R[nz]
    total = Fraction(0)
    for j, aj in enumerate(a.tolist()):
        total += abs(Fraction(aj) - sum(x * Fraction(r) for x, r in zip(lf, Rn[:, j].tolist())))
    return total


def _row_l1_at_most(A: np.ndarray, eps: float) -> bool:
    r"""Exact test of :math:`\max_i \sum_j |A_{ij}| \le \varepsilon` for the stored float matrix.

    Rows decided by the float sum and its rounding bound are settled at once; the rest (sums
    within rounding of ``eps``) are summed exactly in rational arithmetic.
    """
    n = A.shape[0]
    sums = np.empty(n)
    for s in range(0, n, 1024):  # row blocks: no full-size temporary
        sums[s:s + 1024] = np.abs(A[s:s + 1024]).sum(axis=1)
    bound = gamma(A.shape[1] + 1) * sums
    if np.any(sums - bound > eps):
        return False
    unsure = np.flatnonzero(sums + bound > eps)
    target = Fraction(eps)
    for i in unsure:
        row = np.abs(A[i])
        if math.fsum(row) > eps or sum(map(Fraction, row.tolist())) > target:
            return False
    return True
