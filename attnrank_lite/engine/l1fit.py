r"""l1-fitted subspace certificates (``SPEC.md``, "Upper: l1-fitted subspace certificate"): the rows
fitted in l1 in the span of an orthonormal :math:`V` (m x k) by the SPEC's ADMM, in row blocks,
give :math:`B = C V^\top`, an ordinary :class:`~attnrank_lite.engine.certificates.SubspaceCertificate`;
row by row the better of the fit and the projection :math:`AV` is kept.

**Dual bound.** For :math:`|y_j| \le 1`, :math:`\|a - cV^\top\|_1 \ge \langle a, y\rangle -
\langle c, V^\top y\rangle`; with :math:`y` the iterate's :math:`\rho U`, projected off :math:`V`
and rescaled into the cube, and :math:`\|c^*\|_2 \le \|a\|_2 + \|a\|_1`,
:math:`\min_c \|a - cV^\top\|_1 \ge \langle a, y\rangle - (\|a\|_2 + \|a\|_1)\|V^\top y\|_2`. It
steers and stops the iteration; it certifies nothing.

**Monotone family.** For nested :math:`V_k` the best l1 fit is non-increasing in k, so bisection
over k is sound for the exact optimum; a rank where the inexact iteration decides nothing counts
as failed, so the search returns a valid certificate, not always the smallest k."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .certificates import SubspaceCertificate, search_target
from .checks import eps_value, real_matrix
from .norms import row_l1_blockwise
from .row_source import evenly_spaced_rows
from .upper import exact_factorisation, nested_certificate

__all__ = ["L1Fit", "l1_fit", "l1_fit_rows", "l1_family_search", "l1_improve", "l1_upper_bound"]

#: iterations between checks of the duality gap (and of the search's stopping rules)
CHECK_EVERY = 25
#: row-search sample: evenly spaced rows, plus rows that failed a full check
SAMPLE_ROWS = 128


@dataclass
class L1Fit:
    r"""Coefficients of the rows of ``A`` in a subspace, fitted in l1.

    Attributes
    ----------
    C : ndarray, shape (n, k)
        ``B = C @ V.T``; per row the better of the ADMM iterate and the projection ``A V``.
    errors, rounding, projected, lower : ndarray, shape (n,)
        Row errors recomputed, a proven bound on their rounding, the projection's errors, dual lower
        bounds on each row's best l1 fit (0 where never computed).
    status : str
        ``"ok"`` (every row within ``target``, or none), ``"fail"`` (a dual bound exceeds it), ``"unknown"``.
    steps : int
        Most iterations spent on a row."""

    C: np.ndarray
    errors: np.ndarray
    rounding: np.ndarray
    projected: np.ndarray
    lower: np.ndarray
    status: str
    steps: int

    @property
    def max_error(self) -> float:
        """Max row error of the fitted factorisation (0 for no rows)."""
        return float(self.errors.max()) if self.errors.size else 0.0

    @property
    def max_projected(self) -> float:
        """Max row error of the projection ``A V V^T``."""
        return float(self.projected.max()) if self.projected.size else 0.0


def _orthonormal(V) -> np.ndarray:
    """``V`` as a float matrix, after checking ``V^T V = I`` (to 1e-6): the iteration needs it."""
    V = real_matrix("V", V)
    G = V.T @ V
    G[np.diag_indices_from(G)] -= 1.0
    if G.size and not np.abs(G).max() <= 1e-6:
        raise ValueError(f"V must have orthonormal columns; max |V^T V - I| = {np.abs(G).max():.2g}")
    return V


def _dual_bound(Ab, Ub, rho, V):
    """Per row, the dual lower bound of the module docstring from the scaled dual ``Ub``."""
    y = rho * Ub
    y -= (y @ V) @ V.T
    y /= np.maximum(1.0, np.abs(y).max(axis=1, keepdims=True))
    off = np.linalg.norm(y @ V, axis=1)
    size = np.linalg.norm(Ab, axis=1) + np.abs(Ab).sum(axis=1)
    return np.einsum("ij,ij->i", Ab, y) - size * off


@np.errstate(over="ignore", invalid="ignore", under="ignore")
def _admm(Ab, V, steps, gap, target, stop_on_fail):
    """ADMM on the rows ``Ab`` (b x m): (C, projected errors, lower bounds, status, steps). Non-finite
    iterates (data near the float range) are never kept, non-finite dual bounds count as none."""
    b, k = Ab.shape[0], V.shape[1]
    C = Ab @ V
    best = np.abs(Ab - C @ V.T).sum(axis=1)
    proj = best.copy()
    lower = best.copy() if k == 0 else np.zeros(b)
    done = best == 0.0 if target is None else best <= target
    act = np.flatnonzero(~done) if k and steps else np.zeros(0, dtype=np.int64)
    A_a = Ab[act]
    Z = A_a - C[act] @ V.T
    U = np.zeros_like(Z)
    rho = 1.0 / np.maximum(np.abs(Z).mean(axis=1, keepdims=True), np.finfo(float).tiny)
    t = 0
    while act.size and t < steps:
        t += 1
        Ca = (A_a - Z + U) @ V
        R = A_a - Ca @ V.T
        e = np.abs(R).sum(axis=1)
        better = e < best[act]
        if better.any():
            best[act[better]] = e[better]
            C[act[better]] = Ca[better]
        R += U  # W = R + U
        np.subtract(np.abs(R), 1.0 / rho, out=Z)
        np.maximum(Z, 0.0, out=Z)
        Z *= np.sign(R)
        np.subtract(R, Z, out=U)
        # rows that reached the target stop at once (no products needed to know it)
        stop = best[act] <= target if target is not None else np.zeros(act.size, dtype=bool)
        if t % CHECK_EVERY == 0 or t == steps:
            lb = _dual_bound(A_a, U, rho, V)
            lower[act] = np.maximum(lower[act], np.where(np.isfinite(lb), lb, 0.0))
            if target is not None and stop_on_fail and np.any(lower[act] > target):
                return C, proj, lower, "fail", t
            if gap is not None:
                stop |= best[act] - lower[act] <= gap * best[act]
        elif stop.sum() < max(1, act.size // 8) or stop.all():
            if stop.all():
                break
            continue  # compact the active rows only when enough of them stopped
        if stop.any():
            keep = ~stop
            act, A_a, Z, U, rho = act[keep], A_a[keep], Z[keep], U[keep], rho[keep]
    if target is None or np.all(best <= target):
        return C, proj, lower, "ok", t
    return C, proj, lower, "fail" if np.any(lower > target) else "unknown", t


def l1_fit_rows(rows, n: int, V, *, steps: int = 300, gap: float | None = 1e-3, target=None,
                stop_on_fail: bool = False, block: int = 512) -> L1Fit:
    """:func:`l1_fit` on the row blocks ``rows(idx)`` (``A[idx]``) of an ``n``-row matrix not stored."""
    V = _orthonormal(V)
    m, k = V.shape
    C = np.zeros((n, k))
    errors, rounding, projected, lower = np.zeros((4, n))
    statuses = []
    steps_used = 0
    for s in range(0, n, block):
        idx = np.arange(s, min(n, s + block))
        Ab = real_matrix("rows", rows(idx))
        if Ab.shape != (idx.size, m):
            raise ValueError(f"rows(idx) has shape {Ab.shape}, expected {(idx.size, m)}")
        Cb, proj, lb, status, used = _admm(Ab, V, steps, gap, target, stop_on_fail)
        C[idx], lower[idx], projected[idx] = Cb, lb, proj
        errors[idx], rounding[idx] = row_l1_blockwise(Ab, Cb, V.T, bound=True)
        statuses.append(status)
        steps_used = max(steps_used, used)
        if status == "fail" and stop_on_fail:
            break
    status = "fail" if "fail" in statuses else ("unknown" if "unknown" in statuses else "ok")
    return L1Fit(C, errors, rounding, projected, lower, status, steps_used)


def l1_fit(A, V, *, steps: int = 300, gap: float | None = 1e-3, target=None,
           stop_on_fail: bool = False, block: int = 512) -> L1Fit:
    """Every row of ``A`` (n, m) fitted in l1 within the span of ``V`` (m, k), orthonormal columns
    (``ValueError`` if ``max |V^T V - I| > 1e-6``), by the module's ADMM in blocks of ``block`` rows.

    Parameters
    ----------
    steps : int
        Most iterations per row (300 reach the per-row LP optimum to about three digits).
    gap : float or None
        A row stops once within ``gap`` (relative) of its dual lower bound.
    target : float, optional
        A row stops once its error is ``<= target``; with ``stop_on_fail`` the fit stops once some
        row's dual bound exceeds it."""
    A = real_matrix("A", A)
    return l1_fit_rows(lambda idx: A[idx[0]:idx[-1] + 1], A.shape[0], V, steps=steps, gap=gap,
                       target=target, stop_on_fail=stop_on_fail, block=block)


