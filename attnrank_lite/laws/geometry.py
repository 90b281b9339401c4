r"""Point configurations for attention instances.

Spherical sets (chapter 2): equispaced circle, Fibonacci sphere, maximal separated packings,
random uniform and clustered points on :math:`S^{d-1}`. Full-ball set (chapter 3): the
Gaussian-ball construction, a grid in the ball of radius 1/2 whose key log-weights turn softmax
attention into a Gaussian kernel.
"""
from __future__ import annotations

import itertools
from math import gamma as _gamma_fn
from math import pi

import numpy as np

from ..engine.checks import count_value, finite_nonnegative

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
    "sphere_area",
    "well_spread_sphere",
    "spread_report",
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

    .. math:: z_i = 1 - \frac{2i+1}{n},\quad \phi_i = i\,\pi(3-\sqrt5),\quad
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

    Point :math:`x = (c + \text{spread}\cdot g)/|c + \text{spread}\cdot g|` with ``c`` a centre
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
        cap = _ball_volume(d - 1) * (spacing / 2) ** (d - 1)
        area = sphere_area(d)
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


def sphere_area(d: int) -> float:
    r"""Surface area of the unit sphere :math:`S^{d-1} \subset \mathbb R^d`: :math:`2\pi^{d/2}/\Gamma(d/2)`.

    d = 2: :math:`2\pi`; d = 3: :math:`4\pi`; d = 4: :math:`2\pi^2`.
    """
    d = _check_int("d", d, 1)
    return 2 * pi ** (d / 2) / _gamma_fn(d / 2)


def _ball_volume(k: int) -> float:
    r"""Volume of the unit ball of :math:`\mathbb R^k`, :math:`\pi^{k/2}/\Gamma(k/2 + 1)`."""
    return pi ** (k / 2) / _gamma_fn(k / 2 + 1)


def _hopf_kronecker(n: int) -> np.ndarray:
    r"""``n`` points on :math:`S^3` from a Kronecker lattice through the Hopf coordinates.

    :math:`x = (\sqrt{1-u}\,e^{i\xi_1}, \sqrt u\,e^{i\xi_2})` maps the uniform measure of
    :math:`(u, \xi_1, \xi_2) \in [0,1]\times[0,2\pi)^2` to the uniform measure of :math:`S^3`;
    :math:`u_i = (i + 1/2)/n` and :math:`(\xi_1, \xi_2)/2\pi = \{i\alpha\}` with the
    :math:`R_2` sequence :math:`\alpha = (1/g, 1/g^2)`, g the plastic number (the d = 4 analogue of
    the Fibonacci sphere).
    """
    i = np.arange(n, dtype=np.float64)
    u = (i + 0.5) / n
    g = 1.324717957244746
    x1 = 2 * np.pi * ((i / g) % 1.0)
    x2 = 2 * np.pi * ((i / g ** 2) % 1.0)
    c, s = np.sqrt(1 - u), np.sqrt(u)
    return np.column_stack([c * np.cos(x1), c * np.sin(x1), s * np.cos(x2), s * np.sin(x2)])


def _repel(X: np.ndarray, iterations: int, neighbours: int = 16, tau: float = 0.1) -> np.ndarray:
    """Riesz-type repulsion among nearest neighbours; tangential steps capped at 0.3 spacings."""
    from scipy.spatial import cKDTree

    X = X.copy()
    d = X.shape[1]
    k = min(neighbours, X.shape[0] - 1)
    for _ in range(iterations):
        dist, idx = cKDTree(X).query(X, k=k + 1)
        h = float(np.median(dist[:, 1]))
        r = np.maximum(dist[:, 1:, None], 1e-12)
        F = ((X[:, None, :] - X[idx[:, 1:]]) / r * (h / r) ** (d + 1)).sum(axis=1)
        F -= (F * X).sum(axis=1, keepdims=True) * X
        step = tau * h * F / max(float(np.median(np.linalg.norm(F, axis=1))), 1e-300)
        sn = np.linalg.norm(step, axis=1, keepdims=True)
        step *= np.minimum(1.0, 0.3 * h / np.maximum(sn, 1e-300))
        X += step
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X


def well_spread_sphere(n: int, d: int, iterations: int | None = None, seed: int = 0) -> np.ndarray:
    r"""Exactly ``n`` well-spread points on :math:`S^{d-1}`, fast and deterministic.

    d = 2: the equispaced circle; d = 3: the Fibonacci sphere; d = 4: a Kronecker lattice in
    Hopf coordinates (the analogue of the Fibonacci sphere on :math:`S^3`) refined by
    ``iterations`` (default 20) steps of nearest-neighbour repulsion; d >= 5: uniform random
    points (``seed``) refined by ``iterations`` (default 30) repulsion steps. Use
    :func:`spread_report` for the separation and covering radius actually reached.

    Returns
    -------
    X : ndarray, shape (n, d)
        Unit rows.
    """
    n = _check_int("n", n, 1)
    d = _check_int("d", d, 2)
    if iterations is not None:
        iterations = _check_int("iterations", iterations, 0)
    if d == 2:
        return circle_points(n)
    if d == 3:
        return fibonacci_sphere(n)
    if n < 3:
        return random_sphere(n, d, seed=seed)
    if d == 4:
        return _repel(_hopf_kronecker(n), 20 if iterations is None else iterations)
    return _repel(random_sphere(n, d, seed=seed), 30 if iterations is None else iterations)


def spread_report(X, probes: int = 200_000, seed: int = 0) -> dict:
    r"""Separation and covering radius of a point set on :math:`S^{d-1}` (Euclidean distances).

    Returns
    -------
    dict
        ``n``, ``d``, ``min_separation`` (exact), ``mean_nn_distance``, ``covering_radius``
        (a *lower* estimate: the largest distance from ``probes`` uniform random points to the
        set) and ``ratio`` = covering radius / (min_separation / 2) (1 would be a perfect
        packing that is also a covering; for well-spread families it stays bounded as n grows).
    """
    from scipy.spatial import cKDTree

    X = np.asarray(X, dtype=np.float64)
    tree = cKDTree(X)
    dist, _ = tree.query(X, k=2)
    nn = dist[:, 1]
    P = random_sphere(_check_int("probes", probes, 1), X.shape[1], seed=seed)
    cover = float(tree.query(P)[0].max())
    sep = float(nn.min())
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "min_separation": sep,
            "mean_nn_distance": float(nn.mean()), "covering_radius": cover,
            "ratio": cover / (sep / 2) if sep > 0 else float("inf")}


def _check_int(name: str, v, low: int) -> int:
    return count_value(name, v, minimum=low)


def _check_pos(name: str, v) -> float:
    v = finite_nonnegative(name, v)
    if v <= 0:
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
    rounding (:func:`attnrank_lite.laws.ball_law.integer_log_multiplicities`): rounding
    :math:`1 \le w_j < 1.5` itself (near the boundary) to 1 changes a weight by up to a third.

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
    lattice factor :math:`\theta(s)` (:func:`attnrank_lite.laws.ball_law.theta_factor`) and
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
