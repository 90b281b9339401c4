r"""Tables that read the spherical law off certified brackets (chapter 2).

* :func:`constant_brackets`: the hidden constants of :math:`\Theta`, i.e. brackets of
  :math:`\operatorname{rank}_\varepsilon/(1+\beta)^{(d-1)/2}` from brackets of the rank.
* :func:`compare_configurations`: what certified brackets say about one configuration
  against a reference one at the same :math:`(\beta, \varepsilon)`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "OUTCOMES",
    "compare_configurations",
    "comparison_summary",
    "constant_brackets",
    "constants_summary",
    "regularity_drift",
]

OUTCOMES = ("certified below", "overlapping", "certified above")


def _need(df: pd.DataFrame, cols) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"table lacks column(s) {missing}; has {list(df.columns)}")


def constant_brackets(df: pd.DataFrame, d: int) -> pd.DataFrame:
    r"""Brackets of the law's constant :math:`c = \operatorname{rank}_\varepsilon/(1+\beta)^{(d-1)/2}`.

    Parameters
    ----------
    df : pandas.DataFrame
        Bracket rows with columns ``beta``, ``eps``, ``n``, ``lower``, ``upper``.
    d : int
        Points on :math:`S^{d-1}`.

    Returns
    -------
    pandas.DataFrame
        Columns d, n, beta, eps, lower, upper, c_lower, c_upper
        (:math:`c_\text{lower}\le c\le c_\text{upper}`), sorted by eps then beta.
    """
    _need(df, ["beta", "eps", "n", "lower", "upper"])
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    scale = (1.0 + df["beta"].astype(float)) ** ((d - 1) / 2)
    out = pd.DataFrame({"d": int(d), "n": df["n"], "beta": df["beta"],
                        "eps": df["eps"], "lower": df["lower"],
                        "upper": df["upper"],
                        "c_lower": df["lower"] / scale,
                        "c_upper": df["upper"] / scale})
    return out.sort_values(["eps", "beta"]).reset_index(drop=True)


def constants_summary(tables) -> pd.DataFrame:
    r"""Per (d, eps): where the best constants of the law on the swept range can lie.

    On the swept betas the best constants :math:`c_1 = \min_\beta c(\beta)` and
    :math:`c_2 = \max_\beta c(\beta)` (with :math:`c = \operatorname{rank}_\varepsilon/
    (1+\beta)^{(d-1)/2}`) are bracketed by the per-beta brackets
    :math:`[c_\text{lower}, c_\text{upper}]`:
    :math:`\min c_\text{lower}\le c_1\le\min c_\text{upper}` and
    :math:`\max c_\text{lower}\le c_2\le\max c_\text{upper}`.

    Parameters
    ----------
    tables : iterable of pandas.DataFrame
        Outputs of :func:`constant_brackets`.

    Returns
    -------
    pandas.DataFrame
        Columns d, eps, n, beta_min, beta_max, c1_low, c1_high, c2_low, c2_high.
    """
    df = pd.concat(list(tables), ignore_index=True)
    g = df.groupby(["d", "eps"])
    return pd.DataFrame({
        "n": g["n"].max(), "beta_min": g["beta"].min(),
        "beta_max": g["beta"].max(), "c1_low": g["c_lower"].min(),
        "c1_high": g["c_upper"].min(), "c2_low": g["c_lower"].max(),
        "c2_high": g["c_upper"].max(),
    }).reset_index()


def compare_configurations(df: pd.DataFrame, reference: str = "well-spread",
                           key: str = "beta") -> pd.DataFrame:
    r"""Each configuration's bracket against the reference configuration's bracket.

    Outcome per (configuration, key, eps), from certified brackets only:

    * ``certified below``: upper <= reference lower, so
      :math:`\operatorname{rank}_\varepsilon \le` the reference's;
    * ``certified above``: lower > reference upper, so it is larger;
    * ``overlapping``: the brackets overlap; the certificates decide nothing.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``configuration``, ``key``, ``eps``, ``lower``, ``upper``.

    Returns
    -------
    pandas.DataFrame
        The non-reference rows with ``lower_ref``, ``upper_ref``, ``outcome`` and
        ``upper_above_ref_upper`` (its upper end exceeds the reference's upper end: such
        a configuration is not shown to stay below the reference).
    """
    _need(df, ["configuration", key, "eps", "lower", "upper"])
    ref = df[df["configuration"] == reference]
    if ref.empty:
        raise ValueError(f"reference configuration {reference!r} not in the table")
    ref = ref[[key, "eps", "lower", "upper"]]
    other = df[df["configuration"] != reference]
    out = other.merge(ref, on=[key, "eps"], how="left", suffixes=("", "_ref"),
                      validate="many_to_one")
    if out["lower_ref"].isna().any():
        raise ValueError("every (key, eps) of the table needs a reference bracket")
    outcome = np.where(out["upper"] <= out["lower_ref"], OUTCOMES[0],
                       np.where(out["lower"] > out["upper_ref"], OUTCOMES[2],
                                OUTCOMES[1]))
    out["outcome"] = outcome
    out["upper_above_ref_upper"] = out["upper"] > out["upper_ref"]
    return out


def comparison_sentence(cmp: pd.DataFrame) -> str:
    """What the certified comparison shows, in words fitting the counts of this table."""
    _need(cmp, ["outcome", "upper_above_ref_upper"])
    total = len(cmp)
    above = int((cmp["outcome"] == OUTCOMES[2]).sum())
    below = int((cmp["outcome"] == OUTCOMES[0]).sum())
    over = total - above - below
    up = int(cmp["upper_above_ref_upper"].sum())
    s = (f"Comparisons (configuration, beta, eps): {total}; certified below the "
         f"well-spread bracket: {below}; certified above it: {above}; overlapping (the "
         f"certificates decide nothing there): {over}. The other configuration's upper "
         f"end exceeds the well-spread upper end in {up} of them.")
    if above == 0:
        s += (" So no configuration of this run is certified to exceed the "
              "well-spread rank; where brackets overlap, the run cannot order them.")
    else:
        s += (" So in this run the well-spread set is certified not to be the "
              "worst case at some (beta, eps).")
    return s


def comparison_summary(cmp: pd.DataFrame) -> pd.DataFrame:
    """Counts of each outcome per configuration (columns in :data:`OUTCOMES` order)."""
    _need(cmp, ["configuration", "outcome"])
    t = pd.crosstab(cmp["configuration"], cmp["outcome"])
    for o in OUTCOMES:
        if o not in t.columns:
            t[o] = 0
    t = t[list(OUTCOMES)]
    t.columns.name = None
    return t.reset_index()


def regularity_drift(lower_table: pd.DataFrame) -> str:
    r"""``"1.16 → 1.51 → 1.75 (β = 16, 32, 64): it grows at every step ..."``: the measured :math:`K/\kappa` per
    :math:`\beta` of :func:`attnrank_lite.laws.sphere_proofs.lower_proof_table` (its scale
    :math:`h = \tau/\sqrt\beta` shrinks as :math:`\beta` grows)."""
    _need(lower_table, ["beta", "kappa", "K"])
    r = (lower_table["K"] / lower_table["kappa"]).groupby(lower_table["beta"]).first()
    trend = ("it grows at every step as the smallest scale shrinks"
             if len(r) > 1 and bool((np.diff(r.to_numpy()) > 0).all())
             else "it does not grow at every step")
    return (" → ".join(f"{v:.3g}" for v in r)
            + " (β = " + ", ".join(f"{b:g}" for b in r.index) + "): " + trend)
