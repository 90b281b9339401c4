r"""Each certificate kind's condition (``SPEC.md`` section 2), rechecked with the checker's own bounds.

Every function takes the :class:`~attnrank_lite.checker.instance.Instance`, the stored data and
``eps``, and returns the rank the data prove (``None``: nothing). Rows of a recipe carry the
distance :math:`\delta_i` to the exact matrix: a lower certificate is checked on the computed
rows at :math:`\varepsilon + \max_{i\in S}\delta_i` (any ``B`` within ``eps`` of the exact rows is
within that of the computed ones), an upper certificate needs every computed row error
:math:`\le \varepsilon - \delta_i`. For a stored matrix small enough (:data:`EXACT_LIMIT`), the
conditions are evaluated in exact rational arithmetic (:class:`fractions.Fraction`) instead.

Float rounding bounds (``u = 2^-53``, :math:`\gamma_k`, :math:`\eta = 2^{-1074}`):

* factors ``L R``: :math:`\sum_j|A - LR|_{ij} \le S_i/((1-u)(1-\gamma_m)) +
  \gamma_k T_i/((1-\gamma_k)(1-\gamma_m)) + 2km\eta` with :math:`S_i` the computed
  :math:`\sum_j|\mathrm{fl}(A - \mathrm{fl}(LR))_{ij}|` and :math:`T_i` the computed
  :math:`\sum_j(|L||R|)_{ij}`;
* aggregates :math:`M = A_S G` (disjoint groups): the exact matrix is within
  :math:`\gamma_m s_a` in row ``a``'s l1 norm (:math:`s_a = \sum_j|A_{i_a j}|`);
* every computed sum of ``N`` non-negative terms is multiplied by :math:`1/(1-\gamma_N)` before
  a comparison, and comparisons keep a relative ``4u`` on both sides.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .instance import ETA, Instance, U, gamma

__all__ = ["EXACT_LIMIT", "distinct_indices", "factor_rank", "cluster_mass_rank", "neumann_rank",
           "right_inverse_rank", "norm_rank", "frobenius_rank"]

#: exact rational arithmetic when the work (entries touched times inner length) is below this
EXACT_LIMIT = 300_000
_BLOCK = 512


def distinct_indices(arr, size: int) -> np.ndarray:
    """Stored indices: int64 1-D, in ``[0, size)``, no repeats (``ValueError`` otherwise)."""
    if not isinstance(arr, np.ndarray) or arr.dtype.str != "<i8" or arr.ndim != 1:
        raise ValueError("indices must be a 1-D int64 array")
    if arr.size and (arr.min() < 0 or arr.max() >= size or np.unique(arr).size != arr.size):
        raise ValueError("indices out of range or repeated")
    return arr


def _up(x: float) -> float:
    return x * (1 + 4 * U) + ETA


def _down(x: float) -> float:
    return x * (1 - 4 * U) - ETA


def _fr(x) -> Fraction:
    return Fraction(float(x))


# ----------------------------------------------------------------------------------- upper side

def factor_rank(inst: Instance, L: np.ndarray, R: np.ndarray, eps: float, *, left=None) -> int | None:
    """``k`` when ``B = L R`` (stored floats, ``L``: n x k, ``R``: k x m) meets ``eps`` on every row.

    ``left``: a function of a row block's computed rows giving that block of ``L`` (harmonic:
    ``A_hat V``); ``L`` is then ``None``.
    """
    n, m = inst.n, inst.m
    k = R.shape[0]
    if R.shape[1] != m or (L is not None and L.shape != (n, k)):
        return None
    if not (np.isfinite(R).all() and (L is None or np.isfinite(L).all())):
        return None
    if inst.exact and left is None and n * m * (k + 1) <= EXACT_LIMIT:
        target = _fr(eps)
        Rf = [[_fr(x) for x in row] for row in R.tolist()]
        for i in range(n):
            li = [_fr(x) for x in L[i].tolist()]
            err = sum(abs(_fr(inst.A[i, j]) - sum(li[c] * Rf[c][j] for c in range(k))) for j in range(m))
            if err > target:
                return None
        return k
    gk, gm = gamma(max(k, 1)), gamma(m)
    absR = np.abs(R)
    for s in range(0, n, _BLOCK):
        idx = np.arange(s, min(n, s + _BLOCK))
        Ab, delta = inst.rows(idx)
        Lb = left(Ab) if left is not None else L[idx]
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            S = np.abs(Ab - Lb @ R).sum(axis=1)
            T = (np.abs(Lb) @ absR).sum(axis=1)
            bound = S / ((1 - U) * (1 - gm)) + gk * T / ((1 - gk) * (1 - gm)) + 2 * k * m * ETA
        total = _up(1.0) * (bound + delta) * (1 + 4 * U)
        if not (np.isfinite(total).all() and np.all(total <= eps)):
            return None
    return k


# ----------------------------------------------------------------------------------- lower side

def _groups(keys: np.ndarray, offsets: np.ndarray, p: int, m: int, nonempty: bool) -> list:
    if offsets.dtype.str != "<i8" or offsets.ndim != 1 or offsets.size != p + 1 or offsets[0] != 0 \
            or offsets[-1] != keys.size or np.any(np.diff(offsets) < 0):
        raise ValueError("offsets do not cut the keys into one group per row")
    distinct_indices(keys, m)  # disjoint groups: no key twice in the concatenation
    groups = [keys[offsets[b]:offsets[b + 1]] for b in range(p)]
    if nonempty and any(g.size == 0 for g in groups):
        raise ValueError("empty group")
    return groups


def _aggregate(inst, rows, groups):
    """Computed ``M`` (p x p), row masses ``s``, and the rows' ``delta``."""
    Ar, delta = inst.rows(rows)
    M = np.stack([Ar[:, g].sum(axis=1) for g in groups], axis=1) if groups else np.zeros((rows.size, 0))
    s = np.abs(Ar).sum(axis=1)
    return Ar, M, s, delta


def _exact_M(inst, rows, groups):
    return [[sum((_fr(inst.A[i, j]) for j in g.tolist()), Fraction(0)) for g in groups] for i in rows.tolist()]


def cluster_mass_rank(inst, rows, keys, offsets, eps) -> int | None:
    """``p`` when :math:`\\max_a |1 - M_{aa}| + \\sum_{b\\ne a}|M_{ab}| < 1 - \\varepsilon`."""
    rows = distinct_indices(rows, inst.n)
    p = rows.size
    groups = _groups(keys, offsets, p, inst.m, nonempty=False)
    if p == 0:
        return 0
    if not eps < 1:
        return None
    if inst.exact and p * inst.m <= EXACT_LIMIT:
        M = _exact_M(inst, rows, groups)
        one, e = Fraction(1), _fr(eps)
        ok = all(abs(one - M[a][a]) + sum(abs(M[a][b]) for b in range(p) if b != a) < one - e for a in range(p))
        return p if ok else None
    _, M, s, delta = _aggregate(inst, rows, groups)
    e = _up(eps + float(delta.max()))
    absM = np.abs(M)
    defect = np.abs(1.0 - np.diag(M)) + absM.sum(axis=1) - np.diag(absM)
    bound = (defect + 2 * gamma(inst.m) * s + gamma(p + 3) * (s + 2.0)) * (1 + 4 * U)
    return p if np.all(bound < _down(1.0 - e)) else None


def _inverse_exact(M: list) -> list | None:
    p = len(M)
    aug = [row[:] + [Fraction(int(i == j)) for j in range(p)] for i, row in enumerate(M)]
    for c in range(p):
        piv = next((r for r in range(c, p) if aug[r][c] != 0), None)
        if piv is None:
            return None
        aug[c], aug[piv] = aug[piv], aug[c]
        inv = 1 / aug[c][c]
        aug[c] = [x * inv for x in aug[c]]
        for r in range(p):
            if r != c and aug[r][c] != 0:
                f = aug[r][c]
                aug[r] = [x - f * y for x, y in zip(aug[r], aug[c])]
    return [row[p:] for row in aug]


def neumann_rank(inst, rows, keys, offsets, eps) -> int | None:
    """``p`` when :math:`\\|M^{-1}\\|_\\infty\\,\\varepsilon < 1` (groups non-empty and disjoint).

    Float path: ``X = inv(M_hat)``; the exact ``M`` is within :math:`\\Delta = \\gamma_m\\max_a s_a`;
    :math:`\\|I - XM\\| \\le \\|\\mathrm{fl}(I - X\\hat M)\\| + \\gamma_p\\||X||\\hat M|\\| +
    \\|X\\|\\Delta =: r < 1` gives :math:`\\|M^{-1}\\| \\le \\|X\\|/(1 - r)`.
    """
    rows = distinct_indices(rows, inst.n)
    p = rows.size
    groups = _groups(keys, offsets, p, inst.m, nonempty=True)
    if p == 0:
        return 0
    if not eps < 1:
        return None
    if inst.exact and p * inst.m <= EXACT_LIMIT and p <= 40:
        inv = _inverse_exact(_exact_M(inst, rows, groups))
        if inv is None:
            return None
        norm = max(sum(abs(x) for x in row) for row in inv)
        return p if norm * _fr(eps) < 1 else None
    _, M, s, delta = _aggregate(inst, rows, groups)
    e = _up(eps + float(delta.max()))
    try:
        X = np.linalg.inv(M)
    except np.linalg.LinAlgError:
        return None
    if not np.isfinite(X).all():
        return None
    grow = 1.0 / (1.0 - gamma(p + 2))
    res = np.abs(np.eye(p) - X @ M).sum(axis=1).max() * grow / (1 - U)
    prod = (np.abs(X) @ np.abs(M)).sum(axis=1).max() * grow / (1 - gamma(p))
    xnorm = np.abs(X).sum(axis=1).max() * grow
    dM = gamma(inst.m) * float(s.max()) * grow
    r = _up(res + gamma(p) * prod + xnorm * dM)
    if not r < 1:
        return None
    bound = _up(xnorm / _down(1.0 - r))
    return p if _up(bound * e) < 1 else None


