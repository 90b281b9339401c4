"""The max-row-l1 norm and its bounded-output characterisation (SPEC Prop. 1.1)."""
from __future__ import annotations

import numpy as np

__all__ = ["row_l1", "row_l1_blockwise", "worst_case_values", "bounded_output_error"]


def row_l1(E) -> float:
    r"""Max-row-l1 norm :math:`\|E\| = \max_i \sum_j |E_{ij}|`.

    This is the operator norm of :math:`E` from :math:`\ell_\infty` to :math:`\ell_\infty`.

    Parameters
    ----------
    E : array_like, shape (n, m)

    Returns
    -------
    float
        ``0.0`` for an empty matrix.
    """
    E = np.asarray(E, dtype=np.float64)
    if E.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {E.shape}")
    if E.size == 0:
        return 0.0
    return float(np.abs(E).sum(axis=1).max())


def row_l1_blockwise(A: np.ndarray, L: np.ndarray, R: np.ndarray, block: int = 1024) -> np.ndarray:
    r"""Row l1 norms of :math:`A - L R`, computed in row blocks without forming ``L @ R``.

    Parameters
    ----------
    A : ndarray, shape (n, m)
    L : ndarray, shape (n, k)
    R : ndarray, shape (k, m)
    block : int
        Rows per block (memory is ``O(block * m)``).

    Returns
    -------
    ndarray, shape (n,)
        :math:`\sum_j |A_{ij} - (LR)_{ij}|` for each row ``i``.
    """
    n = A.shape[0]
    out = np.empty(n)
    for s in range(0, n, block):
        e = slice(s, min(n, s + block))
        out[e] = np.abs(A[e] - L[e] @ R).sum(axis=1)
    return out


def worst_case_values(E) -> tuple[np.ndarray, float]:
    r"""The bounded value matrix that attains :math:`\|E\|` (Prop. 1.1).

    For every ``p >= 1``, :math:`\sup\{\max|EV| : V\in\mathbb{R}^{m\times p}, \max|V|\le 1\} = \|E\|`,
    attained by ``V = sign(E[i*])^T`` for a worst row ``i*``.

    Parameters
    ----------
    E : array_like, shape (n, m)

    Returns
    -------
    V : ndarray, shape (m, 1)
        Entries in {-1, 1}.
    value : float
        ``max |E V|``, equal to ``row_l1(E)``.
    """
    E = np.asarray(E, dtype=np.float64)
    i = int(np.abs(E).sum(axis=1).argmax())
    V = np.where(E[i] >= 0, 1.0, -1.0)[:, None]
    return V, float(np.abs(E @ V).max())


def bounded_output_error(E, V) -> float:
    r"""Largest entry of :math:`|E V|` for a value matrix ``V`` (shape (m, p)).

    Prop. 1.1 says this never exceeds ``row_l1(E)`` when ``max|V| <= 1``.
    """
    E = np.asarray(E, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    if V.ndim == 1:
        V = V[:, None]
    return float(np.abs(E @ V).max())
