r"""Numbers that chapter 3's prose quotes (``thm-ball-law``, ``prop-gaussian-ball``).

Every number a sentence of the chapter states is computed here from the run's own tables and
returned as a string ready for ``myst_nb.glue``, so that a rerun with other parameters keeps
prose and tables consistent.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .fitting import interval_text
from .verdicts import (
    WIDTH_SENTENCE,
    counts_text,
    judged_slope_table,
    slope_verdict,
    width_text,
    width_trend,
)

__all__ = ["ball_slopes", "fixed_slopes", "fixed_n_numbers", "format_values", "key_numbers",
           "verdict_numbers", "width_report"]


def ball_slopes(ball: pd.DataFrame, uniform: pd.DataFrame, d: int) -> pd.DataFrame:
    r"""Chapter 3's slope table by the book's rule
    (:func:`attnrank_lite.laws.verdicts.judged_slope_table`).

    Gaussian weights (``ball``) are judged against :math:`d/2`, uniform multiplicities
    (``uniform``) against :math:`(d-1)/2`. ``can fail`` is False for the upper end: on the
    sweep's grids n grows like :math:`\beta^{d/2}` by construction and the upper end stays a
    near-fixed fraction of n, so its slope measures the drift of upper/n, not the law.

    Returns
    -------
    pandas.DataFrame
        :data:`attnrank_lite.laws.verdicts.SLOPE_COLUMNS`, then eps, end, beta_min,
        beta_max, weights, can fail.
    """
    out = pd.concat([judged_slope_table(ball, d / 2).assign(weights="gaussian"),
                     judged_slope_table(uniform, (d - 1) / 2).assign(weights="uniform")],
                    ignore_index=True)
    out["can fail"] = out["end"] != "upper"
    return out


def fixed_slopes(fixed: pd.DataFrame, d: int) -> pd.DataFrame:
    """Slope table of the fixed-grid family against d/2 by the book's rule; ``can fail`` is
    True for both ends (the grid, hence n, is the same at every beta)."""
    return judged_slope_table(fixed, d / 2).assign(**{"can fail": True})


def width_report(ball: pd.DataFrame, uniform: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Width upper/lower per beta of both weightings (one column per weights and eps), and the
    phrase of :func:`attnrank_lite.laws.verdicts.width_text` per weights and eps."""
    both = pd.concat([ball.assign(weights="gaussian"), uniform.assign(weights="uniform")],
                     ignore_index=True)
    labels = [f"{w}, eps = {e:g}" for w, e in zip(both["weights"], both["eps"])]
    table = width_trend(both["beta"], both["lower"], both["upper"], group=labels)
    return table, width_text(both, by=("weights", "eps"))


def verdict_numbers(slopes: pd.DataFrame, fixed: pd.DataFrame) -> dict[str, str]:
    """Glue strings from the verdict columns: ``c3_verdicts`` (all ends of the sweep's
    table), ``c3_verdicts_can_fail`` (ends that can fail only), ``c3_fixed_verdicts``,
    ``c3_left_out`` (rows left out, summed over the table's ends) and ``c3_width_sentence``."""
    can = slopes[slopes["can fail"]]
    return {"c3_verdicts": counts_text(slopes["verdict"]),
            "c3_verdicts_can_fail": counts_text(can["verdict"]),
            "c3_fixed_verdicts": counts_text(fixed["verdict"]),
            "c3_left_out": str(int(slopes["left_out"].sum() + fixed["left_out"].sum())),
            "c3_width_sentence": WIDTH_SENTENCE}


def format_values(values, name: str | None = None) -> str:
    """``"64, 128 and 256"`` for a list of numbers; ``"none"`` when empty.

    With ``name`` (e.g. ``"β"``): ``"β = 64, 128 and 256"``, or ``"no β of this run"``.
    """
    v = [f"{x:g}" for x in values]
    if not v:
        return "none" if name is None else f"no {name} of this run"
    text = v[0] if len(v) == 1 else ", ".join(v[:-1]) + " and " + v[-1]
    return text if name is None else f"{name} = {text}"