def right_inverse_rank(inst, rows, X, eps) -> int | None:
    """``p`` when :math:`\\|I - A_S X\\|_\\infty + \\varepsilon\\|X\\|_\\infty < 1`."""
    rows = distinct_indices(rows, inst.n)
    p = rows.size
    if X.dtype.str != "<f8" or X.shape != (inst.m, p) or not np.isfinite(X).all():
        return None
    if p == 0:
        return 0
    if inst.exact and p * p * inst.m <= EXACT_LIMIT:
        Xf = [[_fr(x) for x in row] for row in X.tolist()]
        worst = Fraction(0)
        for a, i in enumerate(rows.tolist()):
            Ai = [_fr(x) for x in inst.A[i].tolist()]
            worst = max(worst, sum(abs(int(a == b) - sum(Ai[j] * Xf[j][b] for j in range(inst.m))) for b in range(p)))
        xn = max(sum(abs(x) for x in row) for row in Xf)
        return p if worst + _fr(eps) * xn < 1 else None
    Ar, delta = inst.rows(rows)
    e = _up(eps + float(delta.max()))
    g = gamma(inst.m)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        res = (np.abs(np.eye(p) - Ar @ X) / (1 - U) + g / (1 - g) * (np.abs(Ar) @ np.abs(X))).sum(axis=1).max()
        xn = np.abs(X).sum(axis=1).max()
    grow = 1.0 / (1.0 - gamma(max(p, inst.m) + 2))
    total = _up((res * grow + (inst.m + p) * ETA) + e * (xn * grow + p * ETA))
    return p if np.isfinite(total) and total < 1 else None


def norm_rank(inst, rank, row, eps) -> int | None:
    """1 when row ``row`` has l1 mass above ``eps`` (0 claims nothing)."""
    if type(rank) is not int or type(row) is not int or rank not in (0, 1):
        return None
    if rank == 0:
        return 0
    if not 0 <= row < inst.n:
        return None
    Ar, delta = inst.rows(np.array([row]))
    if inst.exact and inst.m <= EXACT_LIMIT:
        return 1 if sum(abs(_fr(x)) for x in Ar[0].tolist()) > _fr(eps) else None
    mass = _down(float(np.abs(Ar[0]).sum()) * (1 - gamma(inst.m)) - inst.m * ETA)
    return 1 if mass > _up(eps + float(delta[0])) else None


def frobenius_rank(inst, rank, rows, cols, eps) -> int | None:
    r"""``rank`` when the tail :math:`\sum_{l \ge rank}\sigma_l(S)^2` provably exceeds :math:`|S|\varepsilon^2`.

    With the smaller Gram matrix ``G`` of the submatrix ``S`` (t x t), its computed ``G_hat`` is
    within :math:`\gamma_q\|S\|_F^2` in the 2-norm; ``eigh`` gives ``G_hat = W diag(w) W^T + F``
    with ``F`` measured; by Ostrowski's theorem the eigenvalues of ``W diag(w) W^T`` are at most
    :math:`\theta\max(w_l, 0)` with :math:`\theta \le 1 + \|W^TW - I\|_F`; Ky Fan and Weyl give
    :math:`\sum_{l<k}\lambda_l(G) \le \theta\sum_{l<k}\max(w_l,0) + k(\|F\|_2 + \gamma_q\|S\|_F^2)`,
    and the tail is :math:`\|S\|_F^2` minus that.
    """
    if type(rank) is not int or rank < 0:
        return None
    ridx = np.arange(inst.n) if rows is None else distinct_indices(rows, inst.n)
    cidx = np.arange(inst.m) if cols is None else distinct_indices(cols, inst.m)
    if rank == 0:
        return 0
    p, q = ridx.size, cidx.size
    if rank > min(p, q) or p * q > 5 * 10**7:
        return None
    Ar, delta = inst.rows(ridx)
    S = Ar[:, cidx]
    e = _up(eps + float(delta.max()))
    G = S @ S.T if p <= q else S.T @ S
    t, inner = G.shape[0], max(p, q)
    w, W = np.linalg.eigh(G)
    w, W = w[::-1], W[:, ::-1]
    grow = 1.0 / (1.0 - gamma(t * t + inner + 4))
    F = G - (W * w) @ W.T
    absW = np.abs(W)
    f_norm = (np.sqrt((F * F).sum()) * grow
              + gamma(t + 2) * (np.sqrt((G * G).sum()) + float((np.abs(w) * (absW * absW).sum(axis=0)).sum())) * grow)
    E = W.T @ W - np.eye(t)
    theta = 1.0 + (np.sqrt((E * E).sum()) + gamma(t + 1) * float((absW * absW).sum())) * grow
    fro2_up = float((S * S).sum()) * grow
    fro2_low = _down(float((S * S).sum()) * (1 - gamma(p * q + 1)) - p * q * ETA)
    k = rank - 1
    head = _up(theta * float(np.maximum(w[:k], 0).sum()) * grow + k * (f_norm + gamma(inner) * fro2_up) * grow)
    tail = _down(fro2_low - head)
    budget = _up(p * e * e * (1 + gamma(4)) + p * ETA)
    return rank if tail > budget else None
