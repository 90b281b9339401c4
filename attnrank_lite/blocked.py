r"""Softmax attention built in row blocks, for instances too large for a full-size temporary.

:func:`attnrank_lite.attention.softmax_attention` forms the logits and the exponentials as
full-size arrays (about three n x m float64 arrays at its peak). For n = m = 20,000 that is
about 10 GB; this builder writes each row block of :math:`A` straight into the output, so the
peak is the output plus one block.
"""
from __future__ import annotations

import numpy as np

from .attention import logits, row_softmax

__all__ = ["softmax_attention_blocked"]


def softmax_attention_blocked(Q, K=None, beta: float = 1.0, log_weights=None, block: int = 1024) -> np.ndarray:
    r"""Same matrix as ``softmax_attention(Q, K, beta, log_weights)``, built ``block`` rows at a time.

    Every row is computed by exactly the same operations as in ``softmax_attention`` (rows are
    independent), so the result is identical bit for bit.

    Parameters
    ----------
    Q : array_like, shape (n, d)
    K : array_like, shape (m, d), optional
        ``None`` for self-attention.
    beta : float
    log_weights : array_like, shape (m,), optional
    block : int
        Rows per block (extra memory about ``3 * block * m * 8`` bytes).

    Returns
    -------
    A : ndarray, shape (n, m)
    """
    Q = np.atleast_2d(np.asarray(Q, dtype=np.float64))
    K = Q if K is None else np.atleast_2d(np.asarray(K, dtype=np.float64))
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    A = np.empty((Q.shape[0], K.shape[0]))
    for s in range(0, Q.shape[0], block):
        A[s:s + block] = row_softmax(logits(Q[s:s + block], K, beta=beta, log_weights=log_weights))
    return A