def l1_family_search(rows, n: int, V, eps: float, *, lo: int = 0, hi: int | None = None,
                     steps: int = 300, sample: int = SAMPLE_ROWS, block: int = 512, source=""):
    """Smallest k in ``(lo, hi]`` (``hi`` default ``l``) whose l1-fitted rows in ``V[:, :k]`` meet
    ``eps``, as a certificate ``B = C V_k^T`` (``None`` if none was accepted).

    Bisection over k on a sample of rows (a sample row whose dual bound exceeds eps refutes k); the
    smallest k the sample accepts is fitted on all ``n`` rows ``rows(idx)``, and on failure its worst
    rows join the sample and the search continues above. A rank is accepted only when every row's
    error plus twice its proven rounding bound is ``<= eps``. ``source`` (or ``source(k)``) names the
    family."""
    V = _orthonormal(V)
    eps = eps_value(eps)
    target = search_target(eps)
    l = V.shape[1]
    hi = l if hi is None else min(int(hi), l)
    lo = max(0, min(int(lo), hi))
    idx = evenly_spaced_rows(n, sample)
    As = rows(idx)
    best = None  # (k, C): accepted on all rows
    while lo < hi:
        # bisection on the sample in (lo, hi]; s_hi = hi + 1 stands for "none accepted"
        s_lo, s_hi = lo, hi + 1
        while s_hi - s_lo > 1:
            mid = (s_lo + s_hi) // 2
            if _admm(As, V[:, :mid], steps, None, target, True)[3] == "ok":
                s_hi = mid
            else:
                s_lo = mid
        if s_hi > hi:
            break  # the sample accepts no k <= hi
        full = l1_fit_rows(rows, n, V[:, :s_hi], steps=steps, gap=None, target=target,
                           stop_on_fail=True, block=block)
        if full.status == "ok" and np.all(full.errors + 2 * full.rounding <= eps):
            best = (s_hi, full.C)  # and the sample refused s_hi - 1
            break
        lo = s_hi
        worst = np.setdiff1d(np.argsort(full.errors)[::-1][:max(8, sample // 8)], idx)
        if worst.size:
            idx = np.concatenate([idx, worst])
            As = np.concatenate([As, rows(worst)])
    if best is None:
        return None
    k, C = best
    name = source(k) if callable(source) else source
    return SubspaceCertificate(C, V[:, :k].T.copy(), source=f"l1 fit in {name}" if name else "l1 fit")


def l1_improve(rows, n: int, eps: float, bases, *, lo: int = 0, hi: int, steps: int = 300,
               block: int = 512):
    """The smallest l1-fitted certificate of rank in ``(lo, hi]`` over the nested families ``bases``
    (``(V, source)`` pairs; non-orthonormal ones skipped), each searched by
    :func:`l1_family_search` below the best rank so far; ``None`` when none certifies."""
    best = None
    for V, source in bases:
        try:
            V = _orthonormal(V)
        except ValueError:
            continue
        top = hi if best is None else best.rank - 1
        if top <= lo or V.shape[1] == 0:
            continue
        cert = l1_family_search(rows, n, V, eps, lo=lo, hi=min(top, V.shape[1]), steps=steps,
                                block=block, source=source)
        if cert is not None:
            best = cert
    return best


def l1_upper_bound(A, eps: float, *, svd=None, V=None, lo: int = 0, steps: int = 300,
                   source: str = "dense SVD"):
    """Best of the projected and the l1-fitted certificates over one nested family of ``A`` (shape
    (n, m)): ``V`` (orthonormal, nested) or the top right-singular vectors (from ``svd`` or a dense
    SVD). The projected certificate bounds the l1 search from above; ``lo`` is a rank known to fail.
    Returns a certificate verified on ``A``, the l1-fitted one when it certifies a smaller rank."""
    A = real_matrix("A", A)
    eps = eps_value(eps)
    if V is None:
        V = (np.linalg.svd(A, full_matrices=False) if svd is None else svd)[2].T
    else:
        V = _orthonormal(V)
    plain = nested_certificate(A, V, eps, lo=lo, source=source)
    hi = V.shape[1] if plain is None else plain.rank - 1
    if hi > lo:
        fitted = l1_family_search(lambda idx: A[idx], A.shape[0], V, eps, lo=lo, hi=hi,
                                  steps=steps, source=source)
        if fitted is not None and fitted.verify(A, eps):
            return fitted
    return plain if plain is not None else exact_factorisation(A)
