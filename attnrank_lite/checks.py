"""Argument checks shared by the package's public functions."""
from __future__ import annotations

import numpy as np

__all__ = ["finite_nonnegative"]


def finite_nonnegative(name: str, value) -> float:
    """``float(value)`` if it is finite and ``>= 0``; else a ``ValueError`` naming ``name``."""
    value = float(value)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value
