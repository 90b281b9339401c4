r"""Numerically stable softmax attention (the book's :ref:`def-attention`).

All routines work in float64 and subtract the row maximum before exponentiating, so that
inverse temperatures up to ``1e6`` and key log-weights down to ``-1e4`` give finite results.
"""
from __future__ import annotations

import numpy as np

from .checks import (
    UNIT_ROUNDOFF,
    finite_nonnegative,
    gamma,
    real_array,
)
from .checks import log_weights as _log_weights

__all__ = [
    "attention_rows",
    "logit_rounding_bound",
    "logits",
    "query_key_pair",
    "row_softmax",
    "softmax_attention",
]


def row_softmax(L: np.ndarray) -> np.ndarray:
    r"""Row-wise softmax of a logit matrix.

    .. math:: A_{ij} = \exp(L_{ij} - \max_l L_{il}) / \sum_l \exp(L_{il} - \max_l L_{il})

    Parameters
    ----------
    L : ndarray, shape (n, m)
        Logits. Entries may be ``-inf`` (a key with weight zero) but every row needs at
        least one finite entry.

    Returns
    -------
    A : ndarray, shape (n, m)
        Row-stochastic matrix, float64.

    Notes
    -----
    Each row is scaled by :math:`f/S_i` with :math:`f = 1 - 2(m+4)u` (u the unit roundoff)
    instead of :math:`1/S_i`. By the standard rounding bounds the *exact* sum of every stored row
    is then at most 1 (and at least :math:`1 - 2(m+5)u`), so the stored matrix really is
    (sub)stochastic and ``B = 0`` certifies :math:`\mathrm{rank}_1(A) = 0` without rounding doubts.
    The relative change of each entry is below :math:`2(m+4)u` (``4.5e-12`` for m = 10^4).
    """
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
    """The row softmax of checked logits (every row max finite): the one computation behind
    :func:`row_softmax` and the unchecked rows of :func:`attention_rows`."""
    A = np.exp(L - row_max)
    f = 1.0 - 2.0 * (L.shape[1] + 4) * UNIT_ROUNDOFF
    A *= f / A.sum(axis=1, keepdims=True)
    return A


def attention_rows(Q: np.ndarray, K: np.ndarray, beta: float, log_weights: np.ndarray | None) -> np.ndarray:
    r"""Rows of :func:`softmax_attention` for arguments already checked at an entry point.

    The engine validates queries, keys, ``beta`` and log-weights once (a
    :class:`~attnrank_lite.engine.row_source.RowSource` built ``from_points``) and then asks for
    row blocks many times; this computes them with the same operations as
    :func:`softmax_attention` (the logits ``beta * (Q K^T) + log w`` and :func:`row_softmax`'s
    kernel), without checking the arguments again. The caller makes sure that no logit can
    overflow (:meth:`RowSource.from_points <attnrank_lite.engine.row_source.RowSource.from_points>`
    bounds :math:`\beta \max|q| \max|k|`; beyond, it uses :func:`softmax_attention`); a NaN or
    ``+inf`` row maximum still raises, through the checked path.

    Parameters
    ----------
    Q : ndarray, shape (n, d), float64, finite
    K : ndarray, shape (m, d), float64, finite, ``m >= 1``
    beta : float, finite, ``>= 0``
    log_weights : ndarray, shape (m,), or None
        Checked log-weights (``-inf`` allowed, at least one finite).
    """
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
    """Queries and keys as finite real float64 matrices of equal width (``K = None``: ``K = Q``).

    A 1-D ``Q`` or ``K`` is one vector (shape (1, d)). Complex data are a ``TypeError``.

    Parameters
    ----------
    Q : array_like, shape (n, d)
    K : array_like, shape (m, d), optional

    Returns
    -------
    Q, K : ndarray, shapes (n, d) and (m, d)
    """
    Q = np.atleast_2d(real_array("Q (queries)", Q))
    K = Q if K is None else np.atleast_2d(real_array("K (keys)", K))
    if Q.ndim != 2 or K.ndim != 2:
        raise ValueError(f"queries and keys must be 2-D, got shapes {Q.shape} and {K.shape}")
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"queries have dimension {Q.shape[1]} but keys have {K.shape[1]}")
    return Q, K


