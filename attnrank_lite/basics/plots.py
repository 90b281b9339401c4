"""Chapter 1's figures, and the bracket band every chapter draws (matplotlib)."""
from __future__ import annotations

import numpy as np

__all__ = ["certificate_figure", "eps_sweep_figure", "plot_bracket_band", "spectral_contrast_figure"]


def plot_bracket_band(ax, x, lower, upper, label: str = "", color=None, loglog: bool = False):
    """A certified bracket ``lower <= rank_eps <= upper`` against ``x`` (each shape (k,)) as a
    shaded band on the Axes ``ax``; returns ``ax``."""
    x, lower, upper = map(np.asarray, (x, lower, upper))
    color = ax.plot(x, upper, "v-", color=color, label=f"{label} upper".strip(), ms=4)[0].get_color()
    ax.plot(x, lower, "^-", color=color, label=f"{label} lower".strip(), ms=4)
    ax.fill_between(x, lower, upper, color=color, alpha=0.15)
    if loglog:
        ax.set(xscale="log", yscale="log")
    return ax


def certificate_figure(A, cert, title: str = "", max_groups: int = 400):
    r"""``A`` in grey with a cluster-mass certificate's rows and key groups marked (one coloured run
    of dots per selected query's private key group); returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.imshow(A, cmap="Greys", aspect="auto", interpolation="nearest",
              vmax=np.quantile(A, 0.995) if A.size > 1 else None)
    for a, (i, g) in enumerate(zip(list(cert.rows)[:max_groups], list(cert.groups)[:max_groups])):
        ax.plot(g, [i] * len(g), ".", ms=2, color=f"C{a % 10}")
    ax.set(xlabel="key j", ylabel="query i", title=title)
    return fig


def eps_sweep_figure(sweep, title: str = ""):
    """The certified bracket against eps (log rank axis), from :func:`.report.eps_sweep_table`."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2))
    plot_bracket_band(ax, sweep["eps"], sweep["lower"], sweep["upper"], label=r"rank$_\varepsilon$")
    ax.set(xlabel=r"$\varepsilon$", ylabel=r"rank$_\varepsilon$ (certified bracket)", yscale="log", title=title)
    ax.legend()
    return fig


def spectral_contrast_figure(contrast):
    """Bracket bands and spectral counts against copies per key, from
    :func:`.report.spectral_contrast_table` (a count of 0 drawn at 0.8 on the log axis)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for name, g in contrast.groupby("matrix"):
        cc = g["copies per key"]
        plot_bracket_band(ax, cc, g["lower"], g["upper"], label=rf"{name}: rank$_\varepsilon$")
        ax.plot(cc, g["spectral numerical rank"].clip(lower=0.8), "o--", label=f"{name}: spectral")
    ax.set_xscale("log", base=2)
    ax.set(yscale="log", xlabel="copies per key", ylabel="rank")
    ax.legend(fontsize=7)
    return fig
