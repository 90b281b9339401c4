r"""Power-law slopes on log-log data, with confidence intervals.

Model: :math:`\log y = a + s \log x + \text{noise}`; ordinary least squares on the logs gives
the slope :math:`s`, its standard error and a Student-t confidence interval
:math:`\hat s \pm t_{1-\alpha/2,\,k-2}\,\mathrm{se}(\hat s)` (k points).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

__all__ = ["SlopeFit", "fit_loglog_slope", "interval_text", "reference_line"]


@dataclass(frozen=True)
class SlopeFit:
    r"""Result of :func:`fit_loglog_slope`.

    Attributes
    ----------
    slope, intercept : float
        :math:`\log y \approx \text{intercept} + \text{slope}\,\log x` (natural logs).
    stderr : float
        Standard error of the slope (``nan`` for two points).
    ci_low, ci_high : float
        Confidence interval of the slope at ``level`` (infinite for two points; equal to the
        slope for exact power laws).
    level : float
    npoints : int
    """

    slope: float
    intercept: float
    stderr: float
    ci_low: float
    ci_high: float
    level: float
    npoints: int

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return (f"{self.slope:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}] "
                f"({100 * self.level:g}% CI, {self.npoints} points)")


def fit_loglog_slope(x, y, level: float = 0.95) -> SlopeFit:
    r"""Least-squares slope of :math:`\log y` against :math:`\log x` with a t confidence interval.

    Parameters
    ----------
    x, y : array_like, shape (k,)
        Positive data, ``k >= 2`` distinct x values.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    SlopeFit
    """
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


def interval_text(slope: float, low: float, high: float, digits: int = 2,
                  max_digits: int = 6) -> str:
    """``"0.50 [0.47, 0.53]"``: a slope and its interval with enough decimals to tell them apart.

    Starts at ``digits`` decimals and adds one while two of the three printed numbers that
    differ would print alike (a narrow interval such as 0.5203 [0.5198, 0.5209] prints as
    ``"0.520 [0.520, 0.521]"`` would still merge; it becomes ``"0.5203 [0.5198, 0.5209]"``),
    up to ``max_digits``. Numbers equal to a relative 1e-9 (an exact power law fitted in floating
    point) count as equal. Infinite ends print as ``inf``.
    """
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
