r"""Point configurations for attention instances.

Spherical sets (chapter 2): equispaced circle, Fibonacci sphere, maximal separated packings,
random uniform and clustered points on :math:`S^{d-1}`. Full-ball set (chapter 3): the
Gaussian-ball construction, a grid in the ball of radius 1/2 whose key log-weights turn softmax
attention into a Gaussian kernel.
"""
from __future__ import annotations

import itertools

import numpy as np

__all__ = [
    "circle_points",
    "gaussian_ball",
    "effective_token_count",
    "log_effective_token_count",
]


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


def _check_int(name: str, v, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def _check_pos(name: str, v) -> float:
    v = float(v)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return v


def gaussian_ball(d: int, beta: float, spacing_factor: float = 0.5, radius: float = 0.5,
                  max_points: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
    r"""The Gaussian-ball construction: a grid in a ball with Gaussian key log-weights.

    Points: the lattice :math:`h\mathbb{Z}^d` with spacing :math:`h = \text{spacing\_factor}/\sqrt\beta`,
    restricted to the closed ball :math:`\{|x| \le \text{radius}\}`. Key log-weights

    .. math:: \log w_j = \tfrac{\beta}{2}\,(\text{radius}^2 - |x_j|^2) \;\ge 0,

    i.e. multiplicities :math:`w_j \propto e^{-\beta|x_j|^2/2}` normalised so that the weight is
    1 on the boundary sphere (log-weight 0 there; every grid point has weight >= 1). Then

    .. math:: A_{ij} \propto e^{\beta\langle x_i, x_j\rangle - \beta|x_j|^2/2}
              = e^{\beta|x_i|^2/2}\, e^{-\beta|x_i - x_j|^2/2},

    and the row factor :math:`e^{\beta|x_i|^2/2}` cancels in the softmax, so
    ``softmax_attention(X, X, beta, log_weights)`` is the row-normalised Gaussian kernel
    :math:`A_{ij} \propto e^{-\beta|x_i - x_j|^2/2}`.

    Parameters
    ----------
    d : int
        Dimension, ``d >= 1``.
    beta : float
        Inverse temperature, ``> 0``.
    spacing_factor : float, default 0.5
        Grid spacing in units of the kernel width :math:`1/\sqrt\beta`.
    radius : float, default 0.5
        Ball radius (the abstract's threshold :math:`e^{\beta/8}` corresponds to 1/2).
    max_points : int
        Refuse to build grids larger than this (memory guard).

    Returns
    -------
    X : ndarray, shape (n, d)
        Grid points, in lexicographic order of their integer coordinates.
    log_weights : ndarray, shape (n,)
        Key log-weights :math:`\beta(\text{radius}^2 - |x_j|^2)/2`.
    """
    d = _check_int("d", d, 1)
    beta = _check_pos("beta", beta)
    spacing_factor = _check_pos("spacing_factor", spacing_factor)
    radius = _check_pos("radius", radius)
    h = spacing_factor / np.sqrt(beta)
    K = int(np.floor(radius / h * (1 + 1e-12)))
    approx = (2 * K + 1) ** d
    if approx > 50 * max_points:
        raise ValueError(f"grid too large: about {approx} candidate points for d={d}, beta={beta}, "
                         f"spacing_factor={spacing_factor}; raise spacing_factor or lower beta")
    ks = np.arange(-K, K + 1)
    if d == 1:
        Z = ks[:, None].astype(np.float64)
    else:
        Z = np.array(list(itertools.product(ks, repeat=d)), dtype=np.float64) if approx <= 10**6 else \
            np.stack(np.meshgrid(*([ks] * d), indexing="ij"), axis=-1).reshape(-1, d).astype(np.float64)
    # keep |k| h <= radius, judged in integers to avoid rounding at the boundary
    keep = (Z ** 2).sum(axis=1) * h * h <= radius * radius * (1 + 1e-12)
    X = Z[keep] * h
    if X.shape[0] > max_points:
        raise ValueError(f"grid has {X.shape[0]} points > max_points={max_points}")
    log_w = 0.5 * beta * (radius ** 2 - (X ** 2).sum(axis=1))
    return X, np.maximum(log_w, 0.0)


def log_effective_token_count(log_weights) -> float:
    r"""Natural log of :math:`n_\text{eff} = \sum_j e^{\log w_j}` (computed stably, no overflow)."""
    w = np.asarray(log_weights, dtype=np.float64).reshape(-1)
    if w.size == 0:
        return -np.inf
    top = float(w.max())
    return top + float(np.log(np.exp(w - top).sum()))


def effective_token_count(log_weights) -> float:
    r"""Effective token count :math:`n_\text{eff} = \sum_j w_j = \sum_j e^{\log w_j}`.

    A key of multiplicity :math:`w_j` acts exactly as :math:`w_j` identical tokens
    (SPEC Prop. 1.4), so this is the number of tokens the weighted instance stands for.
    For the Gaussian ball (radius 1/2, spacing :math:`s/\sqrt\beta`),
    :math:`n_\text{eff} \approx (2\pi)^{d/2} s^{-d} e^{\beta/8}` (a Riemann sum of a Gaussian integral).
    Returns ``inf`` when the count overflows float64; use :func:`log_effective_token_count` then.

    Parameters
    ----------
    log_weights : array_like, shape (m,)

    Returns
    -------
    float
    """
    with np.errstate(over="ignore"):
        return float(np.exp(log_effective_token_count(log_weights)))
