"""Verdict words come only from the interval check, with its threshold."""
from __future__ import annotations

import numpy as np
import pytest

from attnrank_lite.laws.verdicts import slope_verdict


def test_slope_verdict_cases():
    assert slope_verdict(0.42, 0.46, 0.5, 0.25) == "below"
    assert slope_verdict(0.85, 1.05, 1.0, 0.25) == "contains"
    assert slope_verdict(1.1, 1.2, 1.0, 0.25) == "above"
    assert slope_verdict(0.37, 1.44, 1.5, 0.75) == "inconclusive"  # width 1.07
    assert slope_verdict(np.nan, 1.0, 1.0, 1.0) == "inconclusive"
    assert slope_verdict(0.0, 0.25, 0.25, 0.25) == "contains"  # edges included
    with pytest.raises(ValueError, match="max_width"):
        slope_verdict(0.0, 1.0, 0.5, 0.0)
