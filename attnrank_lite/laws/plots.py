"""Plot helpers of chapters 2 and 3: brackets on log-log axes with reference slopes, spectra."""
from __future__ import annotations

import numpy as np

from .fitting import reference_line

__all__ = [
    "add_reference_slope",
    "axis_label",
    "eps_colors",
    "law_figure",
    "plot_brackets",
    "plot_spectrum_comparison",
]


# axis labels of the table columns the figures plot (Greek letters, not their names)
_AXIS_LABELS = {"beta": r"$\beta$", "eps": r"$\varepsilon$", "n_points": "n (tokens)", "n": "n (tokens)",
               "tau": r"$\tau$"}


def axis_label(column: str) -> str:
    """The axis label of a table column: ``"beta"`` -> β, ``"eps"`` -> ε; other names unchanged."""
    return _AXIS_LABELS.get(column, column)


def eps_colors(eps_values) -> dict:
    """One colour per distinct ``eps`` (matplotlib's cycle ``C0, C1, ...`` in increasing order), so
    that the same ε has the same colour in every panel and two ε never share one."""
    return {e: f"C{i % 10}" for i, e in enumerate(sorted(set(float(e) for e in eps_values)))}


def plot_brackets(ax, df, x: str = "beta", label: str = "", color=None, marker="o"):
    """Draw each certified bracket ``[lower, upper]`` against ``df[x]`` as a vertical bar, log-log.

    Parameters
    ----------
    ax : matplotlib Axes
    df : pandas.DataFrame
        Columns ``x``, ``lower``, ``upper`` (one eps).
    """
    d = df.sort_values(x)
    xs, lo, hi = d[x].to_numpy(float), d["lower"].to_numpy(float), d["upper"].to_numpy(float)
    line = ax.plot(xs, np.sqrt(np.maximum(lo, 1) * hi), marker, ls=":", color=color, ms=3, label=label)[0]
    c = line.get_color()
    ax.vlines(xs, np.maximum(lo, 0.8), hi, color=c, lw=3, alpha=0.6)
    ax.plot(xs, hi, "v", color=c, ms=5)
    ax.plot(xs, np.maximum(lo, 0.8), "^", color=c, ms=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(axis_label(x))
    ax.set_ylabel(r"rank$_\varepsilon$ (certified bracket)")
    return ax


def add_reference_slope(ax, x, slope: float, x0: float, y0: float, label: str | None = None, **kw):
    """Dashed reference power law of exponent ``slope`` through ``(x0, y0)`` over the range of ``x``."""
    xs = np.geomspace(np.min(x), np.max(x), 50)
    ax.plot(xs, reference_line(xs, slope, x0, y0), "--", color=kw.pop("color", "0.4"), lw=1,
            label=label if label is not None else f"reference slope {slope:g}", **kw)
    return ax


def plot_spectrum_comparison(ax, empirical, predicted, k: int | None = None):
    """Empirical singular values against the Funk–Hecke prediction (index on x, log y)."""
    k = min(len(empirical), len(predicted)) if k is None else k
    i = np.arange(1, k + 1)
    ax.semilogy(i, np.asarray(empirical)[:k], ".", ms=4, label="empirical (attention matrix)")
    ax.semilogy(i, np.asarray(predicted)[:k], "-", lw=1, label=r"Funk–Hecke $\lambda_\ell/\lambda_0$")
    ax.set_xlabel("index")
    ax.set_ylabel("singular value")
    return ax


def law_figure(df, ref: float, title: str, x: str = "beta"):
    """Certified brackets per eps on log-log axes with a reference slope ``ref``.

    Each ε has its own colour (:func:`eps_colors`); its dashed reference line, in the same colour,
    is labelled with its slope and ε.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``eps``, ``x``, ``lower``, ``upper``.

    Returns
    -------
    matplotlib Figure
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    colors = eps_colors(df["eps"])
    for eps, g in df.groupby("eps"):
        c = colors[float(eps)]
        plot_brackets(ax, g, x=x, label=rf"$\varepsilon$ = {eps:g}", color=c)
        first = g.sort_values(x).iloc[0]
        add_reference_slope(ax, g[x], ref, first[x], first["upper"], color=c,
                            label=rf"slope {ref:g} ($\varepsilon$ = {eps:g})")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig
