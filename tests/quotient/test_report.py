"""Chapters 4 and 5's report functions: tables and quoted numbers against facts set by hand."""
import numpy as np
import pandas as pd
import pytest

from attnrank_lite.laws.verdicts import SLOPE_COLUMNS
from attnrank_lite.quotient import report as qr


def test_head_quotient_shows_the_column_term_and_no_bias_dimension():
    # d_model = 2: the visible dimension is at most 2 (prop-head-visible), and a generic query
    # bias adds one column-scalar direction to the row-centred logits (rank 3)
    W_Q = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    W_K = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, -0.4]])
    table, nums = qr.head_quotient(W_Q, np.array([0.2, -0.1, 1.5]), W_K,
                                   np.array([0.3, -0.2, 0.8]), 16.0)
    row = table.iloc[0]
    assert row["visible dimension"] == 2 and row["head formula"] == 2
    assert row["head formula, b_Q = 0"] == 2
    assert row["row-centred rank"] == 3
    assert row["max |A_head - A_visible|"] < 1e-12
    assert nums == {"head_rowc": 3, "head_vis": 2}


def _law(betas, n_of_beta, upper_of_beta, family, r=1):
    return pd.DataFrame({"beta": betas, "eps": 0.25, "r": r, "family": family,
                         "n": [n_of_beta(b) for b in betas],
                         "lower": [max(1.0, upper_of_beta(b) / 3) for b in betas],
                         "upper": [upper_of_beta(b) for b in betas], "verified": True})


def test_r_half_slopes_flag_the_forced_upper_verdict_and_test_fixed_n():
    betas = [16.0, 64.0, 256.0, 1024.0]
    sharp = _law(betas, lambda b: 4 * b ** 0.5, lambda b: 2 * b ** 0.5, qr.SHARP_FAMILY)
    # fixed n = 500 whose upper end grows like beta^0.2, well below r/2 = 0.5
    fixed = _law(betas, lambda b: 500, lambda b: 10 * b ** 0.2, qr.FIXED_N_FAMILY)
    law = pd.concat([sharp, fixed], ignore_index=True)
    fits = qr.r_half_slopes(law, 4).set_index(["family", "end"])
    assert not fits.loc[(qr.SHARP_FAMILY, "upper"), "can fail"]
    assert fits.loc[(qr.FIXED_N_FAMILY, "upper"), "can fail"]
    # upper = n / 2 exactly: the upper slope is all n's slope, upper/n does not drift
    assert fits.loc[(qr.SHARP_FAMILY, "upper"), "n slope"] == pytest.approx(0.5)
    assert fits.loc[(qr.SHARP_FAMILY, "upper"), "upper/n slope"] == pytest.approx(0, abs=1e-12)
    assert fits.loc[(qr.FIXED_N_FAMILY, "upper"), "n slope"] == pytest.approx(0, abs=1e-12)
    assert fits.loc[(qr.SHARP_FAMILY, "upper"), "verdict"] == "inside"
    assert fits.loc[(qr.FIXED_N_FAMILY, "upper"), "verdict"] == "below"
    nums = qr.r_half_numbers(law, fits.reset_index())
    assert nums["fixed_upper_r1"] == "0.20 [0.20, 0.20]"
    assert nums["fixed_upper_verdict_r1"] == "below"
    assert nums["upper_verdict_r1"] == "inside"
    assert nums["sharp_n_slopes"] == "r = 1: n 0.50, upper/n +0.00"
    assert nums["fixed_n"] == "500" and nums["r3_beta"] == "1024" and nums["r3_n"] == "128"


def test_polynomial_slope_leaves_out_vacuous_counts():
    n = 300
    betas = [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0]
    counts = [5.0, 10.0, 20.0, 40.0, 700.0, 2080.0]  # the last two are >= n
    poly = pd.DataFrame({"dim": 1, "beta": betas, "degree": [2, 3, 5, 8, 40, 60],
                         "count": counts, "count / upper": np.array(counts) / 50,
                         "count >= n": np.array(counts) >= n})
    fits, nums = qr.polynomial_numbers(poly, n, fit_points=4)
    # 5, 10, 20, 40 against beta 1..64: count doubles when beta quadruples, slope exactly 1/2
    assert fits.iloc[0]["slope"] == pytest.approx(0.5)
    assert fits.iloc[0]["points"] == 4 and fits.iloc[0]["left_out"] == 2
    assert list(fits.columns[:7]) == list(SLOPE_COLUMNS)
    # the rule: 4 points, a zero-width interval containing r/2 = 0.5
    assert fits.iloc[0]["verdict"] == "inside"
    assert nums["count_slope_r1"] == "0.50 [0.50, 0.50] (β = 1-64; inside)"
    # the ratio count/upper is read only where the certificate is not vacuous (count < n)
    assert nums["ratio_r1"] == f"{5 / 50:.3g} to {40 / 50:.3g}"
    assert nums["vacuous_r1"] == "2" and nums["trivial_r1"] == "from beta = 256 on"
    few = poly.assign(count=[5.0, 10.0, 400.0, 500.0, 700.0, 2080.0])
    few["count >= n"] = few["count"] >= n
    fits2, nums2 = qr.polynomial_numbers(few, n, fit_points=4)
    # two non-vacuous certificates: a slope through them, but inconclusive by the rule
    assert fits2.iloc[0]["points"] == 2 and fits2.iloc[0]["verdict"] == "inconclusive"
    assert nums2["count_slope_r1"].endswith("; inconclusive)")
    one = poly.assign(count=[5.0, 300.0, 400.0, 500.0, 700.0, 2080.0])
    one["count >= n"] = one["count"] >= n
    fits3, nums3 = qr.polynomial_numbers(one, n, fit_points=4)
    assert np.isnan(fits3.iloc[0]["slope"]) and fits3.iloc[0]["left_out"] == 5
    assert nums3["count_slope_r1"] == "not fitted (only 1 non-vacuous certificates)"


