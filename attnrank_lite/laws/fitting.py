r"""Power-law slopes on log-log data: least squares of :math:`\log y` on :math:`\log x` with a
Student-t interval :math:`\hat s \pm t_{1-\alpha/2,\,k-2}\,\mathrm{se}(\hat s)` (k points)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["SlopeFit", "fit_loglog_slope", "interval_text", "reference_line"]


@dataclass(frozen=True)
class SlopeFit:
    r""":math:`\log y \approx \text{intercept} + \text{slope}\,\log x`, the slope's ``stderr`` and
    interval ``[ci_low, ci_high]`` at ``level`` (nan and infinite for two points)."""

    slope: float
    intercept: float
    stderr: float
    ci_low: float
    ci_high: float
    level: float
    npoints: int


def fit_loglog_slope(x, y, level: float = 0.95) -> SlopeFit:
    r"""Least-squares slope of :math:`\log y` on :math:`\log x` with a t interval at ``level``."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if x.shape != y.shape:
        raise ValueError(f"x and y need the same length, got {x.size} and {y.size}")
    if x.size < 2 or np.unique(x).size < 2:
        raise ValueError("need at least two distinct x values")
    if not (np.isfinite(x).all() and np.isfinite(y).all()) or (x <= 0).any() or (y <= 0).any():
        raise ValueError("x and y must be finite and positive for a log-log fit")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    lx, ly = np.log(x), np.log(y)
    k = lx.size
    mx = lx.mean()
    sxx = float(((lx - mx) ** 2).sum())
    slope = float(((lx - mx) * (ly - ly.mean())).sum() / sxx)
    intercept = float(ly.mean() - slope * mx)
    if k == 2:
        return SlopeFit(slope, intercept, float("nan"), -np.inf, np.inf, level, k)
    resid = ly - (intercept + slope * lx)
    s2 = float((resid ** 2).sum() / (k - 2))
    se = float(np.sqrt(s2 / sxx))
    t = float(stats.t.ppf(0.5 + level / 2, k - 2))
    return SlopeFit(slope, intercept, se, slope - t * se, slope + t * se, level, k)


def interval_text(slope: float, low: float, high: float, digits: int = 2, max_digits: int = 6) -> str:
    """``"0.50 [0.47, 0.53]"``, with one decimal more (up to ``max_digits``) while two numbers
    differing by more than a relative 1e-9 would print alike."""
    vals = [float(slope), float(low), float(high)]
    k = digits
    while k < max_digits:
        txt = [f"{v:.{k}f}" for v in vals]
        clash = any(txt[i] == txt[j] and not np.isclose(vals[i], vals[j], rtol=1e-9, atol=0)
                    for i in range(3) for j in range(i + 1, 3))
        if not clash:
            break
        k += 1
    a, b, c = (f"{v:.{k}f}" for v in vals)
    return f"{a} [{b}, {c}]"


def reference_line(x, slope: float, x0: float, y0: float) -> np.ndarray:
    r"""Values :math:`y_0 (x/x_0)^{\text{slope}}` of a reference power law through ``(x0, y0)``."""
    return y0 * (np.asarray(x, dtype=np.float64) / x0) ** slope
