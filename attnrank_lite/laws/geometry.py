r"""Point sets on :math:`S^{d-1}` (the book's well-spread set, packings, random, clustered) and
the Gaussian-ball construction of chapter 3."""
from __future__ import annotations

from math import gamma as _gamma_fn
from math import pi

import numpy as np

from ..engine.checks import count_value, finite_nonnegative

__all__ = ["ball_volume", "circle_points", "fibonacci_sphere", "random_sphere", "clustered_sphere",
           "separated_packing", "gaussian_ball", "log_effective_token_count", "uniform_ball", "sphere_area",
           "well_spread_sphere", "spread_report"]


def circle_points(n: int, offset: float = 0.0) -> np.ndarray:
    r"""``n`` equispaced points :math:`(\cos\theta_i, \sin\theta_i)`, :math:`\theta_i = \text{offset} + 2\pi i/n`."""
    theta = offset + 2 * np.pi * np.arange(n) / n
    return np.column_stack([np.cos(theta), np.sin(theta)])


def fibonacci_sphere(n: int) -> np.ndarray:
    r"""The Fibonacci (golden-spiral) lattice of ``n`` points on :math:`S^2`, shape (n, 3):
    :math:`z_i = 1 - (2i+1)/n`, :math:`\phi_i = i\pi(3-\sqrt5)`,
    :math:`x_i = (\sqrt{1-z_i^2}\cos\phi_i, \sqrt{1-z_i^2}\sin\phi_i, z_i)` (equal area in z)."""
    n = count_value("n", n, 1)
    i = np.arange(n, dtype=np.float64)
    z = 1.0 - (2.0 * i + 1.0) / n
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = i * np.pi * (3.0 - np.sqrt(5.0))
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


def random_sphere(n: int, d: int, seed: int = 0) -> np.ndarray:
    r"""``n`` independent uniform points on :math:`S^{d-1}` (normalised Gaussian vectors), (n, d)."""
    n = count_value("n", n, 1)
    d = count_value("d", d, 1)
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, d))
    nrm = np.linalg.norm(G, axis=1, keepdims=True)
    while (nrm == 0).any():  # probability zero, but keep the output on the sphere
        bad = nrm[:, 0] == 0
        G[bad] = rng.standard_normal((int(bad.sum()), d))
        nrm = np.linalg.norm(G, axis=1, keepdims=True)
    return G / nrm


def clustered_sphere(n: int, d: int, clusters: int = 8, spread: float = 0.15, seed: int = 0) -> np.ndarray:
    r"""``n`` points on :math:`S^{d-1}` around ``clusters`` uniform random centres (round-robin):
    :math:`x = (c + \text{spread}\,g)/|c + \text{spread}\,g|`, ``g`` standard Gaussian."""
    n = count_value("n", n, 1)
    clusters = count_value("clusters", clusters, 1)
    spread = float(spread)
    if not np.isfinite(spread) or spread < 0:
        raise ValueError(f"spread must be a finite number >= 0, got {spread!r}")
    rng = np.random.default_rng(seed)
    C = random_sphere(clusters, d, seed=int(rng.integers(2**31)))
    Y = C[np.arange(n) % clusters] + spread * rng.standard_normal((n, d))
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def separated_packing(d: int, spacing: float, candidates: int | None = None, seed: int = 0,
                      max_points: int = 200_000) -> np.ndarray:
    r"""A maximal ``spacing``-separated set on :math:`S^{d-1}` (``0 < spacing <= 2``): uniform
    random candidates (default about 30 times the predicted size) kept greedily in order."""
    from scipy.spatial import cKDTree

    d = count_value("d", d, 2)
    spacing = float(spacing)
    if not np.isfinite(spacing) or not 0 < spacing <= 2:
        raise ValueError(f"spacing must be in (0, 2], got {spacing!r}")
    if candidates is None:
        # surface area of S^{d-1} over the area of a cap of chordal radius spacing/2 (flat estimate)
        cap = ball_volume(d - 1) * (spacing / 2) ** (d - 1)
        area = sphere_area(d)
        candidates = int(min(50 * max_points, max(1000, 30 * area / cap)))
    C = random_sphere(count_value("candidates", candidates, 1), d, seed=seed)
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


def sphere_area(d: int) -> float:
    r"""Surface area of :math:`S^{d-1} \subset \mathbb R^d`, :math:`2\pi^{d/2}/\Gamma(d/2)`."""
    d = count_value("d", d, 1)
    return 2 * pi ** (d / 2) / _gamma_fn(d / 2)


def ball_volume(k: float) -> float:
    r"""Volume of the unit ball of :math:`\mathbb R^k`, :math:`\pi^{k/2}/\Gamma(k/2 + 1)`."""
    return pi ** (k / 2) / _gamma_fn(k / 2 + 1)


