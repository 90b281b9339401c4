r"""The point-set certificate families that :func:`attnrank_lite.engine.bracket.rank_brackets` adds when
it is given the points (``points=X``): the harmonic upper family (the book's
:ref:`thm-sphere-upper`) and the Neumann lower search (:ref:`prop-neumann-lower`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import real_matrix
from .harmonic import HarmonicBasis, harmonic_search
from .neumann import neumann_lower_bound
from .row_source import RowSource

__all__ = ["GeometricCertificates", "geometric_certificates"]


@dataclass
class GeometricCertificates:
    """Per error level (in the caller's order): the Neumann lower and harmonic upper certificates."""

    lower: list
    upper: list
    full: int

    def svd_affordable(self, idx: int, start: int) -> bool:
        r"""Whether the randomized SVD family can run without its dense-SVD fallback.

        Its sketch doubles from ``start + 10`` and falls back to a dense SVD at ``full // 2``
        columns; with the harmonic rank ``k`` as a guide for the rank it must reach (a sketch
        may need about twice that), it is run only when ``4 * max(start + 10, k) < full // 2``.
        Otherwise the harmonic family alone gives the upper side (the dense SVD is the
        bottleneck at high rank).
        """
        up = self.upper[idx]
        k = self.full if up is None else up.rank
        return 4 * max(start + 10, k) < self.full // 2


def geometric_certificates(A, points, eps_values, basis: HarmonicBasis | None = None) -> GeometricCertificates:
    r"""Neumann lower and harmonic upper certificates of ``A`` for self-attention-like data.

    Parameters
    ----------
    A : ndarray, shape (n, m)
    points : array_like, shape (n, d)
        The queries as points, used for the farthest-point centres of the Neumann search; when
        ``n == m`` they are also taken as the keys (on the unit sphere) of the harmonic family.
        With ``n != m`` or keys off the sphere only the Neumann search runs.
    eps_values : sequence of float

    Returns
    -------
    GeometricCertificates
        ``upper[i]`` is ``None`` where no harmonic certificate was found.
    """
    A = real_matrix("A", A)
    P = real_matrix("points", points)
    n, m = A.shape
    if P.shape[0] != n:
        raise ValueError(f"points has {P.shape[0]} rows but A has {n} rows")
    eps_list = [float(e) for e in eps_values]
    lower = [neumann_lower_bound(A, e, points=P) for e in eps_list]
    upper = [None] * len(eps_list)
    on_sphere = n == m and P.shape[1] >= 2 and bool(np.all(np.abs(np.linalg.norm(P, axis=1) - 1) <= 1e-8))
    if on_sphere:
        if basis is None:
            basis = HarmonicBasis(P)
        live = [i for i, e in enumerate(eps_list) if e < 1]
        lo = max(0, min((lower[i].rank for i in live), default=0) - 1)
        found = harmonic_search(RowSource.from_matrix(A), basis, [eps_list[i] for i in live], lo=lo)
        for i, c in zip(live, found):
            upper[i] = c
    return GeometricCertificates(lower, upper, min(n, m))