def test_degree_numbers_report_a_plateau():
    grows = pd.DataFrame({"m": [10, 100, 1000], "degree": [6, 9, 13]})
    assert qr.degree_numbers(grows) == {"m_first": 10, "m_last": 1000,
                                        "deg_values": "6, 9 and 13",
                                        "deg_plateau": "it grows up to the largest m"}
    # the referee's table: 11, 17, 19, 19 (unsorted input is read in order of m)
    flat = pd.DataFrame({"m": [10000, 10, 100, 1000], "degree": [19, 11, 17, 19]})
    nums = qr.degree_numbers(flat)
    assert nums["deg_values"] == "11, 17, 19 and 19"
    assert nums["deg_plateau"] == "it stays at 19 from m = 1000 on"
    same = pd.DataFrame({"m": [10, 100], "degree": [7, 7]})
    assert qr.degree_numbers(same)["deg_plateau"] == "it does not grow with m"


def test_r_half_slopes_leave_out_capped_rows_and_widths_are_printed():
    betas = [4.0, 8.0, 16.0, 32.0, 64.0]
    # fixed n = 100: the upper end reaches n at the last two betas (capped)
    fixed = _law(betas, lambda b: 100, lambda b: min(100.0, 5 * b), qr.FIXED_N_FAMILY)
    fits = qr.r_half_slopes(fixed, 5)
    assert list(fits.columns[:7]) == list(SLOPE_COLUMNS)
    fits = fits.set_index("end")
    assert fits.loc["upper", "left_out"] == 2 and fits.loc["upper", "points"] == 3
    # 3 points remain: inconclusive by the rule, however narrow the interval
    assert fits.loc["upper", "verdict"] == "inconclusive"
    assert fits.loc["upper", "slope"] == pytest.approx(1.0)
    widths, nums = qr.r_half_widths(fixed)
    assert widths.shape == (5, 1)
    assert widths.iloc[0, 0] == pytest.approx(3.0) and widths.iloc[-1, 0] == pytest.approx(3.0)
    assert "does not contradict a Theta law" in nums["r_half_width_sentence"]
    assert nums["r_half_width_trend"].startswith("r = 1, family = uniform random: 3 (β = 4)")


def test_lemma_checks_find_no_violation():
    table, nums, data = qr.lemma_checks(500, seed=3)
    assert table.iloc[0]["violations"] == 0 and table.iloc[0]["random pairs"] == 500
    assert float(nums["pair_ratio"]) <= 1.0
    assert data["osc"].shape == data["change"].shape == (500,)


def test_truncation_table_and_tightness():
    trunc = qr.truncation_table(3, 30, [0.5], [1.0, 4.0], 1.0, seed=1)
    assert len(trunc) == 2 * 4
    # full rank s = d changes nothing
    assert trunc.loc[trunc.s == 3, "measured"].max() < 1e-12
    tight, flat, nums = qr.tightness(trunc, 3)
    ok = trunc[trunc.s < 3]
    assert float(nums["ratio_max"]) == pytest.approx(
        max((ok.measured / ok.tanh).max(), (ok.measured / ok.osc).max(),
            (ok.measured / ok.sigma).max()), abs=5e-4)
    assert float(nums["ratio_max"]) <= 1.0
    assert nums["beta_first"] == "1" and nums["beta_last"] == "4"
    assert "measured/tanh_median" in flat.columns


def test_tolerance_curves_do_not_increase_with_tau():
    rtau = qr.tolerance_curves(4, 20, [0.3], [1.0, 4.0], 0.0, seed=2)
    for _, g in rtau.groupby("beta"):
        r = g.sort_values("tau")["r_tau"].to_numpy()
        assert (np.diff(r) <= 0).all() and r[0] <= 4


def test_tradeoff_numbers_read_the_table():
    trade, nums = qr.tradeoff_numbers(4, 40, 0.3, 4.0, 0.25, 1.0, seed=0)
    has = trade[trade.budget > 0]
    assert nums["svd_best"] == int(has["upper"].min())
    assert nums["s_first"] == int(has.s.min()) and nums["s_full"] == int(trade.s.iloc[-1])
