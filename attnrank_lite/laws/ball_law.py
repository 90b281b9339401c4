r"""The Gaussian-ball construction in whole tokens (``prop-gaussian-ball``, ``thm-ball-law``): integer
multiplicities, the token count :math:`(2\pi)^{d/2} s^{-d}\theta(s)^d e^{\beta/8} f_\beta`, orders."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine.attention import softmax_attention
from ..engine.checks import count_value
from ..engine.norms import row_l1
from ..engine.perturbation import oscillation_bound
from .fitting import fit_loglog_slope
from .geometry import ball_volume, gaussian_ball, log_effective_token_count
from .geometry import positive as _positive

__all__ = ["ball_maker", "certified_order", "integer_log_multiplicities", "integer_scale",
           "log_token_constant", "loglog_crossing", "rounding_bound", "rounding_table",
           "theta_direct", "theta_factor", "theta_table", "token_count_table"]


def theta_factor(s: float) -> float:
    r"""Lattice factor :math:`\theta(s) = 1 + 2\sum_{k\ge1} e^{-2\pi^2k^2/s^2}` (terms below :math:`e^{-45}`
    dropped): by Poisson summation :math:`\sum_{k\in\mathbb{Z}} e^{-s^2k^2/2} = \frac{\sqrt{2\pi}}{s}\theta(s)`."""
    s = _positive("s", s)
    kmax = math.ceil(s * math.sqrt(45.0 / (2 * math.pi ** 2))) + 1
    k = np.arange(1, kmax + 1, dtype=np.float64)
    return float(1.0 + 2.0 * np.exp(-2 * math.pi ** 2 * k ** 2 / s ** 2).sum())


def theta_direct(s: float) -> float:
    r""":math:`\theta(s)` from the lattice sum :math:`\frac{s}{\sqrt{2\pi}}\sum_{|k|\le k_\max} e^{-s^2k^2/2}`."""
    s = _positive("s", s)
    kmax = math.ceil(9.0 / s) + 1
    k = np.arange(-kmax, kmax + 1, dtype=np.float64)
    return float(s / math.sqrt(2 * math.pi) * np.exp(-0.5 * s ** 2 * k ** 2).sum())


def theta_table(spacings) -> pd.DataFrame:
    """Per spacing ``s``: ``theta_minus_1``, ``theta``, ``theta_direct`` and ``abs_difference``."""
    s = [float(v) for v in spacings]
    t, t_direct = np.array([theta_factor(v) for v in s]), np.array([theta_direct(v) for v in s])
    return pd.DataFrame({"s": s, "theta_minus_1": t - 1.0, "theta": t, "theta_direct": t_direct,
                         "abs_difference": np.abs(t - t_direct)})


def log_token_constant(d: int, s: float) -> float:
    r""":math:`\log((2\pi)^{d/2} s^{-d}\theta(s)^d)`, the limit of :math:`\log n_\text{eff} - \beta/8`."""
    d = count_value("d", d, minimum=1)
    s = _positive("s", s)
    return d * (0.5 * math.log(2 * math.pi) - math.log(s) + math.log(theta_factor(s)))


def token_count_table(dims, betas, spacing_factor: float, radius: float = 0.5,
                      max_points: int = 2_000_000) -> pd.DataFrame:
    r"""Token counts of the Gaussian-ball grids (above ``max_points`` skipped) against
    :math:`\log n_\text{eff} - \beta\,\text{radius}^2/2 = \log((2\pi)^{d/2}s^{-d}\theta(s)^d) +
    \log f_\beta`, with ``log_mass_fraction`` :math:`\log f_\beta \le 0`."""
    s = _positive("spacing_factor", spacing_factor)
    rows = []
    for d in dims:
        for beta in betas:
            if ball_volume(d) * radius ** d / (s / math.sqrt(beta)) ** d > max_points:  # grid cells
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
    r"""Row-:math:`\ell_1` change of :math:`A` when weights :math:`w_j \ge 1` become
    :math:`m_j = \operatorname{round}(K w_j) = K w_j (1 + \delta_j)`, :math:`|\delta_j| \le 1/(2K)`:
    the factor K drops out of the softmax and :math:`\log(1+\delta_j)` has oscillation at most
    :math:`\rho_K = \log\frac{2K+1}{2K-1}`, so by ``lem-softmax-perturbation`` each row moves by
    at most :math:`2\tanh(\rho_K/4) \approx 1/(2K)`."""
    K = count_value("K", K, minimum=1)
    rho = math.log1p(2.0 / (2 * K - 1))
    return float(oscillation_bound(rho))


def integer_scale(tol: float) -> int:
    r"""Smallest integer :math:`K \ge 1` with :func:`rounding_bound` ``(K) <= tol``."""
    tol = _positive("tol", tol)
    K = max(1, math.ceil(1.0 / (2.0 * tol)) - 2)
    while rounding_bound(K) > tol:
        K += 1
    while K > 1 and rounding_bound(K - 1) <= tol:
        K -= 1
    return K


def integer_log_multiplicities(log_weights, K: int) -> np.ndarray:
    r"""Log of the integer multiplicities :math:`m_j = \operatorname{round}(K w_j) \ge K` for
    log-weights :math:`\log w_j \ge 0` (:math:`\log K + \log w_j` where :math:`K w_j \ge 2^{52}`)."""
    K = count_value("K", K, minimum=1)
    lw = np.asarray(log_weights, dtype=np.float64).reshape(-1)
    if not np.isfinite(lw).all() or (lw < 0).any():
        raise ValueError("log_weights must be finite and >= 0 (weights w_j >= 1)")
    out = math.log(K) + lw
    small = out < 52 * math.log(2)
    out[small] = np.log(np.rint(K * np.exp(lw[small])))
    return out


def rounding_table(d: int, betas, spacing_factor: float, K: int, block: int = 1024) -> pd.DataFrame:
    r"""Per ``beta``, the max row-:math:`\ell_1` change to :math:`\operatorname{round}(K w_j)` and to
    :math:`\operatorname{round}(w_j)` against :func:`rounding_bound`, and ``log_tokens_K``."""
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


def certified_order(a: pd.DataFrame, b: pd.DataFrame, names=("a", "b"), key: str = "beta") -> pd.DataFrame:
    r"""Per common ``key`` of bracket tables ``a``, ``b``: ``order`` ``"<a> above"`` when a's lower
    end exceeds b's upper end, ``"<b> above"`` symmetrically, else ``"overlap"``."""
    na, nb = names
    m = a[[key, "lower", "upper"]].merge(b[[key, "lower", "upper"]], on=key, suffixes=(f"_{na}", f"_{nb}"))
    m["order"] = np.where(m[f"lower_{na}"] > m[f"upper_{nb}"], f"{na} above",
                          np.where(m[f"lower_{nb}"] > m[f"upper_{na}"], f"{nb} above", "overlap"))
    return m.sort_values(key).reset_index(drop=True)


def loglog_crossing(x, y1, y2) -> float:
    r"""Where the least-squares lines of :math:`\log y_1`, :math:`\log y_2` on :math:`\log x` cross (nan: parallel)."""
    f1, f2 = fit_loglog_slope(x, y1), fit_loglog_slope(x, y2)
    if f1.slope == f2.slope:
        return float("nan")
    return float(math.exp((f2.intercept - f1.intercept) / (f1.slope - f2.slope)))


def ball_maker(d: int, spacing_factor: float, weighted: bool = True, grid_beta: float | None = None):
    r"""``beta -> (A, {"log_n_eff": ...})`` on the grid of ``prop-gaussian-ball`` (with ``grid_beta``:
    that beta's fixed grid); ``weighted=False``: uniform multiplicities; ``.recipe``: the instance."""
    fixed = None if grid_beta is None else gaussian_ball(d, grid_beta, spacing_factor=spacing_factor)[0]

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
