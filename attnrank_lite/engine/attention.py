r"""Numerically stable softmax attention (:ref:`def-attention`): float64, the row maximum subtracted
before exponentiating (finite for beta up to ``1e6`` and log-weights down to ``-1e4``)."""
from __future__ import annotations

import numpy as np

from .checks import UNIT_ROUNDOFF, finite_nonnegative, gamma, real_array
from .checks import log_weights as _log_weights

__all__ = ["attention_rows", "logit_rounding_bound", "logits", "query_key_pair", "row_softmax",
           "softmax_attention"]


def row_softmax(L: np.ndarray) -> np.ndarray:
    r"""Row-wise softmax :math:`A_{ij} = e^{L_{ij} - \max_l L_{il}} / \sum_l e^{L_{il} - \max_l L_{il}}` of
    logits ``L`` (n, m; ``-inf`` allowed, every row needs a finite entry), float64.

    Each row is scaled by :math:`f/S_i`, :math:`f = 1 - 2(m+4)u`: the exact sum of every stored row
    is then in :math:`[1 - 2(m+5)u, 1]`, so ``B = 0`` certifies :math:`\mathrm{rank}_1(A) = 0` without
    rounding doubts (entries change by below :math:`2(m+4)u`)."""
    L = real_array("logits", L, ndim=2, finite=False)
    if np.isposinf(L).any():
        raise ValueError("logits must not contain NaN or +inf")
    if L.shape[1] == 0 and L.shape[0] > 0:
        raise ValueError("logits need at least one column (key)")
    if L.shape[0] == 0:
        return np.zeros(L.shape)
    row_max = L.max(axis=1, keepdims=True)
    if not np.isfinite(row_max).all():
        raise ValueError("every row of the logits needs at least one finite entry")
    return _softmax_kernel(L, row_max)


def _softmax_kernel(L: np.ndarray, row_max: np.ndarray) -> np.ndarray:
    """The row softmax of checked logits (every row max finite), for both entry points."""
    A = np.exp(L - row_max)
    f = 1.0 - 2.0 * (L.shape[1] + 4) * UNIT_ROUNDOFF
    A *= f / A.sum(axis=1, keepdims=True)
    return A


def attention_rows(Q: np.ndarray, K: np.ndarray, beta: float, log_weights: np.ndarray | None) -> np.ndarray:
    """Rows of :func:`softmax_attention` for arguments already checked (by ``RowSource.from_points``):
    the same operations, no checks; a NaN or ``+inf`` row maximum still raises through the checked path."""
    with np.errstate(over="ignore", invalid="ignore"):
        L = beta * (Q @ K.T)
    if log_weights is not None:
        L = L + log_weights[None, :]
    row_max = L.max(axis=1, keepdims=True) if L.size else np.zeros((L.shape[0], 1))
    if not np.isfinite(row_max).all():  # a NaN or +inf logit, or a row of -inf
        return softmax_attention(Q, K, beta, log_weights)  # raises with the checked message
    if L.shape[0] == 0:
        return np.zeros(L.shape)
    return _softmax_kernel(L, row_max)


def query_key_pair(Q, K=None) -> tuple[np.ndarray, np.ndarray]:
    """Queries and keys as finite real float64 matrices (n, d) and (m, d) of equal width
    (``K = None``: ``K = Q``; a 1-D argument is one vector; complex data are a ``TypeError``)."""
    Q = np.atleast_2d(real_array("Q (queries)", Q))
    K = Q if K is None else np.atleast_2d(real_array("K (keys)", K))
    if Q.ndim != 2 or K.ndim != 2:
        raise ValueError(f"queries and keys must be 2-D, got shapes {Q.shape} and {K.shape}")
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"queries have dimension {Q.shape[1]} but keys have {K.shape[1]}")
    return Q, K


def logits(Q, K=None, beta: float = 1.0, log_weights=None) -> np.ndarray:
    r"""Logit matrix :math:`L_{ij} = \beta \langle q_i, k_j\rangle + \log w_j`, shape (n, m).

    Parameters
    ----------
    Q : array_like, shape (n, d)
    K : array_like, shape (m, d), optional
        ``None``: self-attention, ``K = Q``.
    beta : float, ``>= 0``
    log_weights : array_like, shape (m,), optional
        Key log-multiplicities (:ref:`prop-multiplicity`); ``-inf`` allowed, NaN and ``+inf`` not.

    Raises
    ------
    ValueError
        Naming ``beta``, when :math:`\beta\langle q_i, k_j\rangle` overflows float64.
    """
    Q, K = query_key_pair(Q, K)
    beta = finite_nonnegative("beta", beta)
    w = None if log_weights is None else _log_weights(log_weights, K.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        L = beta * (Q @ K.T)
    if not np.isfinite(L).all():
        big = float(np.abs(Q).max(initial=0.0) * np.abs(K).max(initial=0.0) * Q.shape[1])
        raise ValueError(f"beta = {beta:g} makes the logits beta * <q, k> overflow float64 "
                         f"(|<q, k>| up to about {big:.3g}); use a smaller beta or rescale Q, K")
    if w is not None:
        L = L + w[None, :]
    return L


def softmax_attention(Q, K=None, beta: float = 1.0, log_weights=None, *, block: int | None = None) -> np.ndarray:
    r"""Softmax attention :math:`A = \mathrm{rowsoftmax}(\beta Q K^T + 1 \log w^T)`, shape (n, m).

    Parameters
    ----------
    Q, K, beta, log_weights
        As in :func:`logits`.
    block : int, optional
        Build ``A`` this many rows at a time (results agree within :func:`logit_rounding_bound`)."""
    Q, K = query_key_pair(Q, K)
    n = Q.shape[0]
    if K.shape[0] == 0:
        raise ValueError("softmax attention needs at least one key (K has 0 rows)")
    if block is None:
        return row_softmax(logits(Q, K, beta=beta, log_weights=log_weights))
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be a positive integer or None, got {block!r}")
    A = np.empty((n, K.shape[0]))
    for s in range(0, n, int(block)):
        A[s:s + block] = row_softmax(logits(Q[s:s + block], K, beta=beta, log_weights=log_weights))
    return A


def logit_rounding_bound(Q, K=None, beta: float = 1.0) -> np.ndarray:
    r"""Entrywise bound :math:`\Delta = \beta\,\gamma_{d+2}\,|Q|\,|K|^T` (shape (n, m), rounded upward)
    on the rounding error of the computed logits :math:`\beta\,\mathrm{fl}(QK^T)`, for every
    summation order (Higham, eq. (3.5), plus the product with beta).

    Adding a log-weight costs one more rounding, :math:`u\,|L_{ij}|` (the caller adds it); two
    kernels' logits differ by at most :math:`2\Delta_{ij}`, and row softmaxes of logits within
    :math:`\delta_i` differ by a relative factor in :math:`[e^{-2\delta_i}, e^{2\delta_i}]`."""
    Q, K = query_key_pair(Q, K)
    beta = finite_nonnegative("beta", beta)
    return (beta * gamma(Q.shape[1] + 2)) * (np.abs(Q) @ np.abs(K).T)
