r"""Rank statistics of the BERT calibration study (``claim-bert-calibration``).

Spearman's rank correlation and a cluster bootstrap interval for it. A correlation is undefined
when one side is constant; a bootstrap resample can be undefined even when the full sample is
not (for example when the only varying point is left out). The interval is then computed from
the defined resamples only, which conditions on the rare points being present; so it is
reported only when at least ``min_defined`` (default 95%) of the resamples define it, and is
*undefined* (NaN) otherwise.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["MIN_DEFINED", "sign_class", "spearman", "spearman_bootstrap"]

#: least fraction of bootstrap resamples that must define the correlation for an interval
MIN_DEFINED = 0.95


def spearman(x, y) -> float:
    r"""Spearman's rank correlation: Pearson correlation of average ranks (ties share a rank).

    ``inf`` values rank last. NaN when either side is constant.

    Parameters
    ----------
    x, y : array_like, shape (k,)

    Returns
    -------
    float
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("x and y must be 1-D arrays of equal length")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("x and y must not contain NaN")
    rx = rankdata(x, method="average")
    ry = rankdata(y, method="average")
    rx = rx - rx.mean()
    ry = ry - ry.mean()
    den = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / den) if den > 0 else float("nan")


def _spearman_rows(X, Y) -> np.ndarray:
    """:func:`spearman` of every row pair ``(X[i], Y[i])`` (NaN where a row is constant)."""
    rx = rankdata(X, method="average", axis=1)
    ry = rankdata(Y, method="average", axis=1)
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean(axis=1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)


def spearman_bootstrap(x, y, groups=None, n_boot: int = 2000, seed: int = 0,
                       level: float = 0.95, min_defined: float = MIN_DEFINED) -> dict:
    """Spearman correlation with a percentile cluster-bootstrap interval.

    Parameters
    ----------
    x, y : array_like, shape (k,)
    groups : array_like, shape (k,), optional
        Cluster labels (in the study: the head). Whole clusters are resampled with replacement,
        so dependent points (the temperatures of one head) stay together. ``None``: each point
        is its own cluster.
    n_boot : int
        Number of resamples (``>= 1``).
    seed : int
        Seed of ``numpy.random.default_rng``.
    level : float
        Coverage of the percentile interval, in (0, 1).
    min_defined : float
        Least fraction of resamples with a defined correlation for the interval to be reported.

    Returns
    -------
    dict
        ``rho`` (full sample), ``low``, ``high`` (NaN when undefined), ``n`` (points),
        ``clusters``, ``n_boot``, ``n_valid`` (resamples where both sides varied),
        ``defined_fraction`` = ``n_valid / n_boot``.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if not 0 <= min_defined <= 1:
        raise ValueError(f"min_defined must lie in [0, 1], got {min_defined}")
    g = np.arange(x.size) if groups is None else np.asarray(groups)
    if g.shape != x.shape:
        raise ValueError(f"groups must have shape {x.shape}, got {g.shape}")
    rho = spearman(x, y)
    labels, inv = np.unique(g, return_inverse=True)
    members = [np.flatnonzero(inv == c) for c in range(labels.size)]
    rng = np.random.default_rng(seed)
    picks = [rng.integers(0, labels.size, labels.size) for _ in range(int(n_boot))]
    if len({m.size for m in members}) == 1:  # equal clusters: all resamples at once, as one array
        idx = np.stack(members)[np.stack(picks)].reshape(len(picks), -1)
        boot = _spearman_rows(x[idx], y[idx])
    else:
        boot = np.array([spearman(x[i], y[i]) for i in (np.concatenate([members[c] for c in p]) for p in picks)])
    reps = [float(r) for r in boot if np.isfinite(r)]
    frac = len(reps) / int(n_boot)
    lo = hi = float("nan")
    if reps and frac >= min_defined:
        alpha = (1 - level) / 2
        lo, hi = (float(v) for v in np.quantile(reps, [alpha, 1 - alpha]))
    return {"rho": rho, "low": lo, "high": hi, "n": int(x.size), "clusters": int(labels.size),
            "n_boot": int(n_boot), "n_valid": len(reps), "defined_fraction": frac}


def sign_class(low: float, high: float) -> str:
    """``"+"`` (interval above 0), ``"-"`` (below 0), ``"0"`` (contains 0), ``"undefined"``."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "undefined"
    if low > 0:
        return "+"
    if high < 0:
        return "-"
    return "0"