def _hopf_kronecker(n: int) -> np.ndarray:
    r"""``n`` points on :math:`S^3`: :math:`x = (\sqrt{1-u}\,e^{i\xi_1}, \sqrt u\,e^{i\xi_2})`
    (uniform-measure preserving) at :math:`u_i = (i + 1/2)/n`, :math:`(\xi_1, \xi_2)/2\pi =
    \{i/g, i/g^2\}`, g the plastic number (the d = 4 analogue of the Fibonacci sphere)."""
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
    """The book's well-spread set of ``n`` points on :math:`S^{d-1}`: circle, Fibonacci sphere, Hopf-Kronecker
    lattice (d = 4) or random (d >= 5), refined by ``iterations`` (default 20, resp. 30) steps of repulsion."""
    n = count_value("n", n, 1)
    d = count_value("d", d, 2)
    if iterations is not None:
        iterations = count_value("iterations", iterations, 0)
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
    """``n``, ``d``, ``min_separation``, ``mean_nn_distance``, ``covering_radius`` (lower estimate from
    ``probes`` points), ``ratio`` = covering radius / (min_separation / 2)."""
    from scipy.spatial import cKDTree

    X = np.asarray(X, dtype=np.float64)
    tree = cKDTree(X)
    dist, _ = tree.query(X, k=2)
    nn = dist[:, 1]
    P = random_sphere(count_value("probes", probes, 1), X.shape[1], seed=seed)
    cover = float(tree.query(P)[0].max())
    sep = float(nn.min())
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "min_separation": sep,
            "mean_nn_distance": float(nn.mean()), "covering_radius": cover,
            "ratio": cover / (sep / 2) if sep > 0 else float("inf")}


def positive(name: str, v) -> float:
    """``v`` as a float, ``ValueError`` naming ``name`` unless it is finite and > 0."""
    v = finite_nonnegative(name, v)
    if v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return v


def gaussian_ball(d: int, beta: float, spacing_factor: float = 0.5, radius: float = 0.5,
                  max_points: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
    r"""``prop-gaussian-ball``: ``X`` = :math:`h\mathbb{Z}^d \cap \{|x| \le \text{radius}\}`,
    :math:`h = \text{spacing\_factor}/\sqrt\beta` (at most ``max_points``), and log-weights
    :math:`\tfrac{\beta}{2}(\text{radius}^2 - |x_j|^2) \ge 0`: the attention is the row-normalised
    Gaussian kernel :math:`e^{-\beta|x_i - x_j|^2/2}`."""
    d = count_value("d", d, 1)
    beta = positive("beta", beta)
    spacing_factor = positive("spacing_factor", spacing_factor)
    radius = positive("radius", radius)
    h = spacing_factor / np.sqrt(beta)
    K = int(np.floor(radius / h * (1 + 1e-12)))
    approx = (2 * K + 1) ** d
    if approx > 50 * max_points:
        raise ValueError(f"grid too large: about {approx} candidate points for d={d}, beta={beta}, "
                         f"spacing_factor={spacing_factor}; raise spacing_factor or lower beta")
    ks = np.arange(-K, K + 1)
    Z = np.stack(np.meshgrid(*([ks] * d), indexing="ij"), axis=-1).reshape(-1, d).astype(np.float64)
    # keep |k| h <= radius, judged in integers to avoid rounding at the boundary
    keep = (Z ** 2).sum(axis=1) * h * h <= radius * radius * (1 + 1e-12)
    X = Z[keep] * h
    if X.shape[0] > max_points:
        raise ValueError(f"grid has {X.shape[0]} points > max_points={max_points}")
    log_w = 0.5 * beta * (radius ** 2 - (X ** 2).sum(axis=1))
    return X, np.maximum(log_w, 0.0)


def log_effective_token_count(log_weights) -> float:
    r"""Natural log of :math:`n_\text{eff} = \sum_j e^{\log w_j}` (``prop-multiplicity``), no overflow."""
    w = np.asarray(log_weights, dtype=np.float64).reshape(-1)
    if w.size == 0:
        return -np.inf
    top = float(w.max())
    return top + float(np.log(np.exp(w - top).sum()))


def uniform_ball(N: int, r: int, radius: float = 1.0, seed: int = 0) -> np.ndarray:
    """``N`` independent uniform points in the ``r``-ball of radius ``radius``, shape (N, r)."""
    N = count_value("N", N, 0)
    r = count_value("r", r, 1)
    radius = positive("radius", radius)
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((N, r))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    return radius * Z * rng.random((N, 1)) ** (1.0 / r)
