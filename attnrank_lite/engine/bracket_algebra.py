r"""Combining certified brackets through the invariances (``prop-invariances``,
``prop-multiplicity``): brackets of matrices with the same :math:`\operatorname{rank}_\varepsilon`
intersect, and the rank is non-increasing in :math:`\varepsilon`. Nothing new is computed: the
certificates behind each end are the stored ones."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["intersect", "monotone_envelope"]


def intersect(lowers, uppers) -> tuple[int, int]:
    r""":math:`[\max\ell_i, \min u_i]` of brackets (``lowers``, ``uppers``: equal length, at least one)
    certified for one rank; ``ValueError`` if they do not overlap (a certificate is wrong or the
    matrices do not share their rank)."""
    lo = [int(x) for x in lowers]
    up = [int(x) for x in uppers]
    if not lo or len(lo) != len(up):
        raise ValueError("lowers and uppers must be non-empty and of equal length")
    lower, upper = max(lo), min(up)
    if lower > upper:
        raise ValueError(f"brackets do not overlap: max lower {lower} > min upper {upper}")
    return lower, upper


def monotone_envelope(table: pd.DataFrame) -> pd.DataFrame:
    r"""A sweep of one matrix's brackets (columns ``eps``, ``lower``, ``upper``) tightened by
    monotonicity, sorted by eps: ``lower_envelope`` the largest lower end certified at any
    :math:`\varepsilon' \ge \varepsilon`, ``upper_envelope`` the smallest upper end at any
    :math:`\varepsilon' \le \varepsilon`."""
    out = table.sort_values("eps").reset_index(drop=True).copy()
    lo = out["lower"].to_numpy()
    out["lower_envelope"] = np.maximum.accumulate(lo[::-1])[::-1]
    out["upper_envelope"] = np.minimum.accumulate(out["upper"].to_numpy())
    if (out["lower_envelope"] > out["upper_envelope"]).any():
        raise ValueError("the brackets are inconsistent with a non-increasing rank")
    return out
