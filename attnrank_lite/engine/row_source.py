r"""Rows of a matrix ``A`` without storing it: the row sample shared by the searches.

(The row-source type of the bracket assembler joins this module.)
"""
from __future__ import annotations

import numpy as np

__all__ = ["evenly_spaced_rows"]


def evenly_spaced_rows(n: int, count: int) -> np.ndarray:
    """``min(n, count)`` distinct row indices spread evenly over ``0..n-1``, increasing.

    The first and last rows are always included (for ``count >= 2``); the indices are the
    rounded points of ``linspace(0, n - 1, count)``, without repeats.
    """
    if n <= 0 or count <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, min(n, count)).round().astype(np.int64))
