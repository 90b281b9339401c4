"""Point configurations for attention instances."""
from __future__ import annotations

import numpy as np

__all__ = ["circle_points"]


def circle_points(n: int, offset: float = 0.0) -> np.ndarray:
    r"""``n`` equispaced points on the unit circle :math:`S^1`.

    Parameters
    ----------
    n : int
    offset : float
        Angle of the first point.

    Returns
    -------
    X : ndarray, shape (n, 2)
        :math:`x_i = (\cos\theta_i, \sin\theta_i)`, :math:`\theta_i = \text{offset} + 2\pi i/n`.
    """
    theta = offset + 2 * np.pi * np.arange(n) / n
    return np.column_stack([np.cos(theta), np.sin(theta)])
