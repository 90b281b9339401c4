r"""Numbers that chapter 3's prose quotes (``thm-ball-law``, ``prop-gaussian-ball``).

Every number a sentence of the chapter states is computed here from the run's own tables and
returned as a string ready for ``myst_nb.glue``, so that a rerun with other parameters keeps
prose and tables consistent.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import ball_law as bl
from .fitting import interval_text
from .plots import add_reference_slope, plot_brackets
from .sweeps import bracket_sweep, sphere_configuration, spherical_instance
from .verdicts import (
    WIDTH_SENTENCE,
    counts_text,
    judged_slope_table,
    slope_verdict,
    width_text,
    width_trend,
)

__all__ = ["ball_figure", "ball_slopes", "ball_sweeps", "d3_sweep", "fixed_grid_sweep",
           "fixed_slopes", "fixed_n_numbers", "format_values", "key_numbers", "sphere_vs_ball",
           "token_figure", "verdict_numbers", "width_report", "fixed_widths"]


def _verified(table: pd.DataFrame, what: str) -> pd.DataFrame:
    if not table["verified"].all():
        raise AssertionError(f"a bracket of the {what} does not verify")
    return table


def token_figure(tokens: pd.DataFrame):
    r"""Natural log of the token count against beta per d, with the line :math:`\beta/8`
    (``tokens``: :func:`attnrank_lite.laws.ball_law.token_count_table`)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for dd, g in tokens.groupby("d"):
        ax.plot(g.beta, g.log_n_eff, "o-", ms=3, label=f"log n_eff, d = {dd}")
    bb = tokens.beta.unique()
    ax.plot(bb, bb / 8, "k--", lw=1, label=r"reference $\beta/8$")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel("natural log of the token count")
    ax.legend(fontsize=8)
    return fig


def ball_sweeps(d: int, spacing_factor: float, betas, eps_values, certificates=(None, None)
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Brackets of the ball grid with Gaussian weights (``weights = "gaussian"``) and with
    uniform multiplicities (``"uniform"``) over ``betas``, every bracket verified
    (``AssertionError`` otherwise). ``certificates``: two folders (or None) where each sweep
    writes one certificate file per beta (:func:`attnrank_lite.laws.sweeps.bracket_sweep`)."""
    ball = bracket_sweep(bl.ball_maker(d, spacing_factor), betas, eps_values, desc="ball",
                         certificates=certificates[0], d=d, weights="gaussian")
    uniform = bracket_sweep(bl.ball_maker(d, spacing_factor, weighted=False), betas,
                            eps_values, desc="uniform", certificates=certificates[1], d=d, weights="uniform")
    return _verified(ball, "ball sweep"), _verified(uniform, "uniform sweep")


def ball_figure(ball: pd.DataFrame, uniform: pd.DataFrame, d: int, spacing_factor: float,
                eps: float):
    r"""Both weightings' brackets at ``eps`` with reference slopes :math:`d/2` (through the
    first Gaussian upper end) and :math:`(d-1)/2` (through its first lower end)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (name, df) in enumerate([("Gaussian weights", ball),
                                    ("uniform multiplicities", uniform)]):
        plot_brackets(ax, df[np.isclose(df["eps"], eps)], label=rf"{name}, $\varepsilon$ = {eps:g}",
                      color=f"C{i}")
    b = ball[np.isclose(ball["eps"], eps)].sort_values("beta")
    first = b.iloc[0]
    add_reference_slope(ax, b["beta"], d / 2, first.beta, first.upper,
                        label=f"slope d/2 = {d / 2:g}")
    add_reference_slope(ax, b["beta"], (d - 1) / 2, first.beta, first.lower,
                        label=f"slope (d-1)/2 = {(d - 1) / 2:g}", color="0.7")
    ax.set_title(f"grid in the ball of radius 1/2, d = {d}, "
                 rf"spacing {spacing_factor:g}/$\sqrt{{\beta}}$")
    ax.legend(fontsize=8)
    return fig


def fixed_grid_sweep(d: int, spacing_factor: float, betas, eps: float, certificates=None) -> pd.DataFrame:
    """Brackets on **one** grid, the one of the largest beta, at every beta with that beta's
    Gaussian weights (``weights = "gaussian, fixed grid"``): the matrix size is the same at
    every beta, the token count n_eff the weights stand for is not. Every bracket verified.
    ``certificates``: a folder for one certificate file per beta."""
    fixed = bracket_sweep(bl.ball_maker(d, spacing_factor, grid_beta=max(betas)), betas, [eps],
                          desc="fixed grid", certificates=certificates, d=d, weights="gaussian, fixed grid")
    return _verified(fixed, "fixed-grid sweep")


