"""Figures of chapters 2, 3 and 7: certified brackets on log-log axes with reference slopes."""
from __future__ import annotations

import numpy as np

from .fitting import reference_line

__all__ = ["add_reference_slope", "ball_figure", "circle_vs_ball_figure",
           "configuration_figure", "eps_colors", "heuristic_figure", "law_figure",
           "law_scale_figure", "n_sweep_figure", "plot_brackets", "spectrum_figure", "token_figure"]

_AXIS_LABELS = {"beta": r"$\beta$", "n_points": "n (tokens)"}


def _axes(size=(6, 4)):
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size)


def eps_colors(eps_values) -> dict:
    """One colour per distinct eps (``C0, C1, ...`` in increasing order), the same in every panel."""
    return {e: f"C{i % 10}" for i, e in enumerate(sorted(set(float(e) for e in eps_values)))}


def plot_brackets(ax, df, x: str = "beta", label: str = "", color=None, marker="o"):
    """Each bracket ``[lower, upper]`` of ``df`` against ``df[x]`` as a vertical bar, log-log."""
    d = df.sort_values(x)
    xs, lo, hi = d[x].to_numpy(float), d["lower"].to_numpy(float), d["upper"].to_numpy(float)
    c = ax.plot(xs, np.sqrt(np.maximum(lo, 1) * hi), marker, ls=":", color=color, ms=3, label=label)[0].get_color()
    ax.vlines(xs, np.maximum(lo, 0.8), hi, color=c, lw=3, alpha=0.6)
    ax.plot(xs, hi, "v", color=c, ms=5)
    ax.plot(xs, np.maximum(lo, 0.8), "^", color=c, ms=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(_AXIS_LABELS.get(x, x))
    ax.set_ylabel(r"rank$_\varepsilon$ (certified bracket)")
    return ax


def add_reference_slope(ax, x, slope: float, x0: float, y0: float, label: str | None = None, **kw):
    """Dashed reference power law of exponent ``slope`` through ``(x0, y0)``."""
    xs = np.geomspace(np.min(x), np.max(x), 50)
    ax.plot(xs, reference_line(xs, slope, x0, y0), "--", color=kw.pop("color", "0.4"), lw=1,
            label=label if label is not None else f"reference slope {slope:g}", **kw)
    return ax


def _eps_brackets(ax, df, ref: float, x: str = "beta", colors=None):
    """Brackets per eps, each with its reference slope ``ref`` through its first upper end."""
    colors = colors or eps_colors(df["eps"])
    for eps, g in df.groupby("eps"):
        c = colors[float(eps)]
        plot_brackets(ax, g, x=x, label=rf"$\varepsilon$ = {eps:g}", color=c)
        first = g.sort_values(x).iloc[0]
        add_reference_slope(ax, g[x], ref, first[x], first["upper"], color=c,
                            label=rf"slope {ref:g} ($\varepsilon$ = {eps:g})")


def law_figure(df, ref: float, title: str, x: str = "beta"):
    """Brackets per eps, each with a reference slope ``ref`` in its colour."""
    fig, ax = _axes()
    _eps_brackets(ax, df, ref, x)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def law_scale_figure(df, capped=None):
    """Chapter 7: brackets against beta, one panel per d, slope ``(d-1)/2``; ``capped`` circled."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    df = df.reset_index(drop=True)
    df = df.assign(_capped=np.zeros(len(df), bool) if capped is None else np.asarray(capped, bool))
    ds = sorted(df["d"].unique())
    colors = eps_colors(df["eps"])
    fig, axes = plt.subplots(len(ds), 1, figsize=(5.6, 3.3 * len(ds)), squeeze=False)
    for ax, d in zip(axes[:, 0], ds):
        g = df[df["d"] == d]
        _eps_brackets(ax, g, (d - 1) / 2, colors=colors)
        cap = g[g["_capped"]]
        if len(cap):
            ax.plot(cap["beta"], cap["upper"], "o", mfc="none", mec="k", ms=10, label="capped: left out of the fits")
        betas = sorted(g["beta"].unique())
        ax.set_xticks(betas, [f"{b:g}" for b in betas])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"d = {d}, n = {int(g['n'].max()):,}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _groups_figure(groups, title: str, x: str = "beta", first_colour: int = 0):
    """One bracket series per ``(label, table)`` of ``groups``, colours from ``C{first_colour}``."""
    fig, ax = _axes()
    for i, (label, g) in enumerate(groups):
        plot_brackets(ax, g, x=x, label=label, color=f"C{i + first_colour}")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig, ax


def n_sweep_figure(table, ns, beta: float):
    """Brackets against n (column ``n_points``) per eps, with the line rank = n."""
    import matplotlib.pyplot as plt

    fig, ax = _groups_figure(((rf"$\varepsilon$ = {e:g}", g) for e, g in table.groupby("eps")),
                             rf"circle, $\beta$ = {beta:g}: saturation at n", x="n_points")
    ax.plot(ns, ns, "k-", lw=0.8, label="rank = n")
    ax.set_xticks(list(ns), [str(v) for v in ns])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.legend(fontsize=8)
    return fig


def configuration_figure(configs, eps: float):
    """Brackets of every configuration at ``eps``, one colour each (its size in the legend)."""
    by_kind = configs[np.isclose(configs["eps"], eps)].groupby("configuration", sort=False)
    return _groups_figure(((f"{k} (n = {g['n'].iloc[0]})", g) for k, g in by_kind),
                          rf"d = 3, $\varepsilon$ = {eps:g}: configurations")[0]


def spectrum_figure(sv, pred, k: int, n: int, beta: float):
    """Singular values of the Fibonacci-sphere attention against the Funk–Hecke prediction."""
    fig, ax = _axes((6, 3.5))
    i = np.arange(1, k + 1)
    ax.semilogy(i, np.asarray(sv)[:k], ".", ms=4, label="empirical (attention matrix)")
    ax.semilogy(i, np.asarray(pred)[:k], "-", lw=1, label=r"Funk–Hecke $\lambda_\ell/\lambda_0$")
    ax.set_xlabel("index")
    ax.set_ylabel("singular value")
    ax.set_title(rf"Fibonacci sphere, n = {n}, $\beta$ = {beta:g}")
    ax.legend(fontsize=8)
    return fig


def heuristic_figure(table, tol: float):
    """Harmonic counts of the spectral heuristic per d, log-log, with slopes ``(d-1)/2``."""
    fig, ax = _axes((6, 3.5))
    for d, g in table.groupby("d"):
        ax.loglog(g.beta, g.harmonic_count, "o-", ms=3, label=f"d = {d}")
        add_reference_slope(ax, g.beta, (d - 1) / 2, g.beta.iloc[-1], g.harmonic_count.iloc[-1],
                            label=f"slope {(d - 1) / 2:g}", color=f"C{d - 2}")
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(f"harmonics with ratio ≥ {tol:g}")
    ax.legend(fontsize=8)
    return fig


def token_figure(tokens):
    r"""Log of the token count against beta per d, with the line :math:`\beta/8`."""
    fig, ax = _axes((6, 3.5))
    for dd, g in tokens.groupby("d"):
        ax.plot(g.beta, g.log_n_eff, "o-", ms=3, label=f"log n_eff, d = {dd}")
    bb = tokens.beta.unique()
    ax.plot(bb, bb / 8, "k--", lw=1, label=r"reference $\beta/8$")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel("natural log of the token count")
    ax.legend(fontsize=8)
    return fig


def ball_figure(ball, uniform, d: int, spacing_factor: float, eps: float):
    r"""Both weightings' brackets at ``eps`` with slopes :math:`d/2` and :math:`(d-1)/2`."""
    fig, ax = _axes()
    for i, (name, df) in enumerate([("Gaussian weights", ball), ("uniform multiplicities", uniform)]):
        plot_brackets(ax, df[np.isclose(df["eps"], eps)], color=f"C{i}", label=rf"{name}, $\varepsilon$ = {eps:g}")
    b = ball[np.isclose(ball["eps"], eps)].sort_values("beta")
    first = b.iloc[0]
    add_reference_slope(ax, b["beta"], d / 2, first.beta, first.upper, label=f"slope d/2 = {d / 2:g}")
    add_reference_slope(ax, b["beta"], (d - 1) / 2, first.beta, first.lower,
                        label=f"slope (d-1)/2 = {(d - 1) / 2:g}", color="0.7")
    ax.set_title(f"grid in the ball of radius 1/2, d = {d}, "
                 rf"spacing {spacing_factor:g}/$\sqrt{{\beta}}$")
    ax.legend(fontsize=8)
    return fig


def circle_vs_ball_figure(both, eps: float):
    """The brackets of each ``geometry`` of ``both`` at ``eps`` (chapter 3, d = 2)."""
    return _groups_figure(both[np.isclose(both["eps"], eps)].groupby("geometry"),
                          rf"d = 2, $\varepsilon$ = {eps:g}: one radial degree more", first_colour=2)[0]
