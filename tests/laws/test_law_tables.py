"""Tables of chapter 2: law constants and configuration comparisons, on hand-made brackets."""
import numpy as np
import pandas as pd
import pytest

from attnrank_lite.laws.law_tables import (
    compare_configurations,
    comparison_sentence,
    comparison_summary,
    constant_brackets,
    constants_summary,
)


def _brackets():
    return pd.DataFrame({
        "configuration": ["well-spread"] * 2 + ["random"] * 2 + ["clustered"] * 2,
        "beta": [8.0, 16.0] * 3, "eps": [0.25] * 6, "n": [100] * 6,
        "lower": [10, 20, 25, 12, 2, 3], "upper": [15, 30, 40, 35, 9, 30]})


def test_comparison_outcomes_by_hand():
    cmp = compare_configurations(_brackets())
    got = dict(zip(zip(cmp.configuration, cmp.beta), cmp.outcome))
    # random beta=8: lower 25 > well-spread upper 15 -> certified above
    assert got[("random", 8.0)] == "certified above"
    # random beta=16: [12, 35] vs [20, 30] overlap
    assert got[("random", 16.0)] == "overlapping"
    # clustered beta=8: upper 9 <= well-spread lower 10
    assert got[("clustered", 8.0)] == "certified below"
    assert got[("clustered", 16.0)] == "overlapping"
    assert cmp.upper_above_ref_upper.tolist() == [True, True, False, False]
    text = comparison_sentence(cmp)
    assert "eps): 4;" in text and "certified above it: 1;" in text
    assert "not to be the worst case" in text
    s = comparison_summary(cmp).set_index("configuration")
    assert s.loc["random"].tolist() == [0, 1, 1]
    assert s.loc["clustered"].tolist() == [1, 1, 0]


def test_comparison_needs_reference():
    df = _brackets()
    with pytest.raises(ValueError, match="reference"):
        compare_configurations(df[df.configuration != "well-spread"])
    with pytest.raises(ValueError, match="every"):
        compare_configurations(df[~((df.configuration == "well-spread")
                                    & (df.beta == 8.0))])


def test_constant_brackets_scale():
    df = _brackets()[:2]
    c = constant_brackets(df, 3)
    assert np.allclose(c.c_lower, [10 / 9, 20 / 17])
    assert np.allclose(c.c_upper, [15 / 9, 30 / 17])
    c2 = constant_brackets(df, 2)
    assert np.allclose(c2.c_upper, [15 / 3, 30 / np.sqrt(17)])
    s = constants_summary([c, c2]).set_index("d")
    assert np.isclose(s.loc[3, "c1_low"], 10 / 9)
    assert np.isclose(s.loc[3, "c1_high"], 15 / 9)
    assert np.isclose(s.loc[3, "c2_low"], 20 / 17)
    assert np.isclose(s.loc[3, "c2_high"], 30 / 17)
    with pytest.raises(ValueError, match="lacks"):
        constant_brackets(df.drop(columns="n"), 3)


def test_configuration_sweep_and_comparison_end_to_end():
    from attnrank_lite.laws.sweeps import configuration_sweep
    df = configuration_sweep(150, 3, [4.0, 8.0], [0.25],
                             kinds=("well-spread", "clustered"))
    assert df.verified.all()
    assert df.configuration.tolist() == ["well-spread"] * 2 + ["clustered"] * 2
    cmp = compare_configurations(df)
    assert len(cmp) == 2 and set(cmp.outcome) <= {"certified below", "overlapping",
                                                   "certified above"}


def test_interval_text_adds_digits_only_when_needed():
    from attnrank_lite.laws.fitting import interval_text
    assert interval_text(0.9, 0.8, 1.05) == "0.90 [0.80, 1.05]"
    # a narrow interval that two decimals would print as [0.52, 0.52]
    assert interval_text(0.5203, 0.5198, 0.5209) == "0.5203 [0.5198, 0.5209]"
    # an exact power law: all three equal, no extra digits
    assert interval_text(0.5, 0.5, 0.5) == "0.50 [0.50, 0.50]"


def test_regularity_drift():
    from attnrank_lite.laws.law_tables import regularity_drift
    lo = pd.DataFrame({"beta": [16.0, 16.0, 32.0], "kappa": [0.5, 0.5, 0.4],
                       "K": [0.58, 0.58, 0.6]})
    assert regularity_drift(lo) == ("1.16 → 1.5 (β = 16, 32): it grows at every step as "
                                    "the smallest scale shrinks")
    assert regularity_drift(lo.assign(K=[0.58, 0.58, 0.4])).endswith(
        "does not grow at every step")
