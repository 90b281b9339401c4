r"""Spherical harmonics counts and the Funk–Hecke spectrum of :math:`e^{\beta\langle x, y\rangle}`.

On :math:`S^{d-1}` with the *normalised* uniform measure :math:`\sigma` (total mass 1), the
kernel :math:`k(x, y) = e^{\beta\langle x, y\rangle}` is a zonal kernel; by the Funk–Hecke
formula it acts on the degree-:math:`\ell` spherical harmonics as multiplication by

.. math:: \lambda_\ell(\beta) = \Gamma(\tfrac d2)\,\big(\tfrac 2\beta\big)^{d/2-1} I_{\ell+d/2-1}(\beta),

(:math:`I_\nu` the modified Bessel function), with multiplicity :math:`N(d,\ell)`, the dimension
of the degree-:math:`\ell` harmonics. For d = 2 this is :math:`I_\ell(\beta)`; for d = 3,
:math:`\sqrt{\pi/(2\beta)}\,I_{\ell+1/2}(\beta)`. For n well-spread points the kernel matrix
:math:`K/n` has eigenvalues close to these, and the attention matrix :math:`A = D^{-1}K` (row sums
nearly constant, :math:`\approx n\lambda_0`) has singular values close to :math:`\lambda_\ell/\lambda_0`.
All values here are returned scaled by :math:`e^{-\beta}` (``scipy.special.ive``) so that no
overflow occurs for large :math:`\beta`.
"""
from __future__ import annotations

from math import comb

import numpy as np
from scipy.special import gammaln, ive

from ..engine.checks import count_value, finite_nonnegative

__all__ = [
    "harmonic_dimension",
    "harmonic_count",
    "funk_hecke_eigenvalues",
    "circulant_kernel_spectrum",
    "predicted_attention_spectrum",
    "empirical_kernel_spectrum",
    "harmonic_degree_for_tolerance",
    "spectral_rank_heuristic",
]


def _check_d(d) -> int:
    """``d`` as an int ``>= 2`` (points on S^(d-1)); ``ValueError`` naming ``d`` otherwise."""
    return count_value("d", d, minimum=2)


def _check_degree(name: str, value) -> int:
    return count_value(name, value, minimum=0)


def _check_beta_positive(beta) -> float:
    beta = finite_nonnegative("beta", beta)
    if beta <= 0:
        raise ValueError(f"beta must be a finite number > 0, got {beta}")
    return beta


def harmonic_dimension(l: int, d: int) -> int:
    r"""Dimension :math:`N(d,\ell)` of the spherical harmonics of degree ``l`` on :math:`S^{d-1}`.

    .. math:: N(d, \ell) = \binom{\ell+d-1}{d-1} - \binom{\ell+d-3}{d-1}

    (homogeneous polynomials of degree l minus those of degree l - 2: the Laplacian maps the
    first space onto the second). d = 2: 1, 2, 2, ...; d = 3: 2l + 1.
    """
    d = _check_d(d)
    l = _check_degree("degree l", l)
    return comb(l + d - 1, d - 1) - (comb(l + d - 3, d - 1) if l >= 2 else 0)


def harmonic_count(L: int, d: int) -> int:
    r"""Number of spherical harmonics of degree <= ``L`` on :math:`S^{d-1}`:
    :math:`\sum_{\ell\le L} N(d,\ell) = \binom{L+d-1}{d-1} + \binom{L+d-2}{d-1}`
    (the dimension of polynomials of degree <= L restricted to the sphere). d = 3: :math:`(L+1)^2`.
    Grows like :math:`L^{d-1}`.
    """
    d = _check_d(d)
    L = _check_degree("degree L", L)
    return comb(L + d - 1, d - 1) + (comb(L + d - 2, d - 1) if L >= 1 else 0)


