r"""Verdict words from computed checks, each with its threshold in the text.

A page may only say that a fitted exponent "is consistent with" or "falls
below" a law when a check with a printed threshold says so; these functions
are that check.
"""
from __future__ import annotations

import numpy as np

__all__ = ["slope_verdict"]


def slope_verdict(low: float, high: float, reference: float,
                  max_width: float) -> str:
    r"""Compare a slope's confidence interval ``[low, high]`` with ``reference``.

    Returns
    -------
    str
        ``"inconclusive"`` when the interval is wider than ``max_width`` (or
        not finite); otherwise ``"contains"`` when
        ``low <= reference <= high``, ``"below"`` when ``high < reference``,
        ``"above"`` when ``low > reference``.
    """
    low, high = float(low), float(high)
    reference, max_width = float(reference), float(max_width)
    if not (np.isfinite(reference) and np.isfinite(max_width)
            and max_width > 0):
        raise ValueError("reference and max_width must be finite, "
                         f"max_width > 0; got {reference}, {max_width}")
    if not (np.isfinite(low) and np.isfinite(high)) or low > high:
        return "inconclusive"
    if high - low > max_width:
        return "inconclusive"
    if high < reference:
        return "below"
    if low > reference:
        return "above"
    return "contains"
