r"""Rows of a matrix ``A`` without storing it (:class:`RowSource`: views of a stored matrix, or rows
computed from the points by the dense code path), and the row sample shared by the searches."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .attention import attention_rows, query_key_pair, softmax_attention
from .checks import finite_nonnegative, real_matrix
from .checks import log_weights as _check_log_weights

__all__ = ["RowSource", "evenly_spaced_rows"]


def evenly_spaced_rows(n: int, count: int) -> np.ndarray:
    """``min(n, count)`` distinct rows, the rounded points of ``linspace(0, n - 1, count)`` without
    repeats (first and last included for ``count >= 2``), increasing."""
    if n <= 0 or count <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, min(n, count)).round().astype(np.int64))


@dataclass(frozen=True)
class RowSource:
    """A matrix ``A`` of shape ``(n, m)`` given by its rows: ``rows(idx)`` (a slice or an index array)
    gives ``A[idx]``, ``block`` rows per pass block; ``matrix`` the stored matrix (``from_matrix``)
    or ``None``; ``points`` ``(Q, K, beta, log_weights)`` (``from_points``) or ``None``."""

    n: int
    m: int
    rows: Callable
    block: int = 512
    matrix: np.ndarray | None = None
    points: tuple | None = None

    @classmethod
    def from_matrix(cls, A) -> RowSource:
        """The rows of a stored matrix (views: no copy); passes read it in one block."""
        A = real_matrix("A", A)
        n, m = A.shape
        return cls(n, m, lambda idx: A[idx], block=max(1, n), matrix=A)

    @classmethod
    def from_points(cls, Q, beta: float, *, K=None, log_weights=None, block: int = 512) -> RowSource:
        """Rows of the attention of ``Q`` on ``K`` (``None``: self-attention) computed on demand."""
        Q, K = query_key_pair(Q, K)
        beta = finite_nonnegative("beta", beta)
        lw = None if log_weights is None else _check_log_weights(log_weights, K.shape[0])
        if lw is not None and not np.isfinite(lw).any():
            raise ValueError("log_weights must have at least one finite entry")
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
            raise ValueError(f"block must be a positive integer, got {block!r}")
        if K.shape[0] == 0:
            raise ValueError("softmax attention needs at least one key (K has 0 rows)")
        # checked once here; unless beta <q, k> could overflow, the blocks are not checked again
        bound = beta * float(np.linalg.norm(Q, axis=1).max(initial=0.0)) * float(np.linalg.norm(K, axis=1).max())
        kernel = attention_rows if np.isfinite(bound) and bound < 1e300 else softmax_attention
        return cls(Q.shape[0], K.shape[0], lambda idx: kernel(Q[idx], K, beta, lw), block=int(block),
                   points=(Q, K, beta, lw))

    def blocks(self):
        """``(slice, rows)`` for consecutive blocks of ``block`` rows covering ``0..n-1``."""
        for s in range(0, self.n, self.block):
            sl = slice(s, min(self.n, s + self.block))
            yield sl, self.rows(sl)

    def dense(self) -> np.ndarray:
        """``A`` as a stored matrix (the stored one, or a new array built block by block)."""
        if self.matrix is not None:
            return self.matrix
        A = np.empty((self.n, self.m))
        for sl, R in self.blocks():
            A[sl] = R
        return A

    def row_masses(self) -> np.ndarray:
        r"""Computed :math:`\sum_j |A_{ij}|` for every row, one pass."""
        out = np.empty(self.n)
        for sl, R in self.blocks():
            out[sl] = np.abs(R).sum(axis=1)
        return out