def funk_hecke_eigenvalues(beta: float, d: int, L: int) -> np.ndarray:
    r"""Scaled Funk–Hecke eigenvalues :math:`e^{-\beta}\lambda_\ell(\beta)`, ``l = 0..L``.

    Parameters
    ----------
    beta : float
        ``beta > 0``.
    d : int
        Points on :math:`S^{d-1}`, ``d >= 2``.
    L : int
        Largest degree.

    Returns
    -------
    ndarray, shape (L + 1,)
        :math:`e^{-\beta}\,\Gamma(d/2)(2/\beta)^{d/2-1} I_{\ell+d/2-1}(\beta)` (w.r.t. the normalised
        surface measure).
    """
    d = _check_d(d)
    beta = _check_beta_positive(beta)
    L = _check_degree("L", L)
    nu = np.arange(L + 1) + d / 2 - 1
    logc = gammaln(d / 2) + (d / 2 - 1) * np.log(2 / beta)
    return np.exp(logc) * ive(nu, beta)


def circulant_kernel_spectrum(n: int, beta: float) -> np.ndarray:
    r"""Exact eigenvalues of :math:`K_{ij} = e^{\beta(\cos(\theta_i-\theta_j) - 1)}` on n equispaced points.

    K is circulant, so its eigenvalues are the DFT of its first row:
    :math:`\mu_k = \sum_{j=0}^{n-1} e^{\beta(\cos(2\pi j/n)-1)} \cos(2\pi jk/n)`, ``k = 0..n-1``,
    computed here by direct summation (independent of the Bessel functions).
    By the Jacobi–Anger expansion :math:`\mu_k = n\sum_{p\in\mathbb Z} e^{-\beta} I_{k+pn}(\beta)` (aliasing).
    """
    j = np.arange(n)
    row = np.exp(beta * (np.cos(2 * np.pi * j / n) - 1))
    C = np.cos(2 * np.pi * np.outer(np.arange(n), j) / n)
    return C @ row


def predicted_attention_spectrum(beta: float, d: int, L: int) -> np.ndarray:
    r"""Predicted singular values of the attention matrix on well-spread points of :math:`S^{d-1}`.

    :math:`\lambda_\ell/\lambda_0` repeated :math:`N(d,\ell)` times, ``l = 0..L``, in decreasing
    order (the continuum limit: many points, nearly constant row sums).

    Returns
    -------
    ndarray, shape (harmonic_count(L, d),)
    """
    lam = funk_hecke_eigenvalues(beta, d, L)
    reps = [harmonic_dimension(l, d) for l in range(int(L) + 1)]
    return np.sort(np.repeat(lam / lam[0], reps))[::-1]


def empirical_kernel_spectrum(X, beta: float) -> np.ndarray:
    r"""Eigenvalues of :math:`e^{-\beta}K/n`, :math:`K_{ij} = e^{\beta\langle x_i, x_j\rangle}`, decreasing.

    For points of the unit sphere that are well spread (a good quadrature for :math:`\sigma`),
    these approximate the scaled Funk–Hecke eigenvalues with multiplicities.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Points on the unit sphere.
    """
    X = np.asarray(X, dtype=np.float64)
    K = np.exp(float(beta) * (X @ X.T - 1.0)) / X.shape[0]
    return np.linalg.eigvalsh(K)[::-1]


def harmonic_degree_for_tolerance(beta: float, d: int, tol: float, L_max: int = 100_000) -> int:
    r"""Largest degree ``L`` with :math:`\lambda_L/\lambda_0 \ge` ``tol`` (the spectrum decreases in l).

    For large :math:`\beta`, :math:`I_{\nu}(\beta)/I_{\nu_0}(\beta) \approx e^{-(\nu^2-\nu_0^2)/(2\beta)}`,
    so :math:`L \approx \sqrt{2\beta\log(1/\text{tol})}`.
    """
    tol = finite_nonnegative("tol", tol)
    if not 0 < tol < 1:
        raise ValueError(f"tol must be in (0, 1), got {tol}")
    L = 16
    while True:
        lam = funk_hecke_eigenvalues(beta, d, L)
        r = lam / lam[0]
        below = np.flatnonzero(r < tol)
        if below.size:
            return int(below[0]) - 1
        if L >= L_max:
            return L
        L = min(L_max, 2 * L)


def spectral_rank_heuristic(beta: float, d: int, tol: float) -> int:
    r"""Number of harmonics of degree <= L(beta, tol) (see :func:`harmonic_degree_for_tolerance`):
    the spectral guess for the rank at error level ~ tol. Grows like :math:`\beta^{(d-1)/2}`."""
    return harmonic_count(harmonic_degree_for_tolerance(beta, d, tol), d)
