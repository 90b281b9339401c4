"""Plot helpers shared by the chapters (matplotlib)."""
from __future__ import annotations

import numpy as np

__all__ = ["plot_bracket_band", "plot_certificate"]


def plot_bracket_band(ax, x, lower, upper, label: str = "", color=None, loglog: bool = False):
    """Draw a certified bracket ``lower <= rank_eps <= upper`` against ``x`` as a shaded band.

    Parameters
    ----------
    ax : matplotlib Axes
    x, lower, upper : array_like, shape (k,)
    """
    x, lower, upper = map(np.asarray, (x, lower, upper))
    line = ax.plot(x, upper, "v-", color=color, label=f"{label} upper".strip(), ms=4)[0]
    color = line.get_color()
    ax.plot(x, lower, "^-", color=color, label=f"{label} lower".strip(), ms=4)
    ax.fill_between(x, lower, upper, color=color, alpha=0.15)
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
    return ax


def plot_certificate(ax, A: np.ndarray, bracket, max_groups: int = 400):
    """Show an attention matrix with the cluster-mass certificate's rows and key groups marked.

    Each selected row ``i_a`` is a horizontal tick; its private key group ``G_a`` is drawn as
    dots at ``(j, i_a)`` for ``j in G_a``.
    """
    ax.imshow(A, cmap="Greys", aspect="auto", interpolation="nearest",
              vmax=np.quantile(A, 0.995) if A.size > 1 else None)
    for a, (i, g) in enumerate(zip(bracket.lower_rows[:max_groups], bracket.lower_groups[:max_groups])):
        ax.plot(g, [i] * len(g), ".", ms=2, color=f"C{a % 10}")
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    return ax
