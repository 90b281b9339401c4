r"""Tables, figures and glued numbers of chapter 2 (``thm-spherical-law``,
``obs-spherical-slopes``, ``thm-sphere-upper``, ``thm-sphere-lower``, ``prop-funk-hecke``).

Every slope table is judged by the book's one rule
(:func:`attnrank_lite.laws.verdicts.judged_slope_table`) against :math:`(d-1)/2`; next to each
law table the width trend upper/lower per beta is returned with
:data:`attnrank_lite.laws.verdicts.WIDTH_SENTENCE`. Each function returns what a cell shows
and, where the prose quotes numbers, a dict of strings ready for ``glue``, computed from the
run's own tables. The notebook only calls these functions, saves and shows what they return.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import spectra as sp
from . import sphere_proofs as pf
from .fitting import interval_text
from .geometry import well_spread_sphere
from .law_tables import regularity_drift
from .plots import add_reference_slope, law_figure, plot_brackets, plot_spectrum_comparison
from .sweeps import bracket_sweep, spherical_instance
from .verdicts import WIDTH_SENTENCE, counts_text, judged_slope_table, width_trend

__all__ = ["law_slopes", "law_section", "slopes_text", "law_numbers", "upper_check",
           "lower_check", "n_sweep", "configuration_figure", "spectrum_check",
           "heuristic_table"]


def law_slopes(brackets: pd.DataFrame, d: int) -> pd.DataFrame:
    r"""Slope table of one spherical sweep by the book's rule against :math:`(d-1)/2`.

    Rows whose upper end is capped (``upper >= n``) or vacuous are left out of both ends' fits
    and counted in ``left_out``.

    Parameters
    ----------
    brackets : pandas.DataFrame
        Bracket rows with ``beta``, ``eps``, ``n``, ``lower``, ``upper``.
    d : int
        Ambient dimension (points on :math:`S^{d-1}`).

    Returns
    -------
    pandas.DataFrame
        :data:`attnrank_lite.laws.verdicts.SLOPE_COLUMNS`, then ``eps``, ``end``,
        ``beta_min``, ``beta_max``, ``d``.
    """
    return judged_slope_table(brackets, (d - 1) / 2).assign(d=int(d))


def law_section(brackets: pd.DataFrame, d: int, title: str):
    r"""What a law section shows: slope table, width trend and figure.

    Returns
    -------
    slopes : pandas.DataFrame
        :func:`law_slopes`.
    widths : pandas.DataFrame
        Width upper/lower per beta (index), one column per eps
        (:func:`attnrank_lite.laws.verdicts.width_trend`).
    figure : matplotlib.figure.Figure
        Brackets per eps on log-log axes with the reference slope :math:`(d-1)/2`.
    """
    widths = width_trend(brackets["beta"], brackets["lower"], brackets["upper"],
                         group=[f"eps = {e:g}" for e in brackets["eps"]])
    return law_slopes(brackets, d), widths, law_figure(brackets, (d - 1) / 2, title)


def slopes_text(slopes: pd.DataFrame) -> str:
    """``"ε = 0.1: lower 0.50 [0.47, 0.53] (inside), upper ... (below)"``: each fitted end with
    its interval and its verdict, groups joined by ``"; "``."""
    parts = []
    for eps, g in slopes.groupby("eps"):
        ends = ", ".join(f"{r.end} {interval_text(r.slope, r.ci_low, r.ci_high)} ({r.verdict})"
                         for r in g.itertuples())
        parts.append(f"ε = {eps:g}: {ends}")
    return "; ".join(parts)


def law_numbers(sections, d4: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    r"""All slopes of the chapter in one table, and the numbers ``obs-spherical-slopes`` quotes.

    Parameters
    ----------
    sections : iterable of (d, brackets, slopes)
        Each sweep's bracket table and its :func:`law_slopes` table (``None`` entries skipped).
    d4 : pandas.DataFrame
        The :math:`d = 4` brackets (``lower_kind``, ``upper_source``).

    Returns
    -------
    slopes : pandas.DataFrame
        The slope tables stacked (the rule's columns first).
    numbers : dict
        ``ch02_verdicts`` (counts of the verdict column), ``ch02_left_out`` (rows left out,
        summed over the fitted ends), ``ch02_width_max`` (per d the largest width over the
        sweep), ``ch02_widest`` (that d), ``ch02_width_trend`` (per d and eps, first → last
        beta), ``ch02_width_sentence``, ``ch02_d4_lower``, ``ch02_d4_upper``.
    """
    sections = [s for s in sections if s[1] is not None]
    slopes = pd.concat([s for _, _, s in sections], ignore_index=True)
    width_max = {d: float((b["upper"] / b["lower"].clip(lower=1)).max())
                 for d, b, _ in sections}
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


def upper_check(X: np.ndarray, betas, eps_values, sphere: pd.DataFrame
                ) -> tuple[pd.DataFrame, dict[str, str]]:
    r"""The check of ``thm-sphere-upper`` on the points ``X`` with the price of the proof.

    Returns
    -------
    table : pandas.DataFrame
        :func:`attnrank_lite.laws.sphere_proofs.upper_proof_table` (``harmonic=True``) with the
        certified ``upper`` of ``sphere`` at the same (beta, eps).
    numbers : dict
        ``ch02_up_ok`` (``"holds"`` when ``0 <= L_construction <= L_tail <= L_bessel <=
        L_closed`` on every row, else ``"FAILS"``) and ``ch02_up_{key}`` for every key of
        :func:`attnrank_lite.laws.sphere_proofs.price_of_proof`.
    """
    up = pf.upper_proof_table(X, betas, eps_values, harmonic=True)
    up = up.merge(sphere[["beta", "eps", "upper"]], on=["beta", "eps"])
    ok = bool(((up.L_construction >= 0) & (up.L_construction <= up.L_tail)
               & (up.L_tail <= up.L_bessel) & (up.L_bessel <= up.L_closed)).all())
    nums = {f"ch02_up_{k}": v for k, v in pf.price_of_proof(up).items()}
    nums["ch02_up_ok"] = "holds" if ok else "FAILS"
    return up, nums


def lower_check(X: np.ndarray, betas, eps_values, sphere: pd.DataFrame
                ) -> tuple[pd.DataFrame, dict[str, str]]:
    r"""The check of ``thm-sphere-lower`` on the points ``X``.

    Returns
    -------
    table : pandas.DataFrame
        :func:`attnrank_lite.laws.sphere_proofs.lower_proof_table` with the certified
        ``lower`` of ``sphere`` at the same (beta, eps).
    numbers : dict
        ``ch02_lo_ok`` (``"holds"`` when every cap packing verifies and is at least the proven
        count, else ``"FAILS"``), ``ch02_lo_mass`` (smallest diagonal mass), ``ch02_lo_need``
        (the largest :math:`(1+\varepsilon)/2`), ``ch02_lo_search`` (rows where the certified
        lower end exceeds the cap packing), ``ch02_lo_drift``
        (:func:`attnrank_lite.laws.law_tables.regularity_drift`).
    """
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
    r"""Brackets of ``n`` equispaced circle points at one ``beta`` for every n in ``ns``.

    ``certificates`` (a folder): one certificate file per n there (the recipe: the points and beta).

    Returns
    -------
    table : pandas.DataFrame
        :func:`attnrank_lite.laws.sweeps.bracket_sweep` rows (key ``n_points``).
    figure : matplotlib.figure.Figure
        The brackets against n with the line rank = n.

    Raises
    ------
    AssertionError
        If a bracket does not verify.
    """
    import matplotlib.pyplot as plt

    table = bracket_sweep(lambda n: spherical_instance(well_spread_sphere(n, 2), beta), ns,
                          eps_values, key="n_points", desc="n-sweep", l1_limit=0, certificates=certificates,
                          recipe=lambda n: {"Q": well_spread_sphere(n, 2), "beta": beta})
    if not table["verified"].all():
        raise AssertionError("a bracket of the n-sweep does not verify")
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (eps, g) in enumerate(table.groupby("eps")):
        plot_brackets(ax, g, x="n_points", label=rf"$\varepsilon$ = {eps:g}", color=f"C{i}")
    ax.plot(ns, ns, "k-", lw=0.8, label="rank = n")
    ax.set_xticks(list(ns), [str(v) for v in ns])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_title(rf"circle, $\beta$ = {beta:g}: saturation at n")
    ax.legend(fontsize=8)
    return table, fig


def configuration_figure(configs: pd.DataFrame, eps: float):
    """Brackets of every configuration of :func:`attnrank_lite.laws.sweeps.configuration_sweep`
    at ``eps``, one colour per configuration (its size in the legend)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    by_kind = configs[np.isclose(configs["eps"], eps)].groupby("configuration", sort=False)
    for i, (kind, g) in enumerate(by_kind):
        plot_brackets(ax, g, label=f"{kind} (n = {g['n'].iloc[0]})", color=f"C{i}")
    ax.set_title(rf"d = 3, $\varepsilon$ = {eps:g}: configurations")
    ax.legend(fontsize=8)
    return fig


def spectrum_check(n: int, beta: float, tol: float = 1e-4):
    r"""Singular values of the Fibonacci-sphere attention against ``prop-funk-hecke``.

    Returns
    -------
    table : pandas.DataFrame
        ``index``, ``empirical`` (singular values of A), ``funk_hecke``
        (:func:`attnrank_lite.laws.spectra.predicted_attention_spectrum` up to the degree whose
        ratio falls below ``tol``).
    figure : matplotlib.figure.Figure
    deviation : float
        The largest relative deviation ``max |empirical / funk_hecke - 1|``.
    """
    import matplotlib.pyplot as plt

    sv = np.linalg.svd(spherical_instance(well_spread_sphere(n, 3), beta), compute_uv=False)
    pred = sp.predicted_attention_spectrum(beta, 3, sp.harmonic_degree_for_tolerance(beta, 3, tol))
    k = min(pred.size, sv.size)
    table = pd.DataFrame({"index": np.arange(1, k + 1), "empirical": sv[:k],
                          "funk_hecke": pred[:k]})
    fig, ax = plt.subplots(figsize=(6, 3.5))
    plot_spectrum_comparison(ax, sv, pred, k)
    ax.set_title(rf"Fibonacci sphere, n = {n}, $\beta$ = {beta:g}")
    ax.legend(fontsize=8)
    return table, fig, float(np.max(np.abs(sv[:k] / pred[:k] - 1)))


def heuristic_table(tol: float, betas=None, dims=(2, 3, 4)):
    r"""The harmonic count of the spectral heuristic against beta, per d.

    Parameters
    ----------
    tol : float
        Ratio :math:`\lambda_\ell/\lambda_0` a harmonic must keep.
    betas : array_like, optional
        Default 11 values from 4 to 4096, geometric.
    dims : sequence of int

    Returns
    -------
    table : pandas.DataFrame
        ``beta``, ``d``, ``L`` (:func:`attnrank_lite.laws.spectra.harmonic_degree_for_tolerance`),
        ``harmonic_count`` (:func:`attnrank_lite.laws.spectra.spectral_rank_heuristic`).
    figure : matplotlib.figure.Figure
        The counts on log-log axes with reference slopes :math:`(d-1)/2`.
    """
    import matplotlib.pyplot as plt

    betas = np.geomspace(4, 4096, 11) if betas is None else np.asarray(betas, dtype=float)
    table = pd.DataFrame([{"beta": b, "d": d, "L": sp.harmonic_degree_for_tolerance(b, d, tol),
                           "harmonic_count": sp.spectral_rank_heuristic(b, d, tol)}
                          for d in dims for b in betas])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for d, g in table.groupby("d"):
        ax.loglog(g.beta, g.harmonic_count, "o-", ms=3, label=f"d = {d}")
        add_reference_slope(ax, g.beta, (d - 1) / 2, g.beta.iloc[-1], g.harmonic_count.iloc[-1],
                            label=f"slope {(d - 1) / 2:g}", color=f"C{d - 2}")
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(f"harmonics with ratio ≥ {tol:g}")
    ax.legend(fontsize=8)
    return table, fig
