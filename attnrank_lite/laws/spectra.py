r"""Spherical harmonics counts and the Funk–Hecke spectrum (``prop-funk-hecke``), eigenvalues
scaled by :math:`e^{-\beta}` (no overflow)."""
from __future__ import annotations

from math import comb

import numpy as np
from scipy.special import gammaln, ive

from ..engine.checks import count_value, finite_nonnegative
from .geometry import positive

__all__ = ["harmonic_dimension", "harmonic_count", "funk_hecke_eigenvalues",
           "circulant_kernel_spectrum", "predicted_attention_spectrum",
           "harmonic_degree_for_tolerance", "spectral_rank_heuristic"]


def harmonic_dimension(l: int, d: int) -> int:
    r"""Dimension :math:`N(d,\ell) = \binom{\ell+d-1}{d-1} - \binom{\ell+d-3}{d-1}` of the degree-``l``
    spherical harmonics on :math:`S^{d-1}` (d = 3: 2l + 1)."""
    d = count_value("d", d, 2)
    l = count_value("degree l", l)
    return comb(l + d - 1, d - 1) - (comb(l + d - 3, d - 1) if l >= 2 else 0)


def harmonic_count(L: int, d: int) -> int:
    r""":math:`N(d,\le L) = \binom{L+d-1}{d-1} + \binom{L+d-2}{d-1}`, the harmonics of degree <= ``L``
    on :math:`S^{d-1}` (d = 3: :math:`(L+1)^2`; grows like :math:`L^{d-1}`)."""
    d = count_value("d", d, 2)
    L = count_value("degree L", L)
    return comb(L + d - 1, d - 1) + (comb(L + d - 2, d - 1) if L >= 1 else 0)


def funk_hecke_eigenvalues(beta: float, d: int, L: int) -> np.ndarray:
    r"""Scaled Funk–Hecke eigenvalues :math:`e^{-\beta}\Gamma(d/2)(2/\beta)^{d/2-1}
    I_{\ell+d/2-1}(\beta)`, ``l = 0..L``, shape (L + 1,)."""
    d = count_value("d", d, 2)
    beta = positive("beta", beta)
    L = count_value("L", L)
    nu = np.arange(L + 1) + d / 2 - 1
    logc = gammaln(d / 2) + (d / 2 - 1) * np.log(2 / beta)
    return np.exp(logc) * ive(nu, beta)


def circulant_kernel_spectrum(n: int, beta: float) -> np.ndarray:
    r"""Exact eigenvalues of the circulant :math:`K_{ij} = e^{\beta(\cos(\theta_i-\theta_j) - 1)}` on
    n equispaced points, by a direct DFT of its first row (no Bessel functions)."""
    j = np.arange(n)
    row = np.exp(beta * (np.cos(2 * np.pi * j / n) - 1))
    C = np.cos(2 * np.pi * np.outer(np.arange(n), j) / n)
    return C @ row


def predicted_attention_spectrum(beta: float, d: int, L: int) -> np.ndarray:
    r"""Predicted singular values of the attention matrix on well-spread points: :math:`\lambda_\ell/
    \lambda_0` repeated :math:`N(d,\ell)` times, ``l = 0..L``, decreasing (the continuum limit)."""
    lam = funk_hecke_eigenvalues(beta, d, L)
    reps = [harmonic_dimension(l, d) for l in range(int(L) + 1)]
    return np.sort(np.repeat(lam / lam[0], reps))[::-1]


def harmonic_degree_for_tolerance(beta: float, d: int, tol: float, L_max: int = 100_000) -> int:
    r"""Largest ``L`` with :math:`\lambda_L/\lambda_0 \ge` ``tol`` (about :math:`\sqrt{2\beta\log(1/\text{tol})}`)."""
    tol = finite_nonnegative("tol", tol)
    if not 0 < tol < 1:
        raise ValueError(f"tol must be in (0, 1), got {tol}")
    L = 16
    while True:
        lam = funk_hecke_eigenvalues(beta, d, L)
        below = np.flatnonzero(lam / lam[0] < tol)
        if below.size:
            return int(below[0]) - 1
        if L >= L_max:
            return L
        L = min(L_max, 2 * L)


def spectral_rank_heuristic(beta: float, d: int, tol: float) -> int:
    """The spectral guess for the rank at error ~ ``tol``: :func:`harmonic_count` of that degree."""
    return harmonic_count(harmonic_degree_for_tolerance(beta, d, tol), d)
