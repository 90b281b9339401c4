r"""The Gaussian-ball construction in whole tokens (``prop-gaussian-ball``, ``thm-ball-law``).

:func:`attnrank_lite.laws.geometry.gaussian_ball` gives a grid in the ball of radius 1/2 with key
log-weights :math:`\log w_j = \beta(1/4 - |x_j|^2)/2 \ge 0`. This module turns that weighted
instance into statements about tokens:

* **Integer multiplicities.** A token instance needs integer multiplicities. Rounding
  :math:`w_j` itself moves weights near the boundary (:math:`1 \le w_j < 1.5` rounds to 1) by
  up to a third of their value.
  Scaling every weight by one integer :math:`K` first leaves every row's softmax unchanged
  (a common factor of all weights) and makes every relative rounding error at most
  :math:`1/(2K)`; the row-:math:`\ell_1` change of :math:`A` is then at most
  :func:`rounding_bound` ``(K)``, whatever :math:`\beta`.
* **Token count.** On the grid :math:`h\mathbb{Z}^d \cap \{|x| \le 1/2\}`, :math:`h = s/\sqrt\beta`,

  .. math:: n_\text{eff} = \sum_j w_j
            = (2\pi)^{d/2}\, s^{-d}\, \theta(s)^d\, e^{\beta/8}\, f_\beta,
     \qquad \theta(s) = 1 + 2\sum_{k\ge1} e^{-2\pi^2k^2/s^2},

  where :math:`\theta(s)` is the lattice (Riemann-sum) factor from Poisson summation — a
  constant, not :math:`1 + o(1)` — and :math:`f_\beta \in (0, 1]` is the fraction of the lattice
  Gaussian mass inside the ball, :math:`f_\beta \to 1` as :math:`\beta \to \infty`.
* **Sphere against ball.** Where the certified brackets of two instances are ordered.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine.attention import softmax_attention
from ..engine.checks import count_value, finite_nonnegative
from ..engine.norms import row_l1
from ..engine.perturbation import oscillation_bound
from .fitting import fit_loglog_slope
from .geometry import gaussian_ball, log_effective_token_count

__all__ = [
    "ball_maker",
    "certified_order",
    "integer_log_multiplicities",
    "integer_scale",
    "log_token_constant",
    "loglog_crossing",
    "rounding_bound",
    "rounding_table",
    "theta_direct",
    "theta_factor",
    "theta_table",
    "token_count_table",
]


def _positive(name: str, value) -> float:
    v = finite_nonnegative(name, value)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def theta_factor(s: float) -> float:
    r"""Lattice factor :math:`\theta(s) = 1 + 2\sum_{k\ge1} e^{-2\pi^2k^2/s^2}`.

    By Poisson summation, :math:`\sum_{k\in\mathbb{Z}} e^{-s^2k^2/2}
    = \frac{\sqrt{2\pi}}{s}\,\theta(s)`: the Riemann sum of the Gaussian
    :math:`e^{-\beta x^2/2}` on the grid :math:`(s/\sqrt\beta)\mathbb{Z}` exceeds the integral by
    the factor :math:`\theta(s)`, independent of :math:`\beta` (``prop-gaussian-ball``).

    Parameters
    ----------
    s : float
        Grid spacing in units of :math:`1/\sqrt\beta`, ``> 0``.

    Returns
    -------
    float
        :math:`\theta(s) \ge 1`; terms below :math:`e^{-45}` relative are dropped.
    """
    s = _positive("s", s)
    kmax = math.ceil(s * math.sqrt(45.0 / (2 * math.pi ** 2))) + 1
    k = np.arange(1, kmax + 1, dtype=np.float64)
    return float(1.0 + 2.0 * np.exp(-2 * math.pi ** 2 * k ** 2 / s ** 2).sum())


def theta_direct(s: float) -> float:
    r""":math:`\theta(s)` from the lattice sum itself:
    :math:`\frac{s}{\sqrt{2\pi}}\sum_{|k|\le k_\max} e^{-s^2k^2/2}`, with
    :math:`s^2k_\max^2/2 > 40` (the dropped terms are below :math:`e^{-40}` relative).

    A direct computation to check the Poisson-summation form :func:`theta_factor` against.
    """
    s = _positive("s", s)
    kmax = math.ceil(9.0 / s) + 1
    k = np.arange(-kmax, kmax + 1, dtype=np.float64)
    return float(s / math.sqrt(2 * math.pi) * np.exp(-0.5 * s ** 2 * k ** 2).sum())


def theta_table(spacings) -> pd.DataFrame:
    r""":math:`\theta(s)` by Poisson summation and by the direct lattice sum, per spacing.

    Returns
    -------
    pandas.DataFrame
        Columns ``s, theta_minus_1`` (Poisson form, :math:`\theta(s) - 1`), ``theta``,
        ``theta_direct`` and ``abs_difference``.
    """
    rows = []
    for s in spacings:
        t, t_direct = theta_factor(s), theta_direct(s)
        rows.append({"s": float(s), "theta_minus_1": t - 1.0, "theta": t,
                     "theta_direct": t_direct, "abs_difference": abs(t - t_direct)})
    return pd.DataFrame(rows)


def log_token_constant(d: int, s: float) -> float:
    r""":math:`\log\big((2\pi)^{d/2} s^{-d}\theta(s)^d\big)`, the limit of
    :math:`\log n_\text{eff} - \beta/8` (``prop-gaussian-ball``).

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    s : float
        Grid spacing in units of :math:`1/\sqrt\beta`, ``> 0``.
    """
    d = count_value("d", d, minimum=1)
    s = _positive("s", s)
    return d * (0.5 * math.log(2 * math.pi) - math.log(s) + math.log(theta_factor(s)))


def _estimated_grid_points(d: int, beta: float, s: float, radius: float) -> float:
    # volume of the ball of the given radius in units of the grid cell h^d
    h = s / math.sqrt(beta)
    vol = math.pi ** (d / 2) / math.gamma(d / 2 + 1) * radius ** d
    return vol / h ** d


def token_count_table(dims, betas, spacing_factor: float, radius: float = 0.5,
                      max_points: int = 2_000_000) -> pd.DataFrame:
    r"""Token counts of the Gaussian-ball grids against the prediction.

    For every ``d`` in ``dims`` and ``beta`` in ``betas`` (skipping grids estimated above
    ``max_points`` points), with :math:`c = \beta\,\text{radius}^2/2` the centre's log-weight:

    .. math:: \log n_\text{eff} - c = \log\big((2\pi)^{d/2}s^{-d}\theta(s)^d\big) + \log f_\beta.

    Parameters
    ----------
    dims : iterable of int
    betas : iterable of float
    spacing_factor : float
        :math:`s`, the grid spacing in units of :math:`1/\sqrt\beta`.
    radius : float
        Ball radius (1/2 gives :math:`c = \beta/8`).
    max_points : int
        Grids estimated larger than this are skipped.

    Returns
    -------
    pandas.DataFrame
        Columns ``d, beta, grid_points, log_n_eff, log_centre_weight, log_ratio,
        log_theta_d`` (:math:`d\log\theta(s)`), ``log_constant`` and ``log_mass_fraction``
        (:math:`\log f_\beta = ` log_ratio - log_constant, :math:`\le 0` up to rounding).
    """
    s = _positive("spacing_factor", spacing_factor)
    rows = []
    for d in dims:
        for beta in betas:
            if _estimated_grid_points(d, beta, s, radius) > max_points:
                continue
            X, lw = gaussian_ball(d, beta, spacing_factor=s, radius=radius)
            log_n = log_effective_token_count(lw)
            centre = 0.5 * beta * radius ** 2
            const = log_token_constant(d, s)
            rows.append({"d": d, "beta": beta, "grid_points": X.shape[0], "log_n_eff": log_n,
                         "log_centre_weight": centre, "log_ratio": log_n - centre,
                         "log_theta_d": d * math.log(theta_factor(s)), "log_constant": const,
                         "log_mass_fraction": log_n - centre - const})
    return pd.DataFrame(rows)


def rounding_bound(K: int) -> float:
    r"""Row-:math:`\ell_1` change of :math:`A` when weights :math:`w_j \ge 1` are replaced by
    the integers :math:`m_j = \operatorname{round}(K w_j)` (``prop-gaussian-ball``).

    :math:`m_j = K w_j (1 + \delta_j)` with :math:`|\delta_j| \le 1/(2Kw_j) \le 1/(2K)`; the
    common factor :math:`K` drops out of every row's softmax, and the log-weight perturbation
    :math:`\log(1+\delta_j)` has oscillation at most
    :math:`\rho_K = \log\frac{2K+1}{2K-1}`, so by ``lem-softmax-perturbation`` every row moves
    by at most :math:`2\tanh(\rho_K/4) \approx 1/(2K)`.

    Parameters
    ----------
    K : int
        Integer scale, ``>= 1``.

    Returns
    -------
    float
    """
    K = count_value("K", K, minimum=1)
    rho = math.log1p(2.0 / (2 * K - 1))
    return float(oscillation_bound(rho))


def integer_scale(tol: float) -> int:
    r"""Smallest integer :math:`K \ge 1` with :func:`rounding_bound` ``(K) <= tol``.

    Parameters
    ----------
    tol : float
        Allowed row-:math:`\ell_1` change of :math:`A`, ``> 0``.

    Returns
    -------
    int
        About :math:`1/(2\,\text{tol})`.
    """
    tol = _positive("tol", tol)
    K = max(1, math.ceil(1.0 / (2.0 * tol)) - 2)
    while rounding_bound(K) > tol:
        K += 1
    while K > 1 and rounding_bound(K - 1) <= tol:
        K -= 1
    return K


def integer_log_multiplicities(log_weights, K: int) -> np.ndarray:
    r"""Log of the integer multiplicities :math:`m_j = \operatorname{round}(K w_j)`.

    Requires :math:`w_j \ge 1` (log-weights :math:`\ge 0`, as in
    :func:`~attnrank_lite.laws.geometry.gaussian_ball`), so every :math:`m_j \ge K \ge 1`.
    Where :math:`K w_j \ge 2^{52}` the rounding changes the weight by less than one part in
    :math:`2^{53}`, below the resolution of a float log-weight: :math:`\log K + \log w_j` is
    returned there.

    Parameters
    ----------
    log_weights : array_like, shape (m,)
        :math:`\log w_j \ge 0`.
    K : int
        Integer scale, ``>= 1``.

    Returns
    -------
    ndarray, shape (m,)
        :math:`\log m_j`.
    """
    K = count_value("K", K, minimum=1)
    lw = np.asarray(log_weights, dtype=np.float64).reshape(-1)
    if not np.isfinite(lw).all() or (lw < 0).any():
        raise ValueError("log_weights must be finite and >= 0 (weights w_j >= 1)")
    out = math.log(K) + lw
    small = out < 52 * math.log(2)
    out[small] = np.log(np.rint(K * np.exp(lw[small])))
    return out


def rounding_table(d: int, betas, spacing_factor: float, K: int, block: int = 1024) -> pd.DataFrame:
    r"""Measured effect of integer multiplicities on the Gaussian-ball attention matrix.

    For every ``beta``: :math:`A` with the exact weights, :math:`A_K` with
    :math:`m_j = \operatorname{round}(K w_j)` and :math:`A_1` with
    :math:`\operatorname{round}(w_j)`; the max row-:math:`\ell_1` changes against
    :func:`rounding_bound`. Rows are processed in blocks of ``block`` queries.

    Returns
    -------
    pandas.DataFrame
        Columns ``beta, grid_points, K, change_K, bound_K, change_1, bound_1,
        log_tokens_K`` (natural log of :math:`\sum_j m_j`).
    """
    K = count_value("K", K, minimum=1)
    block = count_value("block", block, minimum=1)
    rows = []
    for beta in betas:
        X, lw = gaussian_ball(d, beta, spacing_factor=spacing_factor)
        lw_K = integer_log_multiplicities(lw, K)
        lw_1 = integer_log_multiplicities(lw, 1)
        change_K = change_1 = 0.0
        for start in range(0, X.shape[0], block):
            Q = X[start:start + block]
            A = softmax_attention(Q, X, beta, lw)
            change_K = max(change_K, row_l1(softmax_attention(Q, X, beta, lw_K) - A))
            change_1 = max(change_1, row_l1(softmax_attention(Q, X, beta, lw_1) - A))
        rows.append({"beta": beta, "grid_points": X.shape[0], "K": K,
                     "change_K": change_K, "bound_K": rounding_bound(K),
                     "change_1": change_1, "bound_1": rounding_bound(1),
                     "log_tokens_K": log_effective_token_count(lw_K)})
    return pd.DataFrame(rows)


def certified_order(a: pd.DataFrame, b: pd.DataFrame, names=("a", "b"),
                    key: str = "beta") -> pd.DataFrame:
    r"""Where two families of certified brackets are ordered.

    Parameters
    ----------
    a, b : pandas.DataFrame
        Bracket tables with columns ``key``, ``lower``, ``upper`` (one eps each).
    names : pair of str
        Names of ``a`` and ``b`` in the column names and in ``order``.

    Returns
    -------
    pandas.DataFrame
        One row per common ``key`` value: ``lower_<name>``, ``upper_<name>`` for both, and
        ``order``: ``"<a> above"`` when the lower end of ``a`` exceeds the upper end of ``b``
        (then the rank of ``a`` is certified larger), ``"<b> above"`` symmetrically, else
        ``"overlap"`` (not decided by the certificates).
    """
    na, nb = names
    m = a[[key, "lower", "upper"]].merge(b[[key, "lower", "upper"]], on=key,
                                          suffixes=(f"_{na}", f"_{nb}"))
    m["order"] = np.where(m[f"lower_{na}"] > m[f"upper_{nb}"], f"{na} above",
                          np.where(m[f"lower_{nb}"] > m[f"upper_{na}"], f"{nb} above", "overlap"))
    return m.sort_values(key).reset_index(drop=True)


def loglog_crossing(x, y1, y2) -> float:
    r"""Where the least-squares lines of :math:`\log y_1` and :math:`\log y_2` against
    :math:`\log x` cross (an extrapolation, not a certificate).

    Returns
    -------
    float
        :math:`x^\star` with equal fitted values, or ``nan`` when the slopes are equal.
    """
    f1, f2 = fit_loglog_slope(x, y1), fit_loglog_slope(x, y2)
    if f1.slope == f2.slope:
        return float("nan")
    return float(math.exp((f2.intercept - f1.intercept) / (f1.slope - f2.slope)))


def ball_maker(d: int, spacing_factor: float, weighted: bool = True,
               grid_beta: float | None = None):
    r"""A function ``beta -> (A, {"log_n_eff": ...})`` for the Gaussian-ball sweeps of chapter 3.

    Default (``grid_beta=None``): at each beta the construction of ``prop-gaussian-ball``, the
    grid of spacing ``spacing_factor / sqrt(beta)`` in the ball of radius 1/2, so its number of
    points grows like :math:`\beta^{d/2}`. With ``grid_beta``: the **fixed** grid built for
    ``grid_beta`` at every beta (a fixed grid: the matrix size is fixed, the token count
    is not), with the key log-weights
    :math:`\tfrac\beta2(\tfrac14 - |x_j|^2)` of the current beta, so that A is still the
    row-normalised Gaussian kernel :math:`e^{-\beta|x_i-x_j|^2/2}` on those points.
    ``weighted=False``: uniform multiplicities on the same points.

    ``log_n_eff`` is :func:`attnrank_lite.laws.geometry.log_effective_token_count` of the
    weights (``log n`` without weights). The function's attribute ``recipe`` maps beta to the
    instance as a recipe ``dict(Q=X, beta=beta, log_weights=lw or None)`` (for certificate files,
    :func:`attnrank_lite.laws.sweeps.bracket_sweep`).
    """
    fixed = None if grid_beta is None else gaussian_ball(d, grid_beta,
                                                         spacing_factor=spacing_factor)[0]

    def points(beta):
        if fixed is None:
            return gaussian_ball(d, beta, spacing_factor=spacing_factor)
        return fixed, 0.5 * float(beta) * (0.25 - (fixed * fixed).sum(axis=1))

    def make(beta):
        X, lw = points(beta)
        A = softmax_attention(X, X, beta, lw if weighted else None)
        log_n = log_effective_token_count(lw) if weighted else float(np.log(X.shape[0]))
        return A, {"log_n_eff": log_n}

    def recipe(beta):
        X, lw = points(beta)
        return {"Q": X, "beta": beta, "log_weights": lw if weighted else None}

    make.recipe = recipe
    return make