def _int(v) -> str:
    """An integer as text, or ``"n/a"`` for NaN (nothing computed)."""
    return "n/a" if not np.isfinite(float(v)) else str(int(v))


def _small(v: float, fmt: str | None = None) -> str:
    """``v`` formatted with ``fmt``; without ``fmt`` in scientific notation, or a statement that
    it is rounding noise. ``"n/a"`` for NaN (nothing computed)."""
    if not np.isfinite(v):
        return "n/a"
    if fmt is not None:
        return format(v, fmt)
    return f"{v:.1e}" if abs(v) >= 1e-12 else "zero up to rounding (below 1e-12 in size)"


def _slope(slopes: pd.DataFrame, weights: str, eps: float, end: str) -> tuple[str, str, float]:
    row = slopes[(slopes["weights"] == weights) & np.isclose(slopes["eps"], eps)
                 & (slopes["end"] == end)].iloc[0]
    slope, ci = interval_text(row.slope, row.ci_low, row.ci_high).split(" ", 1)
    return slope, ci, float(row.slope)


def key_numbers(d: int, eps0: float, tokens: pd.DataFrame, rounding: pd.DataFrame,
                slopes: pd.DataFrame, order: pd.DataFrame, crossing: float,
                tol: float) -> dict[str, str]:
    r"""The chapter's quoted numbers, as strings.

    Parameters
    ----------
    d : int
        Dimension of the main sweep.
    eps0 : float
        Error level of the figures and of the prose.
    tokens : pandas.DataFrame
        :func:`attnrank_lite.laws.ball_law.token_count_table`.
    rounding : pandas.DataFrame
        :func:`attnrank_lite.laws.ball_law.rounding_table` for the sweep's betas.
    slopes : pandas.DataFrame
        Slope table with a ``weights`` column (``"gaussian"`` / ``"uniform"``).
    order : pandas.DataFrame
        :func:`attnrank_lite.laws.ball_law.certified_order` with ``names=("ball", "circle")``
        at ``eps0``.
    crossing : float
        Extrapolated beta where the ball's fitted lower line meets the circle's upper line.
    tol : float
        The run's ``rounding_tol``.
    """
    tk = tokens[tokens["d"] == d].sort_values("beta")
    if tk.empty:  # every grid of this d was too large for the token table
        tk = pd.DataFrame([dict.fromkeys(tokens.columns, float("nan"))])
    last = tk.iloc[-1]
    lo, lo_ci, _ = _slope(slopes, "gaussian", eps0, "lower")
    up, up_ci, _ = _slope(slopes, "gaussian", eps0, "upper")
    ulo, ulo_ci, _ = _slope(slopes, "uniform", eps0, "lower")
    uup, uup_ci, _ = _slope(slopes, "uniform", eps0, "upper")
    urow = slopes[(slopes["weights"] == "uniform") & np.isclose(slopes["eps"], eps0)
                  & (slopes["end"] == "upper")].iloc[0]
    u_in = bool(urow.ci_low <= (d - 1) / 2 <= urow.ci_high)
    grow = slopes[(slopes["weights"] == "gaussian") & np.isclose(slopes["eps"], eps0)
                  ].set_index("end")["verdict"]
    worst1 = rounding.loc[rounding["change_1"].idxmax()]
    sweep_last = rounding.sort_values("beta").iloc[-1]
    return {
        "c3_d": str(d),
        "c3_eps0": f"{eps0:g}",
        "c3_half_d": f"{d / 2:g}",
        "c3_half_dm1": f"{(d - 1) / 2:g}",
        "c3_theta_minus_1": f"{math.expm1(float(last.log_theta_d) / d):.1e}",
        "c3_log_constant": f"{float(last.log_constant):.4f}",
        "c3_tokens_beta": _small(float(last.beta), "g"),
        "c3_tokens_grid": _int(last.grid_points),
        "c3_tokens_digits": _int(math.floor(float(last.log_n_eff) / math.log(10)) + 1
                                 if np.isfinite(last.log_n_eff) else float("nan")),
        "c3_log_f_last": _small(float(last.log_mass_fraction)),
        "c3_log_f_first": _small(float(tk.iloc[0].log_mass_fraction), ".2f"),
        "c3_tokens_beta_first": _small(float(tk.iloc[0].beta), "g"),
        "c3_K": str(int(rounding["K"].iloc[0])),
        "c3_tol": f"{tol:g}",
        "c3_bound_K": f"{float(rounding['bound_K'].iloc[0]):.2e}",
        "c3_change_K": f"{float(rounding['change_K'].max()):.1e}",
        "c3_change_1": f"{float(worst1.change_1):.3f}",
        "c3_change_1_beta": f"{float(worst1.beta):g}",
        "c3_sweep_beta_max": f"{float(sweep_last.beta):g}",
        "c3_sweep_grid_max": str(int(sweep_last.grid_points)),
        "c3_sweep_digits_max": str(math.floor(
            float(sweep_last.log_tokens_K) / math.log(10)) + 1),
        "c3_lo": lo, "c3_lo_ci": lo_ci, "c3_up": up, "c3_up_ci": up_ci,
        "c3_lo_verdict": str(grow["lower"]),
        "c3_up_verdict": str(grow["upper"]),
        "c3_ulo": ulo, "c3_ulo_ci": ulo_ci, "c3_uup": uup, "c3_uup_ci": uup_ci,
        "c3_uup_contains": "contains" if u_in else "does not contain",
        "c3_circle_above": format_values(order.loc[order["order"] == "circle above", "beta"], "β"),
        "c3_ball_above": format_values(order.loc[order["order"] == "ball above", "beta"], "β"),
        "c3_overlap": format_values(order.loc[order["order"] == "overlap", "beta"], "β"),
        "c3_crossing": (f"at β ≈ {crossing:.0f}" if np.isfinite(crossing) and crossing > 0
                        else "nowhere at β > 0"),
    }


