r"""Neumann (inverse-norm) lower certificates (``SPEC.md``, "Lower: Neumann certificate";
:ref:`prop-neumann-lower`): rows :math:`S`, disjoint key groups and :math:`M = A_S G` with
:math:`\|M^{-1}\|_{\infty\to\infty}\,\varepsilon < 1` prove :math:`\mathrm{rank}_\varepsilon(A) \ge
p`; verification bounds :math:`\|M^{-1}\|` through an approximate inverse with every rounding
(:func:`inverse_norm_bound`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .certificates import GroupedLowerCertificate
from .checks import eps_value, gamma, real_matrix

__all__ = ["NeumannCertificate", "neumann_lower_bound", "neumann_search", "inverse_norm_bound",
           "farthest_point_order", "attention_farthest_order"]


def inverse_norm_bound(M: np.ndarray, row_mass: np.ndarray, m: int) -> float:
    r"""Proven upper bound on :math:`\|M_\mathrm{exact}^{-1}\|_{\infty\to\infty}` (``inf`` if none).

    The exact aggregate differs from the computed ``M`` by :math:`\|\Delta M\| \le \gamma_m \max_a
    s_a` (``row_mass`` :math:`s_a`); with ``X = inv(M)``, :math:`\|I - X M_\mathrm{exact}\| \le
    \|\mathrm{fl}(I - XM)\| + \gamma_{p+1}\|I + |X||M|\| + \|X\|\|\Delta M\| =: \delta` and
    :math:`\|M_\mathrm{exact}^{-1}\| \le \|X\|/(1-\delta)` for :math:`\delta < 1`; every norm of a
    non-negative matrix is rounded up by :math:`1 + 2\gamma_{p+2}`."""
    p = M.shape[0]
    if p == 0:
        return 0.0
    if not np.isfinite(M).all():
        return float("inf")
    try:
        with np.errstate(all="ignore"):
            X = np.linalg.inv(M)
    except np.linalg.LinAlgError:
        return float("inf")
    if not np.isfinite(X).all():
        return float("inf")
    up = 1.0 + 2.0 * gamma(p + 2)
    absX = np.abs(X)
    with np.errstate(all="ignore"):
        R = np.eye(p) - X @ M
        res = float(np.abs(R).sum(axis=1).max()) * up
        rnd = gamma(p + 1) * float((1.0 + (absX @ np.abs(M)).sum(axis=1)).max()) * up
        xn = float(absX.sum(axis=1).max()) * up
        dM = gamma(m + 2) * float(np.max(row_mass)) * up
        delta = (res + rnd + xn * dM) * up
    if not np.isfinite(delta) or not delta < 1:
        return float("inf")
    return xn / (1.0 - delta) * up


def _aggregate(rows_of, S: np.ndarray, labels: np.ndarray, p: int, block: int = 256):
    """``M = A_S G`` for key labels (``-1``: key in no group) and the row masses, in row blocks."""
    keys = np.flatnonzero(labels >= 0)
    order = keys[np.argsort(labels[keys], kind="stable")]
    lab = labels[order]
    starts = np.searchsorted(lab, np.arange(p))
    M = np.zeros((S.size, p))
    mass = np.empty(S.size)
    for s in range(0, S.size, block):
        R = rows_of(S[s:s + block])
        mass[s:s + block] = np.abs(R).sum(axis=1)
        if order.size:
            M[s:s + block] = np.add.reduceat(R[:, order], starts, axis=1)
    return M, mass


@dataclass
class NeumannCertificate(GroupedLowerCertificate):
    r"""Neumann lower certificate: ``rank_eps(A) >= len(rows)`` when :math:`\|M^{-1}\|\varepsilon < 1`
    (stored as rows and non-empty disjoint key groups; margin of :func:`inverse_norm_bound`)."""

    kind: str = "neumann"
    nonempty_groups: ClassVar[bool] = True

    def _holds(self, A, eps, rows, groups) -> bool:
        labels = np.full(A.shape[1], -1, dtype=np.int64)  # key j in group b: labels[j] = b
        for b, g in enumerate(groups):
            labels[g] = b
        return _condition(_bound_from_rows(lambda idx: A[idx], rows, labels, A.shape[1]), eps)


def _bound_from_rows(rows_of, rows: np.ndarray, labels: np.ndarray, m: int) -> float:
    M, mass = _aggregate(rows_of, rows, labels, rows.size)
    return inverse_norm_bound(M, mass, m)


def _condition(bound: float, eps: float) -> bool:
    return bool(bound * eps * (1.0 + 1e-12) < 1.0)


def farthest_point_order(P, count: int, start: int = 0) -> np.ndarray:
    """The first ``count`` indices of a farthest-point ordering of the rows of ``P`` (from ``start``)."""
    P = np.asarray(P, dtype=np.float64)
    n = P.shape[0]
    count = min(int(count), n)
    order = np.empty(count, dtype=np.int64)
    dist = np.full(n, np.inf)
    i = int(start)
    for t in range(count):
        order[t] = i
        np.minimum(dist, ((P - P[i]) ** 2).sum(axis=1), out=dist)
        i = int(np.argmax(dist))
    return order


def attention_farthest_order(rows_of, n: int, count: int, start: int = 0) -> np.ndarray:
    r"""Farthest-point ordering of a square attention matrix without points: next the token least
    attended by every chosen row, :math:`\arg\min_i \max_{a} A_{i_a i}`."""
    count = min(int(count), n)
    order = np.empty(count, dtype=np.int64)
    cover = np.full(n, -np.inf)
    i = int(start)
    for t in range(count):
        order[t] = i
        np.maximum(cover, rows_of(np.array([i]))[0], out=cover)
        cover[order[: t + 1]] = np.inf
        i = int(np.argmin(cover))
    return order


def _voronoi_labels(rows_of, S: np.ndarray, m: int, block: int = 256) -> np.ndarray:
    """Key ``j`` goes to the selected row that attends to it most (``argmax_a A_{i_a j}``)."""
    best = np.full(m, -np.inf)
    lab = np.zeros(m, dtype=np.int64)
    for s in range(0, S.size, block):
        R = rows_of(S[s:s + block])
        arg = R.argmax(axis=0)
        val = R[arg, np.arange(m)]
        upd = val > best
        best[upd] = val[upd]
        lab[upd] = arg[upd] + s
    return lab


def _try(rows_of, S: np.ndarray, m: int, eps: float):
    """Neumann certificate on the centres ``S`` with Voronoi groups (``None`` if it fails)."""
    keep, lab = np.unique(_voronoi_labels(rows_of, S, m), return_inverse=True)
    S = S[keep]  # a centre with an empty cell is dropped
    if not _condition(_bound_from_rows(rows_of, S, lab, m), eps):
        return None
    return NeumannCertificate(rows=S.tolist(), groups=[np.flatnonzero(lab == b).tolist() for b in range(S.size)])


def neumann_search(rows_of, n: int, m: int, eps: float, order: np.ndarray, lo: int = 0):
    """Largest ``p`` found (doubling, then bisection) whose first ``p`` centres of ``order`` with Voronoi
    key groups give a :class:`NeumannCertificate` (possibly rank 0); bisection keeps a verified one,
    not always the largest (the condition is not monotone in ``p``)."""
    best = NeumannCertificate()
    if eps >= 1 or n == 0 or m == 0 or order.size == 0:
        return best
    pmax = order.size
    p, hi = max(2, min(pmax, max(lo, 1))), None
    while hi is None:  # doubling
        c = _try(rows_of, order[:p], m, eps)
        if c is None or c.rank < best.rank:
            hi = p
        elif p == pmax:
            return c
        else:
            best, p = c, min(pmax, 2 * p)
    lo_p = max(best.rank, 1)
    while hi - lo_p > 1:  # bisection
        mid = (lo_p + hi) // 2
        c = _try(rows_of, order[:mid], m, eps)
        if c is None:
            hi = mid
        else:
            best = c if c.rank > best.rank else best
            lo_p = mid
    return best


def neumann_lower_bound(A, eps: float, points=None, max_rows: int | None = None) -> NeumannCertificate:
    """Neumann certificate for a stored ``A`` (n, m), verified (rank 0 if none): farthest-point centres
    of the query ``points`` (else :func:`attention_farthest_order` for a square ``A``; rank 0 for a
    non-square one) with Voronoi key groups, ``p`` up to ``max_rows`` (default ``min(n, m)``)."""
    A = real_matrix("A", A)
    eps = eps_value(eps)
    n, m = A.shape
    cap = min(n, m) if max_rows is None else min(n, m, int(max_rows))
    if eps >= 1 or cap == 0 or (A < 0).any():
        return NeumannCertificate()
    rows_of = lambda idx: A[idx]  # noqa: E731
    if points is not None:
        P = real_matrix("points", points)
        if P.shape[0] != n:
            raise ValueError(f"points has {P.shape[0]} rows but A has {n}")
        order = farthest_point_order(P, cap)
    elif n == m:
        order = attention_farthest_order(rows_of, n, cap)
    else:
        return NeumannCertificate()
    return neumann_search(rows_of, n, m, eps, order)
