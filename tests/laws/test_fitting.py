"""Slope fits against exact power laws, scipy's linregress and a coverage simulation."""
import numpy as np
import pytest
from scipy import stats

from attnrank_lite.laws.fitting import fit_loglog_slope, reference_line


def test_exact_power_law_gives_exact_slope_and_zero_width():
    x = np.array([16.0, 64, 256, 1024, 4096])
    fit = fit_loglog_slope(x, 3.0 * x ** 0.5)
    assert fit.slope == pytest.approx(0.5, abs=1e-12)
    assert np.exp(fit.intercept) == pytest.approx(3.0, rel=1e-10)
    assert fit.ci_high - fit.ci_low < 1e-10


def test_matches_linregress():
    rng = np.random.default_rng(0)
    x = np.geomspace(10, 1000, 7)
    y = 2 * x ** 1.3 * np.exp(rng.normal(0, 0.1, x.size))
    fit = fit_loglog_slope(x, y, level=0.9)
    ref = stats.linregress(np.log(x), np.log(y))
    assert fit.slope == pytest.approx(ref.slope, rel=1e-12)
    assert fit.stderr == pytest.approx(ref.stderr, rel=1e-10)
    t = stats.t.ppf(0.95, x.size - 2)
    assert fit.ci_low == pytest.approx(ref.slope - t * ref.stderr, rel=1e-10)


def test_confidence_interval_coverage():
    rng = np.random.default_rng(1)
    x = np.geomspace(1, 100, 6)
    hits = 0
    reps = 2000
    for _ in range(reps):
        y = 5 * x ** 0.75 * np.exp(rng.normal(0, 0.2, x.size))
        f = fit_loglog_slope(x, y, level=0.9)
        hits += f.ci_low <= 0.75 <= f.ci_high
    assert 0.87 <= hits / reps <= 0.93


def test_two_points_and_bad_input():
    f = fit_loglog_slope([1, 4], [2, 4])
    assert f.slope == pytest.approx(0.5) and f.ci_low == -np.inf and f.ci_high == np.inf
    for x, y in [([1], [1]), ([1, 1], [2, 3]), ([1, 2], [0, 1]), ([1, 2, 3], [1, 2])]:
        with pytest.raises(ValueError):
            fit_loglog_slope(x, y)


def test_reference_line():
    assert np.allclose(reference_line([1, 4, 16], 0.5, 4, 10), [5, 10, 20])
