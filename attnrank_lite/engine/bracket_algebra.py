r"""Combining certified brackets through the invariances of the approximation rank.

Two consequences of ``prop-invariances`` (and ``prop-multiplicity``) that let several
certified brackets be read together:

* brackets of matrices with the *same* :math:`\operatorname{rank}_\varepsilon` (a permuted
  copy, a copy with merged duplicate keys) intersect: :math:`[\max_i \ell_i, \min_i u_i]`;
* :math:`\operatorname{rank}_\varepsilon` is non-increasing in :math:`\varepsilon`, so a lower
  bound certified at :math:`\varepsilon'` holds at every :math:`\varepsilon \le \varepsilon'`
  and an upper bound certified at :math:`\varepsilon` holds at every
  :math:`\varepsilon' \ge \varepsilon`.

Neither step computes anything new: the certificates behind each end are the stored ones.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["intersect", "monotone_envelope"]


def intersect(lowers, uppers) -> tuple[int, int]:
    r"""Intersection :math:`[\max\ell_i, \min u_i]` of brackets certified for one rank.

    Parameters
    ----------
    lowers, uppers : sequence of int
        Certified ends, one pair per bracket (same length, at least one).

    Returns
    -------
    (int, int)

    Raises
    ------
    ValueError
        If the brackets do not overlap (then they cannot bracket one number: a certificate
        is wrong or the matrices do not share their rank).
    """
    lo = [int(x) for x in lowers]
    up = [int(x) for x in uppers]
    if not lo or len(lo) != len(up):
        raise ValueError("lowers and uppers must be non-empty and of equal length")
    lower, upper = max(lo), min(up)
    if lower > upper:
        raise ValueError(f"brackets do not overlap: max lower {lower} > min upper {upper}")
    return lower, upper


def monotone_envelope(table: pd.DataFrame) -> pd.DataFrame:
    r"""Tighten a sweep of brackets over :math:`\varepsilon` by monotonicity.

    ``lower_envelope`` at :math:`\varepsilon` is the largest lower end certified at any
    :math:`\varepsilon' \ge \varepsilon`; ``upper_envelope`` the smallest upper end certified
    at any :math:`\varepsilon' \le \varepsilon`.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``eps``, ``lower``, ``upper`` (brackets of one matrix).

    Returns
    -------
    pandas.DataFrame
        A copy sorted by ``eps`` with the two envelope columns added.
    """
    out = table.sort_values("eps").reset_index(drop=True).copy()
    lo = out["lower"].to_numpy()
    out["lower_envelope"] = np.maximum.accumulate(lo[::-1])[::-1]
    out["upper_envelope"] = np.minimum.accumulate(out["upper"].to_numpy())
    if (out["lower_envelope"] > out["upper_envelope"]).any():
        raise ValueError("the brackets are inconsistent with a non-increasing rank")
    return out
