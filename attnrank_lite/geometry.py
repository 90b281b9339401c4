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
    "fibonacci_sphere",
    "random_sphere",
    "clustered_sphere",
    "separated_packing",
    "min_separation",
    "covering_radius",
    "gaussian_ball",
    "effective_token_count",
    "log_effective_token_count",
    "uniform_ball",
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


def fibonacci_sphere(n: int) -> np.ndarray:
    r"""``n`` well-spread points on :math:`S^2` (the Fibonacci / golden-spiral lattice).

    .. math:: z_i = 1 - rac{2i+1}{n},\quad \phi_i = i\,\pi(3-\sqrt5),\quad
              x_i = (\sqrt{1-z_i^2}\cos\phi_i, \sqrt{1-z_i^2}\sin\phi_i, z_i),\ i = 0..n-1.

    Equal-area in :math:`z` (each point owns a band of area :math:`4\pi/n`); nearest-neighbour
    distances are about :math:`\sqrt{4\pi/n}` up to a constant.

    Returns
    -------
    X : ndarray, shape (n, 3)
    """
    n = _check_int("n", n, 1)
    i = np.arange(n, dtype=np.float64)
    z = 1.0 - (2.0 * i + 1.0) / n
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = i * np.pi * (3.0 - np.sqrt(5.0))
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


def random_sphere(n: int, d: int, seed: int = 0) -> np.ndarray:
    r"""``n`` independent uniform points on :math:`S^{d-1}` (normalised Gaussian vectors).

    Returns
    -------
    X : ndarray, shape (n, d)
    """
    n = _check_int("n", n, 1)
    d = _check_int("d", d, 1)
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, d))
    nrm = np.linalg.norm(G, axis=1, keepdims=True)
    while (nrm == 0).any():  # probability zero, but keep the output on the sphere
        bad = nrm[:, 0] == 0
        G[bad] = rng.standard_normal((int(bad.sum()), d))
        nrm = np.linalg.norm(G, axis=1, keepdims=True)
    return G / nrm


def clustered_sphere(n: int, d: int, clusters: int = 8, spread: float = 0.15, seed: int = 0) -> np.ndarray:
    r"""``n`` points on :math:`S^{d-1}` in ``clusters`` groups around uniform random centres.

    Point :math:`x = (c + 	ext{spread}\cdot g)/|c + 	ext{spread}\cdot g|` with ``c`` a centre
    (assigned round-robin) and ``g`` standard Gaussian: angular spread about ``spread`` radians.

    Returns
    -------
    X : ndarray, shape (n, d)
    """
    n = _check_int("n", n, 1)
    clusters = _check_int("clusters", clusters, 1)
    spread = float(spread)
    if not np.isfinite(spread) or spread < 0:
        raise ValueError(f"spread must be a finite number >= 0, got {spread!r}")
    rng = np.random.default_rng(seed)
    C = random_sphere(clusters, d, seed=int(rng.integers(2**31)))
    Y = C[np.arange(n) % clusters] + spread * rng.standard_normal((n, d))
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def separated_packing(d: int, spacing: float, candidates: int | None = None, seed: int = 0,
                      max_points: int = 200_000) -> np.ndarray:
    r"""A maximal ``spacing``-separated set on :math:`S^{d-1}` (greedy over dense candidates).

    Candidates are uniform random points (``candidates`` of them, by default about 30 times the
    packing size expected from the volume ratio). They are scanned in random order; a candidate
    is kept when its Euclidean distance to every kept point is at least ``spacing``. The result
    is ``spacing``-separated (pairwise distances ``>= spacing``) and maximal among the candidates:
    every candidate lies within ``spacing`` of a kept point, so the covering radius of the set is
    at most ``spacing`` plus the covering radius of the candidates.

    Parameters
    ----------
    d : int
        Ambient dimension (points on :math:`S^{d-1}`), ``d >= 2``.
    spacing : float
        Minimum Euclidean (chordal) distance, ``0 < spacing <= 2``.

    Returns
    -------
    X : ndarray, shape (k, d)
    """
    from scipy.spatial import cKDTree

    d = _check_int("d", d, 2)
    spacing = float(spacing)
    if not np.isfinite(spacing) or not 0 < spacing <= 2:
        raise ValueError(f"spacing must be in (0, 2], got {spacing!r}")
    if candidates is None:
        # surface area of S^{d-1} over the area of a cap of chordal radius spacing/2 (flat estimate)
        from math import gamma as G, pi
        area = 2 * pi ** (d / 2) / G(d / 2)
        cap = pi ** ((d - 1) / 2) / G((d + 1) / 2) * (spacing / 2) ** (d - 1)
        candidates = int(min(50 * max_points, max(1000, 30 * area / cap)))
    C = random_sphere(_check_int("candidates", candidates, 1), d, seed=seed)
    tree = cKDTree(C)
    alive = np.ones(C.shape[0], dtype=bool)
    keep = []
    r = spacing * (1 - 1e-12)
    for i in range(C.shape[0]):
        if not alive[i]:
            continue
        keep.append(i)
        if len(keep) > max_points:
            raise ValueError(f"packing exceeds max_points={max_points}; increase spacing")
        alive[tree.query_ball_point(C[i], r)] = False
    return C[np.asarray(keep)]


def min_separation(X) -> float:
    """Smallest Euclidean distance between two distinct rows of ``X`` (shape (n, d))."""
    from scipy.spatial import cKDTree

    X = np.asarray(X, dtype=np.float64)
    dist, _ = cKDTree(X).query(X, k=2)
    return float(dist[:, 1].min())


def covering_radius(X, probes) -> float:
    """Largest distance from a probe point (rows of ``probes``) to its nearest row of ``X``."""
    from scipy.spatial import cKDTree

    dist, _ = cKDTree(np.asarray(X, dtype=np.float64)).query(np.asarray(probes, dtype=np.float64))
    return float(dist.max())


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
    :math:`A_{ij} \propto e^{-\beta|x_i - x_j|^2/2}` (``prop-gaussian-ball``).

    The weights are real numbers. For whole tokens scale them by an integer :math:`K` before
    rounding (:func:`attnrank_lite.ball_law.integer_log_multiplicities`): rounding
    :math:`w_j \approx 1` itself near the boundary changes a weight by up to 50%.

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

    A key of integer multiplicity :math:`w_j` acts exactly as :math:`w_j` identical tokens
    (``prop-multiplicity``), so this is the number of tokens the weighted instance stands for.
    For the Gaussian ball (radius 1/2, spacing :math:`s/\sqrt\beta`),
    :math:`n_\text{eff} = (2\pi)^{d/2} s^{-d}\theta(s)^d e^{\beta/8} f_\beta` with the constant
    lattice factor :math:`\theta(s)` (:func:`attnrank_lite.ball_law.theta_factor`) and
    :math:`f_\beta \to 1` (``prop-gaussian-ball``).
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


def uniform_ball(N: int, r: int, radius: float = 1.0, seed: int = 0) -> np.ndarray:
    """``N`` independent uniform points in the ``r``-ball of radius ``radius``.

    Returns
    -------
    ndarray, shape (N, r)
        Direction uniform on the sphere, radius ``radius * U^(1/r)``.
    """
    N = _check_int("N", N, 0)
    r = _check_int("r", r, 1)
    radius = _check_pos("radius", radius)
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((N, r))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    return radius * Z * rng.random((N, 1)) ** (1.0 / r)
