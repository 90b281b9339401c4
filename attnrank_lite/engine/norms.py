"""The max-row-l1 norm and its bounded-output characterisation (:ref:`prop-bounded-outputs`)."""
from __future__ import annotations

import numpy as np

from .checks import gamma, real_array

__all__ = ["bounded_output_error", "row_l1", "row_l1_blockwise", "worst_case_values"]


def row_l1(E) -> float:
    r"""Max-row-l1 norm :math:`\|E\| = \max_i \sum_j |E_{ij}|` (:ref:`def-rank-eps`), the
    :math:`\ell_\infty \to \ell_\infty` operator norm, of a real ``E`` (n, m); ``0.0`` when empty."""
    E = real_array("E", E, ndim=2, finite=False)
    if E.size == 0:
        return 0.0
    return float(row_l1_blockwise(E).max())


def row_l1_blockwise(A: np.ndarray, L: np.ndarray | None = None, R: np.ndarray | None = None,
                     block: int = 1024, bound: bool = False):
    r"""Row l1 norms of :math:`A` (n, m) minus :math:`L R` (n, k times k, m; none when ``L is None``),
    ``block`` rows at a time (``L @ R`` never formed in full); with ``bound``, also a proven bound on
    each computed row sum's rounding error.

    Returns
    -------
    err : ndarray, shape (n,)
        Computed :math:`\sum_j |A_{ij} - (LR)_{ij}|`.
    rounding : ndarray, shape (n,)
        With ``bound=True``: :math:`2\gamma_{k+m+4}(\sum_j |A_{ij}| + \sum_j (|L||R|)_{ij}) +
        m(k+1)\eta`, :math:`\eta = 2^{-1074}`. Proof: each inner product is within
        :math:`\gamma_k (|L||R|)_{ij} + k\eta` for any summation order (Higham, eq. (3.5)); the
        subtraction and absolute value add ``u``, the m-term sum :math:`\gamma_m`: in all
        :math:`\gamma_{k+m+2}` times the bracket; the factor 2 covers the bracket's own evaluation."""
    n, m = A.shape
    out = np.empty(n)
    rnd = np.empty(n) if bound else None
    k = 0 if L is None else L.shape[1]
    absR = None if (L is None or not bound) else np.abs(R)
    for s in range(0, n, block):
        e = slice(s, min(n, s + block))
        if L is None:
            out[e] = np.abs(A[e]).sum(axis=1)
            if bound:
                rnd[e] = out[e]
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                out[e] = np.abs(A[e] - L[e] @ R).sum(axis=1)
                if bound:
                    rnd[e] = np.abs(A[e]).sum(axis=1) + (np.abs(L[e]) @ absR).sum(axis=1)
    if not bound:
        return out
    eta = np.finfo(np.float64).smallest_subnormal
    with np.errstate(over="ignore"):
        rnd = 2 * gamma(k + m + 4) * rnd + m * (k + 1) * eta
    return out, rnd


def worst_case_values(E) -> tuple[np.ndarray, float]:
    r"""The bounded value matrix attaining :math:`\|E\|` (:ref:`prop-bounded-outputs`):
    :math:`\sup\{\max|EV| : \max|V|\le 1\} = \|E\|`, attained by ``V = sign(E[i*])^T`` (shape (m, 1))
    for a worst row ``i*``. Returns ``V`` and ``max |E V|`` (equal to ``row_l1(E)``)."""
    E = real_array("E", E, ndim=2, finite=False)
    i = int(row_l1_blockwise(E).argmax())
    V = np.where(E[i] >= 0, 1.0, -1.0)[:, None]
    return V, float(np.abs(E @ V).max())


def bounded_output_error(E, V) -> float:
    """Largest entry of :math:`|E V|` (``V`` of shape (m, p)); by :ref:`prop-bounded-outputs` at most
    ``row_l1(E)`` when ``max|V| <= 1``."""
    E = real_array("E", E, ndim=2, finite=False)
    V = real_array("V", V, finite=False)
    if V.ndim == 1:
        V = V[:, None]
    return float(np.abs(E @ V).max())
