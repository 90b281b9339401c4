"""Searches that produce lower certificates (the book's :ref:`prop-certificate-chain`)."""
from __future__ import annotations

import numpy as np

from .certificates import ClusterMassCertificate, FrobeniusTailCertificate, frobenius_budget, frobenius_tail_bounds
from .checks import eps_value, gamma, index_array, real_matrix

__all__ = ["cluster_mass_lower_bound", "frobenius_tail_lower_bound"]


def _core_sizes(A: np.ndarray, thresholds: np.ndarray, block: int, top: int = 64) -> np.ndarray:
    """Fewest of a row's largest entries whose sum exceeds its threshold (m + 1 if none); the ``top``
    largest first (a partition), a full sort only when needed, same values summed in the same order."""
    n, m = A.shape
    core = np.full(n, m + 1, dtype=np.int64)
    t = min(m, top)
    for s in range(0, n, block):
        e = slice(s, min(n, s + block))
        blk = A[e]
        if t < m:
            part = -np.partition(-blk, t - 1, axis=1)[:, :t]
            srt = -np.sort(-part, axis=1)
        else:
            srt = -np.sort(-blk, axis=1)
        csum = np.cumsum(srt, axis=1)
        hit = csum > thresholds[e, None]
        ok = hit.any(axis=1)
        core[e] = np.where(ok, hit.argmax(axis=1) + 1, m + 1)
        rest = np.flatnonzero(~ok) if t < m else np.array([], dtype=np.int64)
        if rest.size:
            full = -np.sort(-blk[rest], axis=1)
            hit = np.cumsum(full, axis=1) > thresholds[e][rest, None]
            core[s + rest] = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, m + 1)
    return core


def _largest_free_group(a: np.ndarray, used: np.ndarray, thr: float, top: int = 64):
    """Indices of the fewest largest entries of ``a`` outside ``used`` whose sum exceeds ``thr``
    (``None`` if all free entries do not); the ``top`` largest free ones first."""
    free = np.flatnonzero(~used)
    if free.size == 0:
        return None
    vals = a[free]
    t = min(free.size, top)
    if t < free.size:
        cand = np.argpartition(-vals, t - 1)[:t]
        cand = cand[np.argsort(-vals[cand], kind="stable")]
        csum = np.cumsum(vals[cand])
        j = int(np.searchsorted(csum, thr, side="right"))
        if j < cand.size:
            return free[cand[: j + 1]]
    if vals.sum() <= thr:
        return None
    idx = np.argsort(-vals, kind="stable")
    csum = np.cumsum(vals[idx])
    j = int(np.searchsorted(csum, thr, side="right"))
    return free[idx[: j + 1]] if j < idx.size else None


def cluster_mass_lower_bound(A, eps: float, block: int = 512) -> ClusterMassCertificate:
    r"""Greedy cluster-mass certificate (:ref:`prop-cluster-mass`) for a non-negative ``A`` (n, m).

    A row of mass :math:`s_i` putting more than :math:`(s_i+\varepsilon)/2` on a private key group
    meets the condition whatever the other groups are. Rows by increasing core size: a first pass
    accepts rows whose core is unused, a second builds groups from the largest unused keys; the
    certificate is verified on ``A`` (empty for ``eps >= 1``)."""
    A = real_matrix("A", A)
    eps = eps_value(eps)
    n, m = A.shape
    if eps >= 1 or n == 0 or m == 0 or (A < 0).any():
        return ClusterMassCertificate()
    rowsum = A.sum(axis=1)
    margin = 8 * gamma(m + 2) * (rowsum + 1.0) + 1e-13
    thr = (rowsum + eps) / 2 + margin
    core = _core_sizes(A, thr, block)
    order = np.argsort(core, kind="stable")
    order = order[core[order] <= m]
    used = np.zeros(m, dtype=bool)
    chosen = np.zeros(n, dtype=bool)
    rows, groups = [], []

    def accept(i, g):
        rows.append(int(i))
        groups.append(np.sort(g).tolist())
        used[g] = True
        chosen[i] = True

    # pass 1: rows whose own core (largest entries) is still entirely free: packs cores tightly
    for i in order:
        c = int(core[i])
        g = np.argpartition(-A[i], c - 1)[:c] if c < m else np.arange(m)
        if not used[g].any() and A[i, g].sum() > thr[i]:
            accept(i, g)
    # pass 2: the remaining rows build a group from the largest still-unused keys
    for i in order:
        if chosen[i]:
            continue
        g = _largest_free_group(A[i], used, thr[i])
        if g is not None:
            accept(i, g)
    cert = ClusterMassCertificate(rows=rows, groups=groups)
    # exact check; dropping a failing row only lowers the others' off-diagonal mass
    while cert.rank and not cert.verify(A, eps):
        defects = cert.defects(A)
        bad = defects >= 1 - eps - cert.margins(A)
        if not bad.any():
            bad[np.argmax(defects)] = True
        keep = np.flatnonzero(~bad)
        cert = ClusterMassCertificate(rows=[cert.rows[i] for i in keep], groups=[cert.groups[i] for i in keep])
    return cert


def frobenius_tail_lower_bound(A, eps: float, svd=None, rows=None, cols=None,
                               tails=None) -> FrobeniusTailCertificate:
    r"""Frobenius-tail certificate (:ref:`prop-frobenius-tail`) for ``S = A[rows][:, cols]`` (``None``:
    all): the least ``k`` whose proven tail bound
    (:func:`~attnrank_lite.engine.certificates.frobenius_tail_bounds`, the computation ``verify``
    runs) is within :math:`|S|\varepsilon^2`. ``svd``: a thin SVD of ``S`` already computed (never a
    randomized one: checked, but certifying little); ``tails``: the bounds already computed."""
    A = real_matrix("A", A)
    eps = eps_value(eps)
    rows = None if rows is None else index_array("rows", rows, A.shape[0])
    cols = None if cols is None else index_array("cols", cols, A.shape[1])
    S = A if rows is None else A[rows]
    S = S if cols is None else S[:, cols]
    budget = frobenius_budget(S.shape[0], eps)
    if svd is None and tails is None and float(np.einsum("ij,ij->", S, S)) <= budget:
        # the whole Frobenius mass (= the tail after k = 0) already fits: no SVD needed
        return FrobeniusTailCertificate(rank=0)
    t = frobenius_tail_bounds(S, svd=svd) if tails is None else np.asarray(tails)
    k = int(np.argmax(t <= budget))  # t[-1] <= 0 <= budget: always found
    return FrobeniusTailCertificate(rank=k, rows=rows, cols=cols)