def sphere_vs_ball(ball: pd.DataFrame, circle_n: int, betas, eps_values, eps: float, certificates=None):
    """The circle of ``circle_n`` well-spread points against the ball at the same betas.

    ``certificates``: a folder for one certificate file per beta of the circle rows (the ball
    rows are those of ``ball``, whose certificates are that table's).

    Returns
    -------
    both : pandas.DataFrame
        Both bracket tables with a ``geometry`` column.
    figure : matplotlib.figure.Figure
        Both at ``eps``.
    order : pandas.DataFrame
        :func:`attnrank_lite.laws.ball_law.certified_order` at ``eps``.
    crossing : float
        :func:`attnrank_lite.laws.ball_law.loglog_crossing` of the ball's lower ends and the
        circle's upper ends.
    """
    import matplotlib.pyplot as plt

    Xc = sphere_configuration("well-spread", circle_n, 2)
    circ = _verified(bracket_sweep(lambda b: spherical_instance(Xc, b), betas, eps_values,
                                   desc="circle", certificates=certificates,
                                   recipe=lambda b: {"Q": Xc, "beta": b}, d=2, weights="sphere"),
                     "circle sweep")
    both = pd.concat([ball.assign(geometry="ball (Gaussian weights)"),
                      circ.assign(geometry=f"circle, n = {circle_n}")])
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (name, g) in enumerate(both[np.isclose(both["eps"], eps)].groupby("geometry")):
        plot_brackets(ax, g, label=name, color=f"C{i + 2}")
    ax.set_title(rf"d = 2, $\varepsilon$ = {eps:g}: one radial degree more")
    ax.legend(fontsize=8)
    b0 = ball[np.isclose(ball["eps"], eps)]
    c0 = circ[np.isclose(circ["eps"], eps)]
    order = bl.certified_order(b0, c0, names=("ball", "circle"))
    return both, fig, order, bl.loglog_crossing(b0.beta, b0.lower, c0.upper)


def d3_sweep(betas, spacing_factor: float, eps_values, certificates=None
             ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The ball in d = 3 with Gaussian weights, its slope table by the book's rule against 3/2
    (``can fail`` False for the upper end, tied to n as in d = 2) and its width upper/lower per
    beta (one column per eps). ``certificates``: a folder for one certificate file per beta."""
    ball = _verified(bracket_sweep(bl.ball_maker(3, spacing_factor), betas, eps_values,
                                   desc="ball d=3", certificates=certificates, d=3, weights="gaussian"),
                     "d = 3 sweep")
    slopes = judged_slope_table(ball, 1.5)
    slopes["can fail"] = slopes["end"] != "upper"
    widths = width_trend(ball["beta"], ball["lower"], ball["upper"],
                         group=[f"d = 3, eps = {e:g}" for e in ball["eps"]])
    return ball, slopes, widths


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


def fixed_widths(fixed: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Width upper/lower per beta of the fixed-grid sweep (one column per eps) and its phrase
    (:func:`attnrank_lite.laws.verdicts.width_text`)."""
    table = width_trend(fixed["beta"], fixed["lower"], fixed["upper"],
                        group=[f"fixed grid, eps = {e:g}" for e in fixed["eps"]])
    return table, width_text(fixed)


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
    r"""The numbers chapter 3 quotes about the upper law on a fixed grid.

    On the sweep's own grids (spacing :math:`\propto1/\sqrt\beta`) n grows like
    :math:`\beta^{d/2}` and the upper end stays near a fixed fraction of n, so an upper slope
    containing d/2 cannot fail there; the fixed grid (``fixed``, one matrix size for every
    beta, while the token count n_eff moves with the weights) can.

    Returns
    -------
    dict
        ``c3_upper_n`` (range of upper/n on the sweep's grids at ``eps0``), ``c3_fixed_n``,
        ``c3_fixed_up`` (upper slope with its interval), ``c3_fixed_verdict``
        (:func:`attnrank_lite.laws.verdicts.slope_verdict` against d/2: the book's rule),
        ``c3_fixed_upper_n`` (upper/n of the fixed grid at its first and last beta),
        ``c3_fixed_neff`` (the natural log of the token count n_eff the fixed grid stands for,
        at its first and last beta: the grid is fixed, the token count is not).
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
        "c3_fixed_neff": (f"{float(fs.log_n_eff.iloc[0]):.1f} at β = {float(fs.beta.iloc[0]):g} "
                          f"to {float(fs.log_n_eff.iloc[-1]):.1f} at β = "
                          f"{float(fs.beta.iloc[-1]):g}" if "log_n_eff" in fs.columns
                          else "n/a"),
        "c3_fixed_upper_n": (f"{float(fs.upper.iloc[0] / fs.n.iloc[0]):.2f} at β = "
                             f"{float(fs.beta.iloc[0]):g} to "
                             f"{float(fs.upper.iloc[-1] / fs.n.iloc[-1]):.2f} at β = "
                             f"{float(fs.beta.iloc[-1]):g}"),
    }
