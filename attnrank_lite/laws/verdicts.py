r"""The book's one verdict rule on laws (``SPEC.md`` section 5): capped or vacuous rows left out
and counted, a 95% t-interval on the log-log slope, and the verdict :func:`slope_verdict`."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .fitting import fit_loglog_slope

__all__ = ["SLOPE_COLUMNS", "MIN_POINTS", "MAX_WIDTH_FRACTION", "LEVEL", "WIDTH_SENTENCE",
           "judge_slope", "judged_slope_table", "slope_verdict", "capped_rows", "width_trend", "verdict_counts",
           "counts_text", "width_text"]

#: Columns every slope table written to ``results/`` starts with, in this order.
SLOPE_COLUMNS = ("slope", "ci_low", "ci_high", "points", "reference", "left_out", "verdict")
#: Fewer kept points than this give ``inconclusive``.
MIN_POINTS = 4
#: An interval wider than this fraction of the exponent gives ``inconclusive``.
MAX_WIDTH_FRACTION = 0.5
#: Confidence level of the t-interval.
LEVEL = 0.95
#: The sentence printed next to every width trend.
WIDTH_SENTENCE = (
    "A width upper/lower that grows with beta does not contradict a Theta law: the law "
    "constrains rank_eps, not the certificates; it limits what these brackets can confirm.")


def slope_verdict(low: float, high: float, reference: float, points: int) -> str:
    """The verdict on ``[low, high]`` from ``points`` points: ``inconclusive`` when ``points <
    MIN_POINTS``, the interval is not finite or wider than ``MAX_WIDTH_FRACTION * |reference|``;
    else ``below`` / ``above`` when wholly below / above ``reference``, else ``inside``."""
    low, high, reference = float(low), float(high), float(reference)
    if not np.isfinite(reference) or reference == 0:
        raise ValueError(f"reference must be a finite non-zero exponent, got {reference}")
    if int(points) < MIN_POINTS:
        return "inconclusive"
    if not (np.isfinite(low) and np.isfinite(high)) or low > high:
        return "inconclusive"
    if high - low > MAX_WIDTH_FRACTION * abs(reference):
        return "inconclusive"
    if high < reference:
        return "below"
    if low > reference:
        return "above"
    return "inside"


def capped_rows(upper, n, count=None, vacuous=None) -> np.ndarray:
    r"""Rows to leave out of a fit: capped (``upper >= n`` or ``count >= n``) or ``vacuous``."""
    upper = np.atleast_1d(np.asarray(upper, dtype=np.float64))
    n = np.broadcast_to(np.asarray(n, dtype=np.float64), upper.shape)
    out = upper >= n
    if count is not None:
        out = out | (np.broadcast_to(np.asarray(count, dtype=np.float64), upper.shape) >= n)
    if vacuous is not None:
        out = out | np.broadcast_to(np.asarray(vacuous, dtype=bool), upper.shape)
    return out


def judge_slope(beta, end, reference: float, *, left_out=None) -> dict:
    """Fit and judge ``end`` against ``beta``, the rows ``left_out`` left out: :data:`SLOPE_COLUMNS`."""
    beta = np.asarray(beta, dtype=np.float64).reshape(-1)
    end = np.asarray(end, dtype=np.float64).reshape(-1)
    if beta.shape != end.shape:
        raise ValueError(f"beta and end need the same length, got {beta.size} and {end.size}")
    drop = np.zeros(beta.shape, dtype=bool) if left_out is None else np.asarray(left_out, dtype=bool).reshape(-1)
    if drop.shape != beta.shape:
        raise ValueError(f"left_out needs length {beta.size}, got {drop.size}")
    keep = ~drop
    points = int(keep.sum())
    if points >= 2 and np.unique(beta[keep]).size >= 2:
        fit = fit_loglog_slope(beta[keep], end[keep], level=LEVEL)
        slope, low, high = fit.slope, fit.ci_low, fit.ci_high
    else:
        slope = low = high = float("nan")
    return {"slope": slope, "ci_low": low, "ci_high": high, "points": points,
            "reference": float(reference), "left_out": int(drop.sum()),
            "verdict": slope_verdict(low, high, reference, points)}


def width_trend(beta, lower, upper, group=None) -> pd.DataFrame:
    r"""Width ``upper/lower`` per beta, one column per ``group`` label (mean), else ``"width"``."""
    frame = pd.DataFrame({"beta": np.asarray(beta, dtype=np.float64),
                          "width": np.asarray(upper, dtype=np.float64)
                          / np.asarray(lower, dtype=np.float64)})
    if group is None:
        return frame.groupby("beta")[["width"]].mean()
    frame["group"] = np.asarray(group)
    return frame.pivot_table(index="beta", columns="group", values="width", aggfunc="mean")


def verdict_counts(verdicts) -> dict:
    """Counts of each verdict word in ``verdicts`` (all four words present), and ``total``."""
    words = list(verdicts)
    out = {w: sum(v == w for v in words) for w in ("inside", "above", "below", "inconclusive")}
    out["total"] = len(words)
    return out


def judged_slope_table(df: pd.DataFrame, reference, *, by=("eps",), key: str = "beta",
                       count: str | None = None) -> pd.DataFrame:
    r""":func:`judge_slope` of each end per group of ``by``, capped or vacuous rows (an end ``<= 0``)
    left out of both ends' fits; ``reference``: the exponent or a function of the group's keys."""
    missing = [c for c in (key, "n", "lower", "upper", *by) if c not in df.columns]
    if missing:
        raise ValueError(f"df lacks the columns {missing}")
    by = list(by)
    parts = []
    for keys, g in df.reset_index(drop=True).groupby(by):
        keys = dict(zip(by, keys if isinstance(keys, tuple) else (keys,)))
        g = g.sort_values(key)
        ref = float(reference(keys) if callable(reference) else reference)
        drop = capped_rows(g["upper"], g["n"], count=None if count is None else g[count],
                           vacuous=(g["lower"] <= 0) | (g["upper"] <= 0))
        for end in ("lower", "upper"):
            row = judge_slope(g[key], g[end], ref, left_out=drop)
            row.update(keys, end=end, **{f"{key}_min": float(g[key].min()), f"{key}_max": float(g[key].max())})
            parts.append(row)
    cols = [*SLOPE_COLUMNS, *by, "end", f"{key}_min", f"{key}_max"]
    return pd.DataFrame(parts, columns=cols)


def counts_text(verdicts) -> str:
    """``"inside for 3, above for 0, below for 1 and inconclusive for 0 of 4"``."""
    c = verdict_counts(verdicts)
    words = [f"{w} for {c[w]}" for w in ("inside", "above", "below", "inconclusive")]
    return ", ".join(words[:-1]) + f" and {words[-1]} of {c['total']}"


def width_text(df: pd.DataFrame, by=("eps",), key: str = "beta") -> str:
    """``"eps = 0.1: 1.8 (β = 64) → 3.1 (β = 1024)"``: the width at the first and last ``key``."""
    parts = []
    for keys, g in df.groupby(list(by)):
        keys = keys if isinstance(keys, tuple) else (keys,)
        g = g.sort_values(key)
        w = (g["upper"] / g["lower"]).to_numpy()
        b = g[key].to_numpy()
        label = ", ".join(f"{c} = {v:g}" if isinstance(v, (int, float, np.number)) else f"{c} = {v}"
                          for c, v in zip(by, keys))
        parts.append(f"{label}: {w[0]:.3g} (β = {b[0]:g}) → {w[-1]:.3g} (β = {b[-1]:g})")
    return "; ".join(parts)
