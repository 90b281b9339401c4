"""Rank statistics of the calibration study against scipy and a brute-force bootstrap."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from attnrank_lite.calibration.report import (
    MIN_DEFINED,
    sign_class,
    spearman,
    spearman_bootstrap,
)


def test_spearman_matches_scipy_including_ties_and_infinities():
    rng = np.random.default_rng(8)
    for _ in range(20):
        x = rng.integers(0, 5, 60).astype(float)
        y = x + rng.integers(0, 3, 60)
        assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert spearman([1, 2, np.inf], [1, 2, 3]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="NaN"):
        spearman([1, np.nan, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="equal length"):
        spearman([1, 2], [1, 2, 3])


def _brute_bootstrap(x, y, groups, n_boot, seed, level):
    """The same resampling written out: draw cluster labels, concatenate, scipy's Spearman."""
    labels = np.unique(groups)
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_boot):
        pick = labels[rng.integers(0, labels.size, labels.size)]
        idx = np.concatenate([np.flatnonzero(groups == c) for c in pick])
        xs, ys = x[idx], y[idx]
        if np.ptp(xs) > 0 and np.ptp(ys) > 0:
            reps.append(spearmanr(xs, ys).statistic)
    a = (1 - level) / 2
    return np.quantile(reps, [a, 1 - a]), len(reps)


def test_bootstrap_interval_matches_brute_force():
    rng = np.random.default_rng(9)
    x = rng.standard_normal(80)
    y = x + rng.standard_normal(80)
    groups = np.repeat(np.arange(20), 4)
    res = spearman_bootstrap(x, y, groups, n_boot=300, seed=3)
    (lo, hi), n_valid = _brute_bootstrap(x, y, groups, 300, 3, 0.95)
    assert res["n_valid"] == n_valid == 300 and res["clusters"] == 20
    assert res["low"] == pytest.approx(lo, abs=1e-12) and res["high"] == pytest.approx(hi, abs=1e-12)
    assert res["low"] < res["rho"] < res["high"] and res["low"] > 0
    assert res == spearman_bootstrap(x, y, groups, n_boot=300, seed=3)  # seeded


def test_interval_undefined_below_the_95_percent_rule():
    """x varies at one of 30 singleton clusters: a resample contains it with probability
    1 - (29/30)^30 ~ 0.64, so the interval is undefined; with min_defined=0 it is reported."""
    x = np.r_[np.zeros(29), 1.0]
    y = np.arange(30.0)
    res = spearman_bootstrap(x, y, n_boot=1000, seed=0)
    assert 0.55 < res["defined_fraction"] < 0.72
    assert np.isfinite(res["rho"]) and np.isnan(res["low"]) and np.isnan(res["high"])
    loose = spearman_bootstrap(x, y, n_boot=1000, seed=0, min_defined=0.0)
    assert np.isfinite(loose["low"]) and loose["n_valid"] == res["n_valid"]
    assert MIN_DEFINED == 0.95


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="n_boot"):
        spearman_bootstrap([1, 2], [1, 2], n_boot=0)
    with pytest.raises(ValueError, match="level"):
        spearman_bootstrap([1, 2], [1, 2], level=1.5)
    with pytest.raises(ValueError, match="groups"):
        spearman_bootstrap([1, 2], [1, 2], groups=[1, 2, 3])


def test_sign_class():
    assert sign_class(0.1, 0.5) == "+" and sign_class(-0.5, -0.1) == "-"
    assert sign_class(-0.1, 0.2) == "0" and sign_class(np.nan, np.nan) == "undefined"


def test_bootstrap_with_unequal_clusters_matches_brute_force():
    rng = np.random.default_rng(4)
    groups = np.repeat(np.arange(12), [1, 2, 3, 4] * 3)
    x = rng.standard_normal(groups.size)
    y = x + rng.standard_normal(groups.size)
    res = spearman_bootstrap(x, y, groups, n_boot=200, seed=1)
    (lo, hi), n_valid = _brute_bootstrap(x, y, groups, 200, 1, 0.95)
    assert res["n_valid"] == n_valid and res["clusters"] == 12
    assert res["low"] == pytest.approx(lo, abs=1e-12) and res["high"] == pytest.approx(hi, abs=1e-12)