def fixed_n_numbers(d: int, eps0: float, ball: pd.DataFrame, fixed: pd.DataFrame,
                    fixed_slopes: pd.DataFrame) -> dict[str, str]:
    r"""The numbers chapter 3 quotes about the upper law on a fixed-n family.

    On the sweep's own grids (spacing :math:`\propto1/\sqrt\beta`) n grows like
    :math:`\beta^{d/2}` and the upper end stays near a fixed fraction of n, so an upper slope
    containing d/2 cannot fail there; the fixed grid (``fixed``, one n for every beta) can.

    Returns
    -------
    dict
        ``c3_upper_n`` (range of upper/n on the sweep's grids at ``eps0``), ``c3_fixed_n``,
        ``c3_fixed_up`` (upper slope with its interval), ``c3_fixed_verdict``
        (:func:`attnrank_lite.laws.verdicts.slope_verdict` against d/2: the book's rule),
        ``c3_fixed_upper_n`` (upper/n of the fixed grid at its first and last beta).
    """
    b = ball[np.isclose(ball["eps"], eps0)]
    f = fixed[np.isclose(fixed["eps"], eps0)]
    r = (b["upper"] / b["n"]).agg(["min", "max"])
    fs = f.sort_values("beta")
    row = fixed_slopes[np.isclose(fixed_slopes["eps"], eps0)
                       & (fixed_slopes["end"] == "upper")].iloc[0]
    return {
        "c3_upper_n": f"{r['min']:.2f} to {r['max']:.2f}",
        "c3_fixed_n": str(int(f["n"].iloc[0])),
        "c3_fixed_up": interval_text(row.slope, row.ci_low, row.ci_high),
        "c3_fixed_verdict": (row.verdict if "verdict" in row.index
                             else slope_verdict(row.ci_low, row.ci_high, d / 2, row.points)),
        "c3_fixed_upper_n": (f"{float(fs.upper.iloc[0] / fs.n.iloc[0]):.2f} at β = "
                             f"{float(fs.beta.iloc[0]):g} to "
                             f"{float(fs.upper.iloc[-1] / fs.n.iloc[-1]):.2f} at β = "
                             f"{float(fs.beta.iloc[-1]):g}"),
    }