def logits(Q, K=None, beta: float = 1.0, log_weights=None) -> np.ndarray:
    r"""Logit matrix :math:`L_{ij} = \beta \langle q_i, k_j\rangle + \log w_j`.

    Parameters
    ----------
    Q : array_like, shape (n, d)
        Queries.
    K : array_like, shape (m, d), optional
        Keys; ``None`` means self-attention (``K = Q``).
    beta : float
        Inverse temperature, ``beta >= 0``.
    log_weights : array_like, shape (m,), optional
        Key log-weights (log-multiplicities). A key of multiplicity ``w_j`` acts exactly as
        ``w_j`` identical keys (:ref:`prop-multiplicity`). Must be 1-D of length ``m``;
        ``-inf`` (weight zero) is allowed, NaN and ``+inf`` are not.

    Returns
    -------
    L : ndarray, shape (n, m)

    Raises
    ------
    ValueError
        When :math:`\beta\langle q_i, k_j\rangle` overflows float64 (the message names
        ``beta``): the logits would be infinite and the attention undefined in float64.
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
    r"""Normalised softmax attention :math:`A = \mathrm{rowsoftmax}(\beta Q K^T + 1 \log w^T)`.

    Parameters
    ----------
    Q : array_like, shape (n, d)
        Queries.
    K : array_like, shape (m, d), optional
        Keys; ``None`` gives self-attention with ``K = Q``.
    beta : float, default 1.0
        Inverse temperature (``>= 0``).
    log_weights : array_like, shape (m,), optional
        Key log-weights: :math:`A_{ij} \propto w_j \exp(\beta\langle q_i, k_j\rangle)`.
    block : int, optional
        Build :math:`A` ``block`` rows at a time, writing each row block straight into the
        output (peak memory: the output plus about ``3 * block * m * 8`` bytes instead of three
        full-size temporaries). ``None``: all rows in one block. Both run the same code; only
        the shape of the matrix product ``Q K^T`` changes, and with it, possibly, the BLAS kernel.
        Results of different block sizes therefore agree to within the rounding bound of
        :func:`logit_rounding_bound`, not necessarily bit for bit.

    Returns
    -------
    A : ndarray, shape (n, m)
        Row-stochastic attention matrix (float64).

    Examples
    --------
    >>> import numpy as np
    >>> A = softmax_attention(np.eye(3), beta=0.0)
    >>> np.allclose(A, 1 / 3)
    True
    """
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
    r"""Entrywise bound on the rounding error of the computed logits :math:`\beta\,\mathrm{fl}(QK^T)`.

    For any summation order (so for every BLAS kernel) the computed inner product of two
    d-vectors satisfies :math:`|\mathrm{fl}(q^T k) - q^T k| \le \gamma_d |q|^T |k|` with
    :math:`\gamma_d = d u / (1 - d u)` (Higham, *Accuracy and Stability of Numerical
    Algorithms*, 2nd ed., eq. (3.5)); the product with ``beta`` adds one relative rounding and
    the two together stay within :math:`\gamma_{d+2}`:

    .. math:: |\beta\,\mathrm{fl}(q_i^T k_j) - \beta\, q_i^T k_j|
              \le \Delta_{ij} := \beta\,\gamma_{d+2}\,|q_i|^T |k_j|.

    Parameters
    ----------
    Q : array_like, shape (n, d)
    K : array_like, shape (m, d), optional
    beta : float

    Returns
    -------
    Delta : ndarray, shape (n, m)
        :math:`\beta\,\gamma_{d+2}\,|Q|\,|K|^T`, rounded upward by a factor ``1 + 1e-12``
        so that its own evaluation cannot make it too small.

    Notes
    -----
    Adding the log-weight :math:`\log w_j` to the computed product costs one more relative
    rounding of the sum, :math:`u\,|L_{ij}|`; callers that add log-weights add that term. Two
    computations of the same logits with
    different kernels differ by at most :math:`2\Delta_{ij}`, and the row softmaxes of two logit
    matrices whose rows differ by at most :math:`\delta_i` differ entrywise by a relative factor
    in :math:`[e^{-2\delta_i}, e^{2\delta_i}]`.
    """
    Q, K = query_key_pair(Q, K)
    beta = finite_nonnegative("beta", beta)
    return (beta * gamma(Q.shape[1] + 2)) * (np.abs(Q) @ np.abs(K).T)
