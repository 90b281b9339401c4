r"""Tables and glued numbers (strings, from the run's own tables) of chapters 2, 3 and 7 and the
text of ``sweep --report``; slopes judged by :mod:`~attnrank_lite.laws.verdicts`."""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from . import ball_law as bl
from . import law_store, plots, scale
from . import spectra as sp
from . import sphere_proofs as pf
from .fitting import interval_text
from .geometry import well_spread_sphere
from .spectra import harmonic_count
from .sweeps import bracket_sweep, spherical_instance
from .verdicts import (
    SLOPE_COLUMNS,
    WIDTH_SENTENCE,
    capped_rows,
    counts_text,
    judge_slope,
    judged_slope_table,
    slope_verdict,
    verdict_counts,
    width_text,
    width_trend,
)

__all__ = ["OUTCOMES", "ball_slopes", "ball_sweeps", "capped", "capped_text", "certificate_count", "combined_run",
           "compare_configurations", "comparison_sentence", "comparison_summary", "constant_brackets",
           "constants_summary", "d3_sweep", "fixed_grid_sweep", "fixed_n_numbers", "fixed_slopes", "fixed_widths",
           "format_values", "heuristic_table", "key_numbers", "law_numbers", "law_report", "law_section",
           "law_slopes", "law_table", "live_report", "lower_check", "n_sweep", "one_plus_slope", "provenance_lines",
           "recheck_stored", "regularity_drift", "report_lines", "slopes_text", "spectrum_check", "sphere_vs_ball",
           "store_summary", "stored_report", "stored_rows", "sweep_command", "upper_check", "verdict_numbers",
           "width_report", "width_table"]

#: outcomes of :func:`compare_configurations`
OUTCOMES = ("certified below", "overlapping", "certified above")


def _need(df: pd.DataFrame, cols) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"table lacks column(s) {missing}; has {list(df.columns)}")


def _verified(table: pd.DataFrame, what: str) -> pd.DataFrame:
    if not table["verified"].all():
        raise AssertionError(f"a bracket of the {what} does not verify")
    return table


def _labelled_widths(df: pd.DataFrame, labels) -> pd.DataFrame:
    return width_trend(df["beta"], df["lower"], df["upper"], group=list(labels))


def format_values(values, name: str | None = None) -> str:
    """``"64, 128 and 256"`` (``"none"``), with ``name``: ``"β = 64, 128 and 256"`` (``"no β of this run"``)."""
    v = [f"{x:g}" for x in values]
    if not v:
        return "none" if name is None else f"no {name} of this run"
    text = v[0] if len(v) == 1 else ", ".join(v[:-1]) + " and " + v[-1]
    return text if name is None else f"{name} = {text}"


# ------------------------------------------------------------------ chapter 2: the spherical law

def law_slopes(brackets: pd.DataFrame, d: int) -> pd.DataFrame:
    r"""Slope table of one spherical sweep judged against :math:`(d-1)/2`, with a column d."""
    return judged_slope_table(brackets, (d - 1) / 2).assign(d=int(d))


def law_section(brackets: pd.DataFrame, d: int, title: str):
    r"""``(slopes, widths, figure)``: :func:`law_slopes`, width per beta and eps, the brackets."""
    widths = _labelled_widths(brackets, (f"eps = {e:g}" for e in brackets["eps"]))
    return law_slopes(brackets, d), widths, plots.law_figure(brackets, (d - 1) / 2, title)


def slopes_text(slopes: pd.DataFrame) -> str:
    """``"ε = 0.1: lower 0.50 [0.47, 0.53] (inside), upper ... (below)"``; groups joined by ``"; "``."""
    parts = []
    for eps, g in slopes.groupby("eps"):
        ends = ", ".join(f"{r.end} {interval_text(r.slope, r.ci_low, r.ci_high)} ({r.verdict})"
                         for r in g.itertuples())
        parts.append(f"ε = {eps:g}: {ends}")
    return "; ".join(parts)


