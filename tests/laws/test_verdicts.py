"""The one verdict rule: each outcome reachable, capped rows left out and counted."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from attnrank_lite.laws.verdicts import (
    SLOPE_COLUMNS,
    capped_rows,
    judge_slope,
    slope_verdict,
    verdict_counts,
    width_trend,
)

BETA = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
NOISE = np.array([0.02, -0.03, 0.01, 0.025, -0.02])


def _data(slope):
    return 3.0 * BETA ** slope * np.exp(NOISE)


def test_each_verdict_can_occur():
    assert judge_slope(BETA, _data(1.5), 1.5)["verdict"] == "inside"
    assert judge_slope(BETA, _data(2.0), 1.5)["verdict"] == "above"
    assert judge_slope(BETA, _data(1.0), 1.5)["verdict"] == "below"
    noisy = 3.0 * BETA ** 1.5 * np.exp(20 * NOISE)
    assert judge_slope(BETA, noisy, 1.5)["verdict"] == "inconclusive"  # interval too wide


def test_interval_is_the_t_interval_of_scipy_linregress():
    end = _data(1.5)
    row = judge_slope(BETA, end, 1.5)
    assert tuple(row) == SLOPE_COLUMNS
    reg = stats.linregress(np.log(BETA), np.log(end))
    t = stats.t.ppf(0.975, BETA.size - 2)
    assert row["slope"] == pytest.approx(reg.slope, rel=1e-12)
    assert row["ci_low"] == pytest.approx(reg.slope - t * reg.stderr, rel=1e-10)
    assert row["ci_high"] == pytest.approx(reg.slope + t * reg.stderr, rel=1e-10)


def test_capped_rows_are_left_out_and_counted():
    n = 1000
    upper = np.array([20.0, 60.0, 170.0, 480.0, 1000.0])
    drop = capped_rows(upper, n)
    assert drop.tolist() == [False, False, False, False, True]
    row = judge_slope(BETA, upper, 1.5, left_out=drop)
    assert row["left_out"] == 1 and row["points"] == 4
    # with the capped row the slope is pulled down; without it, it is the fit of the first four
    assert row["slope"] == pytest.approx(stats.linregress(np.log(BETA[:4]),
                                                          np.log(upper[:4])).slope)
    assert capped_rows([10.0, 10.0], [100, 100], count=[50, 100]).tolist() == [False, True]
    assert capped_rows([10.0], 100, vacuous=[True]).tolist() == [True]


def test_too_few_points_is_inconclusive():
    exact = 2.0 * BETA[:3] ** 1.5  # exactly geometric: a zero-width interval from 3 points
    row = judge_slope(BETA[:3], exact, 1.5)
    assert row["points"] == 3 and row["verdict"] == "inconclusive"
    row = judge_slope(BETA, _data(1.5), 1.5, left_out=[True, True, False, False, False])
    assert row["verdict"] == "inconclusive"
    row = judge_slope(BETA[:1], BETA[:1], 1.0)
    assert np.isnan(row["slope"]) and row["verdict"] == "inconclusive"


def test_slope_verdict_edges_and_errors():
    assert slope_verdict(1.0, 1.5, 1.5, 4) == "inside"      # edge included
    assert slope_verdict(1.0, 1.76, 1.5, 4) == "inconclusive"  # width 0.76 > 0.75
    assert slope_verdict(np.nan, 1.0, 1.0, 9) == "inconclusive"
    with pytest.raises(ValueError, match="reference"):
        slope_verdict(0.0, 1.0, 0.0, 5)


def test_width_trend_and_counts():
    t = width_trend([2, 4, 2, 4], [1, 2, 2, 2], [4, 10, 4, 4], group=["a", "a", "b", "b"])
    assert t.loc[4.0, "a"] == 5.0 and t.loc[2.0, "b"] == 2.0
    assert verdict_counts(["inside", "inside", "below"]) == {
        "inside": 2, "above": 0, "below": 1, "inconclusive": 0, "total": 3}


# --- judged_slope_table (the per-chapter slope tables of chapters 2, 3, 4) ---------------

def _rows(betas, slope, n, scale=1.0, eps=0.1):
    """Bracket rows with lower = upper / 2 = scale * beta**slope (exact power law)."""
    b = np.asarray(betas, dtype=float)
    up = 2 * scale * b ** slope
    return pd.DataFrame({"beta": b, "n": n, "lower": up / 2, "upper": up, "eps": eps})


def test_judged_table_columns_start_with_the_rule():
    from attnrank_lite.laws.verdicts import judged_slope_table
    t = judged_slope_table(_rows([1, 2, 4, 8, 16], 0.5, 10_000), 0.5)
    assert tuple(t.columns[:len(SLOPE_COLUMNS)]) == SLOPE_COLUMNS
    assert list(t["end"]) == ["lower", "upper"]


def test_judged_table_exact_law_is_inside():
    from attnrank_lite.laws.verdicts import judged_slope_table
    t = judged_slope_table(_rows([1, 2, 4, 8, 16, 32], 1.5, 10_000), 1.5)
    assert (t["verdict"] == "inside").all()
    assert np.allclose(t["slope"], 1.5)
    assert (t["left_out"] == 0).all() and (t["points"] == 6).all()


def test_judged_table_capped_row_is_left_out_and_not_fitted():
    from attnrank_lite.laws.verdicts import judged_slope_table
    df = _rows([1, 2, 4, 8, 16], 1.0, 1_000)
    df = pd.concat([df, pd.DataFrame({"beta": [32.0], "n": [1_000], "lower": [5.0],
                                      "upper": [1_000.0], "eps": [0.1]})], ignore_index=True)
    t = judged_slope_table(df, 1.0)
    assert (t["left_out"] == 1).all() and (t["points"] == 5).all()
    # had the capped row (lower 5 at beta 32, far below the line 32) been fitted, the
    # slope would not be 1 exactly
    assert np.allclose(t["slope"], 1.0)


def test_judged_table_count_column_caps():
    from attnrank_lite.laws.verdicts import judged_slope_table
    df = _rows([1, 2, 4, 8, 16], 1.0, 1_000).assign(count=[1, 2, 3, 4, 5_000])
    t = judged_slope_table(df, 1.0, count="count")
    assert (t["left_out"] == 1).all() and (t["points"] == 4).all()


def test_judged_table_three_points_inconclusive_and_callable_reference():
    from attnrank_lite.laws.verdicts import judged_slope_table
    df = pd.concat([_rows([1, 2, 4], 0.5, 10_000).assign(r=1),
                    _rows([1, 2, 4, 8], 1.0, 10_000).assign(r=2)], ignore_index=True)
    t = judged_slope_table(df, lambda g: g["r"] / 2, by=("r",))
    assert list(t.loc[t.r == 1, "verdict"]) == ["inconclusive"] * 2
    assert list(t.loc[t.r == 2, "verdict"]) == ["inside"] * 2
    assert list(t.loc[t.r == 2, "reference"]) == [1.0, 1.0]


def test_judged_table_names_missing_columns():
    from attnrank_lite.laws.verdicts import judged_slope_table
    with pytest.raises(ValueError, match="upper"):
        judged_slope_table(pd.DataFrame({"beta": [1.0], "n": [3], "lower": [1.0],
                                         "eps": [0.1]}), 1.0)


def test_counts_text_counts_each_word():
    from attnrank_lite.laws.verdicts import counts_text
    t = counts_text(["inside", "below", "inside", "inconclusive"])
    assert t == "inside for 2, above for 0, below for 1 and inconclusive for 1 of 4"


def test_width_text_first_and_last_beta():
    from attnrank_lite.laws.verdicts import width_text
    df = pd.DataFrame({"beta": [4.0, 1.0, 2.0], "lower": [2.0, 4.0, 1.0],
                       "upper": [10.0, 8.0, 3.0], "eps": 0.1})
    assert width_text(df) == "eps = 0.1: 2 (β = 1) → 5 (β = 4)"
