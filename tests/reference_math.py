"""References for the engine tests computed without the package: matrices with a prescribed
spectrum, and the right-inverse certificate's left side in exact rational arithmetic."""
from __future__ import annotations

from fractions import Fraction

import numpy as np


def matrix_with_spectrum(n, m, s, seed=0):
    """``A = U diag(s) V^T`` (n, m) with random orthonormal ``U``, ``V``; returns ``A`` and ``V``."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, s.size)))
    V, _ = np.linalg.qr(rng.standard_normal((m, s.size)))
    return (U * s) @ V.T, V


def exact_right_inverse_lhs(A, rows, X, eps) -> Fraction:
    """``||I - A_S X|| + eps ||X||`` (max row sums) in exact arithmetic from the stored floats."""
    p = len(rows)
    Af = [[Fraction(float(v)) for v in A[i]] for i in rows]
    Xf = [[Fraction(float(v)) for v in r] for r in X]
    m = len(Xf)
    r_norm = max(sum(abs((1 if a == b else 0) - sum(Af[a][j] * Xf[j][b] for j in range(m))) for b in range(p))
                 for a in range(p))
    x_norm = max(sum(abs(v) for v in Xf[j]) for j in range(m))
    return r_norm + Fraction(eps) * x_norm