def law_numbers(sections, d4: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """All slopes of chapter 2 stacked, and the ``ch02_*`` numbers; ``sections``: ``(d, brackets, slopes)``."""
    sections = [s for s in sections if s[1] is not None]
    slopes = pd.concat([s for _, _, s in sections], ignore_index=True)
    width_max = {d: float((b["upper"] / b["lower"].clip(lower=1)).max()) for d, b, _ in sections}
    trend = []
    for d, b, _ in sections:
        for eps, g in b.groupby("eps"):
            g = g.sort_values("beta")
            w = (g["upper"] / g["lower"].clip(lower=1)).to_numpy()
            trend.append(f"d = {d}, ε = {eps:g}: {w[0]:.3g} → {w[-1]:.3g} "
                         f"(β = {g['beta'].iloc[0]:g} → {g['beta'].iloc[-1]:g})")
    kinds = sorted(set(d4["lower_kind"].replace({"neumann": "inverse-norm"})))
    ups = sorted(set(d4["upper_source"].str.replace(r" degree \d+| \(l=\d+\)", "", regex=True)))
    return slopes, {
        "ch02_verdicts": counts_text(slopes["verdict"]),
        "ch02_left_out": str(int(slopes["left_out"].sum())),
        "ch02_width_max": ", ".join(f"d = {d}: {w:.2f}" for d, w in width_max.items()),
        "ch02_widest": str(max(width_max, key=width_max.get)),
        "ch02_width_trend": "; ".join(trend),
        "ch02_width_sentence": WIDTH_SENTENCE,
        "ch02_d4_lower": " and ".join(kinds),
        "ch02_d4_upper": " and ".join(ups),
    }


def constant_brackets(df: pd.DataFrame, d: int) -> pd.DataFrame:
    r"""Brackets of the law's constant :math:`c = \operatorname{rank}_\varepsilon/(1+\beta)^{(d-1)/2}`."""
    _need(df, ["beta", "eps", "n", "lower", "upper"])
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    scale_ = (1.0 + df["beta"].astype(float)) ** ((d - 1) / 2)
    out = pd.DataFrame({"d": int(d), "n": df["n"], "beta": df["beta"], "eps": df["eps"],
                        "lower": df["lower"], "upper": df["upper"],
                        "c_lower": df["lower"] / scale_, "c_upper": df["upper"] / scale_})
    return out.sort_values(["eps", "beta"]).reset_index(drop=True)


def constants_summary(tables) -> pd.DataFrame:
    r"""Per (d, eps), from :func:`constant_brackets` tables: :math:`\min c_\text{lower}\le c_1 =
    \min_\beta c\le\min c_\text{upper}` and likewise :math:`c_2 = \max_\beta c` (c1_low ... c2_high)."""
    g = pd.concat(list(tables), ignore_index=True).groupby(["d", "eps"])
    return pd.DataFrame({
        "n": g["n"].max(), "beta_min": g["beta"].min(), "beta_max": g["beta"].max(),
        "c1_low": g["c_lower"].min(), "c1_high": g["c_upper"].min(),
        "c2_low": g["c_lower"].max(), "c2_high": g["c_upper"].max(),
    }).reset_index()


def compare_configurations(df: pd.DataFrame, reference: str = "well-spread", key: str = "beta") -> pd.DataFrame:
    r"""Each configuration's bracket against the reference's at the same (key, eps): ``outcome``
    certified below (upper <= reference lower), above (lower > reference upper) or overlapping."""
    _need(df, ["configuration", key, "eps", "lower", "upper"])
    ref = df[df["configuration"] == reference]
    if ref.empty:
        raise ValueError(f"reference configuration {reference!r} not in the table")
    out = df[df["configuration"] != reference].merge(
        ref[[key, "eps", "lower", "upper"]], on=[key, "eps"], how="left", suffixes=("", "_ref"),
        validate="many_to_one")
    if out["lower_ref"].isna().any():
        raise ValueError("every (key, eps) of the table needs a reference bracket")
    out["outcome"] = np.where(out["upper"] <= out["lower_ref"], OUTCOMES[0],
                              np.where(out["lower"] > out["upper_ref"], OUTCOMES[2], OUTCOMES[1]))
    out["upper_above_ref_upper"] = out["upper"] > out["upper_ref"]
    return out


def comparison_sentence(cmp: pd.DataFrame) -> str:
    """What :func:`compare_configurations` shows, in words fitting this table's counts."""
    _need(cmp, ["outcome", "upper_above_ref_upper"])
    above = int((cmp["outcome"] == OUTCOMES[2]).sum())
    below = int((cmp["outcome"] == OUTCOMES[0]).sum())
    s = (f"Comparisons (configuration, beta, eps): {len(cmp)}; certified below the "
         f"well-spread bracket: {below}; certified above it: {above}; overlapping (the "
         f"certificates decide nothing there): {len(cmp) - above - below}. The other "
         f"configuration's upper end exceeds the well-spread upper end in "
         f"{int(cmp['upper_above_ref_upper'].sum())} of them.")
    if above == 0:
        return s + (" So no configuration of this run is certified to exceed the "
                    "well-spread rank; where brackets overlap, the run cannot order them.")
    return s + (" So in this run the well-spread set is certified not to be the "
                "worst case at some (beta, eps).")


def comparison_summary(cmp: pd.DataFrame) -> pd.DataFrame:
    """Counts of each outcome per configuration (columns in :data:`OUTCOMES` order)."""
    _need(cmp, ["configuration", "outcome"])
    t = pd.crosstab(cmp["configuration"], cmp["outcome"])
    t = t.reindex(columns=list(OUTCOMES), fill_value=0)
    t.columns.name = None
    return t.reset_index()


def regularity_drift(lower_table: pd.DataFrame) -> str:
    r"""``"1.16 → 1.51 (β = 16, 32): it grows ..."``: :math:`K/\kappa` per beta of a lower proof table."""
    _need(lower_table, ["beta", "kappa", "K"])
    r = (lower_table["K"] / lower_table["kappa"]).groupby(lower_table["beta"]).first()
    trend = ("it grows at every step as the smallest scale shrinks"
             if len(r) > 1 and bool((np.diff(r.to_numpy()) > 0).all())
             else "it does not grow at every step")
    return " → ".join(f"{v:.3g}" for v in r) + " (β = " + ", ".join(f"{b:g}" for b in r.index) + "): " + trend


def upper_check(X: np.ndarray, betas, eps_values, sphere: pd.DataFrame):
    r"""``thm-sphere-upper`` on ``X``: the upper proof table with ``sphere``'s ``upper``, and
    ``ch02_up_ok`` (``0 <= L_construction <= L_tail <= L_bessel <= L_closed`` on every row) and
    ``ch02_up_*`` (:func:`~attnrank_lite.laws.sphere_proofs.price_of_proof`)."""
    up = pf.upper_proof_table(X, betas, eps_values, harmonic=True)
    up = up.merge(sphere[["beta", "eps", "upper"]], on=["beta", "eps"])
    ok = bool(((up.L_construction >= 0) & (up.L_construction <= up.L_tail)
               & (up.L_tail <= up.L_bessel) & (up.L_bessel <= up.L_closed)).all())
    nums = {f"ch02_up_{k}": v for k, v in pf.price_of_proof(up).items()}
    nums["ch02_up_ok"] = "holds" if ok else "FAILS"
    return up, nums


def lower_check(X: np.ndarray, betas, eps_values, sphere: pd.DataFrame):
    r"""``thm-sphere-lower`` on ``X``: the lower proof table with ``sphere``'s ``lower``, and
    ``ch02_lo_ok`` (every cap packing verifies and reaches the proven count) and ``ch02_lo_*``."""
    lo = pf.lower_proof_table(X, betas, eps_values)
    lo = lo.merge(sphere[["beta", "eps", "lower"]], on=["beta", "eps"])
    ok = bool((lo.verified & (lo.construction >= lo.proven)).all())
    return lo, {
        "ch02_lo_ok": "holds" if ok else "FAILS",
        "ch02_lo_mass": f"{lo.min_diag_mass.min():.3f}",
        "ch02_lo_need": f"{(1 + max(eps_values)) / 2:.3f}",
        "ch02_lo_search": f"{int((lo.lower > lo.construction).sum())} of {len(lo)}",
        "ch02_lo_drift": regularity_drift(lo),
    }


def n_sweep(beta: float, ns, eps_values, certificates=None):
    """Verified brackets of ``n`` equispaced circle points at ``beta`` per n in ``ns``, and figure."""
    table = bracket_sweep(lambda n: spherical_instance(well_spread_sphere(n, 2), beta), ns,
                          eps_values, key="n_points", desc="n-sweep", l1_limit=0,
                          certificates=certificates,
                          recipe=lambda n: {"Q": well_spread_sphere(n, 2), "beta": beta})
    _verified(table, "n-sweep")
    return table, plots.n_sweep_figure(table, ns, beta)


def spectrum_check(n: int, beta: float, tol: float = 1e-4):
    """``(table, figure, max |empirical / funk_hecke - 1|)``: Fibonacci-sphere singular values
    against ``prop-funk-hecke``."""
    sv = np.linalg.svd(spherical_instance(well_spread_sphere(n, 3), beta), compute_uv=False)
    pred = sp.predicted_attention_spectrum(beta, 3, sp.harmonic_degree_for_tolerance(beta, 3, tol))
    k = min(pred.size, sv.size)
    table = pd.DataFrame({"index": np.arange(1, k + 1), "empirical": sv[:k], "funk_hecke": pred[:k]})
    return (table, plots.spectrum_figure(sv, pred, k, n, beta), float(np.max(np.abs(sv[:k] / pred[:k] - 1))))


def heuristic_table(tol: float, betas=None, dims=(2, 3, 4)):
    """Per d and beta (default 11 from 4 to 4096): the heuristic's ``L``, ``harmonic_count``; figure."""
    betas = np.geomspace(4, 4096, 11) if betas is None else np.asarray(betas, dtype=float)
    table = pd.DataFrame([{"beta": b, "d": d, "L": sp.harmonic_degree_for_tolerance(b, d, tol),
                           "harmonic_count": sp.spectral_rank_heuristic(b, d, tol)}
                          for d in dims for b in betas])
    return table, plots.heuristic_figure(table, tol)


# ------------------------------------------------------------------ chapter 3: the ball law

def ball_sweeps(d: int, spacing_factor: float, betas, eps_values, certificates=(None, None)):
    """Verified brackets of the ball grid with Gaussian weights and with uniform multiplicities."""
    ball = bracket_sweep(bl.ball_maker(d, spacing_factor), betas, eps_values, desc="ball",
                         certificates=certificates[0], d=d, weights="gaussian")
    uniform = bracket_sweep(bl.ball_maker(d, spacing_factor, weighted=False), betas, eps_values,
                            desc="uniform", certificates=certificates[1], d=d, weights="uniform")
    return _verified(ball, "ball sweep"), _verified(uniform, "uniform sweep")


def fixed_grid_sweep(d: int, spacing_factor: float, betas, eps: float, certificates=None):
    """Verified brackets on the largest beta's grid at every beta with its Gaussian weights."""
    fixed = bracket_sweep(bl.ball_maker(d, spacing_factor, grid_beta=max(betas)), betas, [eps],
                          desc="fixed grid", certificates=certificates, d=d,
                          weights="gaussian, fixed grid")
    return _verified(fixed, "fixed-grid sweep")


def sphere_vs_ball(ball: pd.DataFrame, circle_n: int, betas, eps_values, eps: float, certificates=None):
    """The circle of ``circle_n`` points against the ball: ``(both, figure, order, crossing)`` at ``eps``."""
    Xc = well_spread_sphere(circle_n, 2)
    circ = _verified(bracket_sweep(lambda b: spherical_instance(Xc, b), betas, eps_values,
                                   desc="circle", certificates=certificates,
                                   recipe=lambda b: {"Q": Xc, "beta": b}, d=2, weights="sphere"),
                     "circle sweep")
    both = pd.concat([ball.assign(geometry="ball (Gaussian weights)"),
                      circ.assign(geometry=f"circle, n = {circle_n}")])
    b0 = ball[np.isclose(ball["eps"], eps)]
    c0 = circ[np.isclose(circ["eps"], eps)]
    return (both, plots.circle_vs_ball_figure(both, eps),
            bl.certified_order(b0, c0, names=("ball", "circle")),
            bl.loglog_crossing(b0.beta, b0.lower, c0.upper))


def d3_sweep(betas, spacing_factor: float, eps_values, certificates=None):
    """The ball in d = 3: brackets, slopes against 3/2 (the upper end cannot fail) and widths."""
    ball = _verified(bracket_sweep(bl.ball_maker(3, spacing_factor), betas, eps_values,
                                   desc="ball d=3", certificates=certificates, d=3,
                                   weights="gaussian"), "d = 3 sweep")
    slopes = judged_slope_table(ball, 1.5)
    slopes["can fail"] = slopes["end"] != "upper"
    return ball, slopes, _labelled_widths(ball, (f"d = 3, eps = {e:g}" for e in ball["eps"]))


def ball_slopes(ball: pd.DataFrame, uniform: pd.DataFrame, d: int) -> pd.DataFrame:
    r"""Chapter 3's slopes: Gaussian weights against :math:`d/2`, uniform against :math:`(d-1)/2`;
    ``can fail`` False for the upper end (n grows like :math:`\beta^{d/2}`, upper/n near fixed)."""
    out = pd.concat([judged_slope_table(ball, d / 2).assign(weights="gaussian"),
                     judged_slope_table(uniform, (d - 1) / 2).assign(weights="uniform")],
                    ignore_index=True)
    out["can fail"] = out["end"] != "upper"
    return out


def fixed_slopes(fixed: pd.DataFrame, d: int) -> pd.DataFrame:
    """The fixed-grid slopes against d/2 by the book's rule; both ends can fail (n is fixed)."""
    return judged_slope_table(fixed, d / 2).assign(**{"can fail": True})


def width_report(ball: pd.DataFrame, uniform: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Width per beta of both weightings, and its phrase per weights and eps."""
    both = pd.concat([ball.assign(weights="gaussian"), uniform.assign(weights="uniform")], ignore_index=True)
    labels = (f"{w}, eps = {e:g}" for w, e in zip(both["weights"], both["eps"]))
    return _labelled_widths(both, labels), width_text(both, by=("weights", "eps"))


def fixed_widths(fixed: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Width upper/lower per beta of the fixed-grid sweep, and its phrase."""
    labels = (f"fixed grid, eps = {e:g}" for e in fixed["eps"])
    return _labelled_widths(fixed, labels), width_text(fixed)


def verdict_numbers(slopes: pd.DataFrame, fixed: pd.DataFrame) -> dict[str, str]:
    """Chapter 3's verdict counts (``c3_verdicts*``), ``c3_left_out``, ``c3_width_sentence``."""
    return {"c3_verdicts": counts_text(slopes["verdict"]),
            "c3_verdicts_can_fail": counts_text(slopes.loc[slopes["can fail"], "verdict"]),
            "c3_fixed_verdicts": counts_text(fixed["verdict"]),
            "c3_left_out": str(int(slopes["left_out"].sum() + fixed["left_out"].sum())),
            "c3_width_sentence": WIDTH_SENTENCE}


def _int(v) -> str:
    return "n/a" if not np.isfinite(float(v)) else str(int(v))


def _small(v: float, fmt: str | None = None) -> str:
    """``v`` with ``fmt``, else in scientific notation or as rounding noise; ``"n/a"`` for NaN."""
    if not np.isfinite(v):
        return "n/a"
    if fmt is not None:
        return format(v, fmt)
    return f"{v:.1e}" if abs(v) >= 1e-12 else "zero up to rounding (below 1e-12 in size)"


def _slope_row(slopes: pd.DataFrame, weights: str, eps: float, end: str):
    return slopes[(slopes["weights"] == weights) & np.isclose(slopes["eps"], eps)
                  & (slopes["end"] == end)].iloc[0]


def key_numbers(d: int, eps0: float, tokens: pd.DataFrame, rounding: pd.DataFrame,
                slopes: pd.DataFrame, order: pd.DataFrame, crossing: float,
                tol: float) -> dict[str, str]:
    """Chapter 3's quoted numbers (token, rounding, slope tables; ``order``, ``crossing`` at ``eps0``)."""
    tk = tokens[tokens["d"] == d].sort_values("beta")
    if tk.empty:  # every grid of this d was too large for the token table
        tk = pd.DataFrame([dict.fromkeys(tokens.columns, float("nan"))])
    last = tk.iloc[-1]
    out = {}
    for w, p in (("gaussian", "c3_"), ("uniform", "c3_u")):
        for end, e in (("lower", "lo"), ("upper", "up")):
            r = _slope_row(slopes, w, eps0, end)
            out[p + e], out[p + e + "_ci"] = interval_text(r.slope, r.ci_low, r.ci_high).split(" ", 1)
    urow = _slope_row(slopes, "uniform", eps0, "upper")
    grow = slopes[(slopes["weights"] == "gaussian") & np.isclose(slopes["eps"], eps0)].set_index("end")["verdict"]
    worst1 = rounding.loc[rounding["change_1"].idxmax()]
    sweep_last = rounding.sort_values("beta").iloc[-1]
    ordered = {k: format_values(order.loc[order["order"] == v, "beta"], "β")
               for k, v in (("circle_above", "circle above"), ("ball_above", "ball above"),
                            ("overlap", "overlap"))}
    return {
        "c3_d": str(d), "c3_eps0": f"{eps0:g}", "c3_half_d": f"{d / 2:g}",
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
        "c3_K": str(int(rounding["K"].iloc[0])), "c3_tol": f"{tol:g}",
        "c3_bound_K": f"{float(rounding['bound_K'].iloc[0]):.2e}",
        "c3_change_K": f"{float(rounding['change_K'].max()):.1e}",
        "c3_change_1": f"{float(worst1.change_1):.3f}",
        "c3_change_1_beta": f"{float(worst1.beta):g}",
        "c3_sweep_beta_max": f"{float(sweep_last.beta):g}",
        "c3_sweep_grid_max": str(int(sweep_last.grid_points)),
        "c3_sweep_digits_max": str(math.floor(float(sweep_last.log_tokens_K) / math.log(10)) + 1),
        **out,
        "c3_lo_verdict": str(grow["lower"]), "c3_up_verdict": str(grow["upper"]),
        "c3_uup_contains": ("contains" if urow.ci_low <= (d - 1) / 2 <= urow.ci_high else "does not contain"),
        **{f"c3_{k}": v for k, v in ordered.items()},
        "c3_crossing": (f"at β ≈ {crossing:.0f}" if np.isfinite(crossing) and crossing > 0 else "nowhere at β > 0"),
    }


def fixed_n_numbers(d: int, eps0: float, ball: pd.DataFrame, fixed: pd.DataFrame,
                    fixed_slopes: pd.DataFrame) -> dict[str, str]:
    """Chapter 3's numbers on the upper law on a fixed grid (where its slope can fail)."""
    b = ball[np.isclose(ball["eps"], eps0)]
    f = fixed[np.isclose(fixed["eps"], eps0)]
    r = (b["upper"] / b["n"]).agg(["min", "max"])
    fs = f.sort_values("beta")
    first, last = fs.iloc[0], fs.iloc[-1]
    row = fixed_slopes[np.isclose(fixed_slopes["eps"], eps0) & (fixed_slopes["end"] == "upper")].iloc[0]
    return {
        "c3_upper_n": f"{r['min']:.2f} to {r['max']:.2f}",
        "c3_fixed_n": str(int(f["n"].iloc[0])),
        "c3_fixed_up": interval_text(row.slope, row.ci_low, row.ci_high),
        "c3_fixed_verdict": (row.verdict if "verdict" in row.index
                             else slope_verdict(row.ci_low, row.ci_high, d / 2, row.points)),
        "c3_fixed_neff": (f"{float(first.log_n_eff):.1f} at β = {float(first.beta):g} to "
                          f"{float(last.log_n_eff):.1f} at β = {float(last.beta):g}"
                          if "log_n_eff" in fs.columns else "n/a"),
        "c3_fixed_upper_n": (f"{float(first.upper / first.n):.2f} at β = {float(first.beta):g} to "
                             f"{float(last.upper / last.n):.2f} at β = {float(last.beta):g}"),
    }


# ------------------------------------------------------------------ chapter 7: the stored sweep

def certificate_count(df: pd.DataFrame) -> np.ndarray:
    r""":math:`N(d,\le L)` of each row's harmonic certificate of degree ``L`` (NaN without one)."""
    if "degree" not in df.columns:
        return np.full(len(df), np.nan)
    return np.array([np.nan if pd.isna(L) else float(harmonic_count(int(L), int(d)))
                     for d, L in zip(df["d"], df["degree"])], dtype=np.float64)


def capped(df: pd.DataFrame) -> np.ndarray:
    """Rows whose upper certificate is capped (``upper >= n`` or :func:`certificate_count` ``>= n``)."""
    n = df["n_points"] if "n_points" in df.columns else df["n"]
    return capped_rows(df["upper"], n, count=certificate_count(df))


def law_table(df: pd.DataFrame) -> pd.DataFrame:
    r"""Chapter 7's law table: each end's slope per ``(d, n, point set, eps)`` judged against
    :math:`(d-1)/2`, :func:`capped` rows left out of both ends' fits."""
    df = df.reset_index(drop=True)
    sets = df["points"] if "points" in df.columns else pd.Series("well-spread", index=df.index)
    out_rows = capped(df)
    parts = []
    for (d, n, pts, eps), g in df.assign(_set=sets).groupby(["d", "n", "_set", "eps"]):
        if g["beta"].nunique() < 2:
            continue
        for end in ("lower", "upper"):
            row = judge_slope(g["beta"], g[end], (d - 1) / 2, left_out=out_rows[g.index])
            row.update(d=int(d), n=int(n), point_set=pts, eps=float(eps), end=end,
                       beta_min=float(g["beta"].min()), beta_max=float(g["beta"].max()))
            parts.append(row)
    if not parts:
        raise ValueError("the rows hold no (d, eps) with two or more beta values: nothing to fit")
    cols = [*SLOPE_COLUMNS, "d", "n", "point_set", "eps", "end", "beta_min", "beta_max"]
    return pd.DataFrame(parts)[cols].sort_values(["d", "n", "point_set", "eps", "end"]).reset_index(drop=True)


def store_summary(df: pd.DataFrame) -> dict:
    """What a store holds: parameters, code hashes, rows, task seconds (wall and CPU)."""
    def values(c, f):
        return sorted(f(x) for x in df[c].unique())

    return {"rows": len(df), "d": values("d", int), "n": values("n", int),
            "beta": values("beta", float), "eps": values("eps", float),
            "points": values("points", str), "seed": values("seed", int),
            "code_hash": values("code_hash", str), "all_verified": bool(df["verified"].all()),
            "task_wall_s": float(df["wall_s"].sum()), "task_cpu_s": float(df["cpu_s"].sum())}


def sweep_command(d_values, n, betas, eps_values, points="well-spread", seed=0, store="laws.sqlite") -> str:
    """The ``sweep`` command line that computes these configurations (as it would be typed)."""
    parts = ["python -m attnrank_lite sweep", "--d", *map(str, d_values), "--n", str(n),
             "--beta", *(f"{b:g}" for b in betas), "--eps", *(f"{e:g}" for e in eps_values)]
    if points != "well-spread":
        parts += ["--points", str(points)]
    if int(seed) != 0:
        parts += ["--seed", str(seed)]
    return " ".join([*parts, "--store", str(store)])


def capped_text(rows: pd.DataFrame) -> str:
    """The :func:`capped` rows, one phrase each, or ``"none"``."""
    rows = rows.reset_index(drop=True)
    count = certificate_count(rows)
    n = rows["n_points"] if "n_points" in rows.columns else rows["n"]
    parts = []
    for i in np.flatnonzero(capped(rows)):
        r = rows.iloc[i]
        why = (f"count {int(count[i]):,} ≥ n = {int(n.iloc[i]):,}" if np.isfinite(count[i])
               and count[i] >= n.iloc[i] else f"upper = n = {int(n.iloc[i]):,}")
        src = f", {r['upper_source']}" if "upper_source" in rows.columns else ""
        term = (1.0 + float(r["beta"])) ** ((int(r["d"]) - 1) / 2)
        parts.append(f"d = {int(r['d'])}, β = {r['beta']:g}, ε = {r['eps']:g}: "
                     f"[{int(r['lower']):,}, {int(r['upper']):,}]{src}, {why} "
                     f"(the law's term (1+β)^((d-1)/2) = {term:,.0f})")
    return "; ".join(parts) if parts else "none"


def width_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Width upper/lower, one row per ``(d, eps)``, one column per beta (``beta = ...``)."""
    w = _labelled_widths(rows, (f"d = {int(d)}, eps = {e:g}" for d, e in zip(rows["d"], rows["eps"]))).T
    w.columns = [f"beta = {b:g}" for b in w.columns]
    w.index.name = "d, eps"
    return w


def one_plus_slope(betas) -> float:
    r"""Least-squares slope of :math:`\log(1+\beta)` on :math:`\log\beta` (distinct betas)."""
    b = np.unique(np.asarray(betas, dtype=np.float64))
    return float(np.polyfit(np.log(b), np.log1p(b), 1)[0])


def law_report(rows: pd.DataFrame, command: str, prefix: str) -> dict:
    """``command``, ``rows``, ``law``, ``width``, ``figure`` and ``glue`` (``f"{prefix}_..."``) of a sweep."""
    rows = rows.reset_index(drop=True)
    rows = rows.assign(harmonic_count=certificate_count(rows), capped=capped(rows))
    law = law_table(rows)
    c = verdict_counts(law["verdict"])
    glue = {"rows": str(len(rows)), "verdicts": counts_text(law["verdict"]),
            "fitted": str(c["total"]), "off": str(c["above"] + c["below"]),
            "exact": str(int(((law["ci_high"] - law["ci_low"]).abs() <= 1e-9).sum())),
            "one_plus": f"{one_plus_slope(rows['beta']):.2f}",
            "capped": str(int(rows["capped"].sum())), "capped_rows": capped_text(rows),
            "width": width_text(rows, by=("d", "eps")), "width_sentence": WIDTH_SENTENCE}
    return {"command": command, "rows": rows, "law": law, "width": width_table(rows),
            "figure": plots.law_scale_figure(rows, rows["capped"]),
            "glue": {f"{prefix}_{k}": v for k, v in glue.items()}}


def live_report(d_values, n, betas, eps_values, seed=0, executor=None, prefix="live") -> dict:
    """:func:`law_report` of a sweep computed now (every row verified)."""
    rows = scale.sweep_rows(d_values, n, betas, eps_values, seed=seed, executor=executor)
    assert rows["verified"].all(), "a live bracket failed its re-verification"
    return law_report(rows, sweep_command(d_values, n, betas, eps_values, seed=seed), prefix)


def stored_rows(path) -> tuple[pd.DataFrame, pd.Series, str]:
    """``(rows, run, code)``: a store's rows of this build's code hash if stored, else the latest
    run's, that code's ``runs`` records as one (:func:`combined_run`; nans when none) and the hash."""
    df = law_store.read_store(path)
    if df.empty:
        raise ValueError(f"the store {path} holds no rows")
    current = law_store.code_hash()
    hashes = df.groupby("code_hash")["finished_utc"].max().sort_values()
    code = current if current in hashes.index else hashes.index[-1]
    runs = law_store.read_runs(path)
    runs = runs[runs["code_hash"] == code]
    return df[df["code_hash"] == code].reset_index(drop=True), combined_run(runs), code


def combined_run(runs: pd.DataFrame) -> pd.Series:
    """The ``runs`` records of one store and code as one: the commands in order joined by ``"; "``
    (typed in that order they recompute the store), the distinct executors, the last finish, wall
    seconds and rows computed summed, ``commands`` (the list) and ``count``; nans when there is none."""
    if not len(runs):
        return pd.Series({c: np.nan for c in ("command", "executor", "finished_utc", "wall_s", "computed")}
                         | {"commands": [np.nan], "count": 0})
    return pd.Series({"command": "; ".join(runs["command"]), "commands": list(runs["command"]),
                      "executor": "; ".join(dict.fromkeys(runs["executor"])),
                      "finished_utc": runs["finished_utc"].iloc[-1], "wall_s": float(runs["wall_s"].sum()),
                      "computed": int(runs["computed"].sum()), "count": len(runs)})


def stored_report(path, prefix="paper") -> dict:
    """A stored sweep's :func:`law_report`, with ``summary``, ``run``, ``code*``, ``other_codes``."""
    rows, run, code = stored_rows(path)
    others = sorted(set(law_store.read_store(path)["code_hash"]) - {code})
    summary = store_summary(rows)
    now = law_store.code_hash()
    out = law_report(rows, str(run["command"]), prefix)
    out["glue"].update({f"{prefix}_{k}": v for k, v in {
        "executor": str(run["executor"]), "wall": f"{float(run['wall_s']) / 60:.1f}",
        "computed": f"{run['computed']:.0f}",
        "cpu": f"{summary['task_cpu_s'] / 60:.1f}", "code": str(code), "code_now": str(now),
        "same_code": "the same" if code == now else "not the same"}.items()})
    return {"summary": summary, "run": run, "code": code, "code_now": now, "other_codes": others, **out}


def report_lines(report: dict, name) -> list[str]:
    """The text of ``sweep --report`` for a :func:`stored_report`."""
    s, code, now, g = report["summary"], report["code"], report["code_now"], report["glue"]
    p = next(k for k in g if k.endswith("_verdicts"))[:-len("_verdicts")]
    return [
        f"store {Path(name)}: {s['rows']} rows under code {code}"
        f"{' (this code)' if code == now else f' (this code is {now})'}; d {s['d']}, n {s['n']}, "
        f"beta {s['beta']}, eps {s['eps']}, points {s['points']}, seed {s['seed']}; verified column "
        f"as stored (sweep --verify rechecks): {s['all_verified']}; task seconds: "
        f"wall {s['task_wall_s']:.0f}, CPU {s['task_cpu_s']:.0f}",
        *([f"  (other code hashes in the store, not shown: {', '.join(report['other_codes'])})"]
          if report.get("other_codes") else []),
        f"command: {report['command']}",
        report["law"].to_string(float_format=lambda x: f"{x:.3f}", index=False),
        f"capped rows left out of the fits ({g[p + '_capped']}): {g[p + '_capped_rows']}",
        f"verdicts against (d-1)/2: {g[p + '_verdicts']} fitted ends",
        "width upper/lower per beta:",
        report["width"].to_string(float_format=lambda x: f"{x:.2f}"),
        WIDTH_SENTENCE,
    ]


def provenance_lines(store, paper: dict, recheck: dict) -> list[str]:
    """Chapter 7's lines under its stored table: the recheck, the store's run and code hashes."""
    run, summary = paper["run"], paper["summary"]
    return [f"rechecked: {recheck['line']}", f"store: {store}", *(f"command: {c}" for c in run["commands"]),
            f"ran on: {run.executor}; finished {run.finished_utc}",
            f"run wall time: {run.wall_s:.0f} s for {run.computed} rows"
            + (f" ({run['count']} runs)" if run["count"] > 1 else ""),
            f"task CPU seconds (sum): {summary['task_cpu_s']:.0f}",
            f"code hash of the store: {paper['code']}",
            f"code hash of this build: {paper['code_now']}"]


def recheck_stored(path, rows: pd.DataFrame, sample: int | None = None, seed: int = 0, prefix: str = "paper") -> dict:
    """Recheck stored rows from their certificates, not their ``verified`` column (``sample``:
    this many, drawn with ``seed``), on the point sets the store keeps (as ``sweep --verify``; a
    rebuild may differ by an ulp on another CPU): counts, ``results``, ``failures``, ``line``, ``glue``."""
    from .row_certificates import recheck_rows

    total = len(rows)
    if not law_store.has_certificates(path):
        line = (f"the store keeps no certificates (it was written before sweep rows kept them): its {total} "
                "rows were not rechecked; rerun its command to store them with their certificates")
        return {"has_certificates": False, "total": total, "checked": 0, "passed": 0, "seconds": 0.0,
                "results": None, "failures": [], "line": line, "glue": {f"{prefix}_recheck": line}}
    blobs = law_store.read_store(path, certificates=True)
    key = [*law_store.KEY, "code_hash"]
    shown = rows.reset_index(drop=True)
    if sample is not None and sample < total:
        pick = np.sort(np.random.default_rng(seed).choice(total, size=int(sample), replace=False))
        shown = shown.iloc[pick].reset_index(drop=True)
    merged = shown[[c for c in shown.columns if c not in ("certificate", "point_set")]].merge(
        blobs[[*key, "certificate", "point_set"]], on=key, how="left")  # the stored points, not a rebuild
    t0 = time.perf_counter()
    results = recheck_rows(merged)
    seconds = time.perf_counter() - t0
    checked, passed = len(results), int(results["ok"].sum())
    what = (f"all {total} rows shown were" if checked == total
            else f"a sample of {checked} of the {total} rows shown (seed {seed}) was")
    line = (f"{what} rechecked from their stored certificates (both sides, and the claimed ends equal to "
            f"the row's): {passed} of {checked} passed, in {seconds:.1f} s")
    return {"has_certificates": True, "total": total, "checked": checked, "passed": passed,
            "seconds": seconds, "results": results,
            "failures": [f"{r.row}: {r.line}" for r in results.itertuples() if not r.ok],
            "line": line, "glue": {f"{prefix}_recheck": line}}
