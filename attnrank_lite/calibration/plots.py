"""Figures of the BERT calibration chapter (matplotlib). Each takes the study's tables."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..basics.plots import plot_bracket_band

__all__ = ["brackets_by_multiplier", "dimension_vs_certificates", "heatmaps",
           "reductions_by_multiplier", "tau_curves"]


HEATMAP_LABEL = r"reduction $1 - r_{osc}(\tau)/d_{head}$"


def heatmaps(settings: pd.DataFrame, value: str = "reduction_osc", label: str | None = None, ncols: int = 2):
    """One layer x head heatmap of ``value`` per multiplier, ``ncols`` panels per row (a short
    last row centred), each panel with its own colour scale and colour bar (compare the bars'
    numbers, not the colours); ``label`` names the quantity."""
    label = HEATMAP_LABEL if label is None else label
    mults = sorted(settings["multiplier"].unique())
    layers, heads = sorted(settings["layer"].unique()), sorted(settings["head"].unique())
    ncols = max(1, min(int(ncols), len(mults)))
    nrows = -(-len(mults) // ncols)
    panel_h = 0.32 * len(layers) + 1.0
    with plt.rc_context({"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11}):
        fig = plt.figure(figsize=(8.0, panel_h * nrows + 1.0), constrained_layout=True)
        # each panel two grid columns wide: a last row with fewer panels is centred, not left with an empty one
        gs = fig.add_gridspec(nrows, 2 * ncols)
        axes = []
        for k in range(len(mults)):
            row, col = divmod(k, ncols)
            start = col * 2 + (ncols - (len(mults) - row * ncols)) if row == nrows - 1 else col * 2
            axes.append(fig.add_subplot(gs[row, start:start + 2]))
        for ax, m in zip(axes, mults):
            grid = (settings[settings["multiplier"] == m]
                    .pivot(index="layer", columns="head", values=value)
                    .reindex(index=layers, columns=heads))
            vals = grid.to_numpy(dtype=float)
            lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
            constant = hi - lo < 1e-12
            if constant:  # one colour; the colour bar names the one value
                lo, hi = lo - 0.5e-3, hi + 0.5e-3
            im = ax.imshow(vals, vmin=lo, vmax=hi, cmap="viridis", aspect="auto")
            ax.set_title(f"multiplier {m:g}" + (f" (all {float(np.nanmin(vals)):.3g})" if constant else ""))
            ax.set(xlabel="head", ylabel="layer")
            ax.set_xticks(range(len(heads)), [str(h) for h in heads], fontsize=10)
            ax.set_yticks(range(len(layers)), [str(la) for la in layers], fontsize=10)
            cb = fig.colorbar(im, ax=ax, fraction=0.08, pad=0.02)
            if constant:
                cb.set_ticks([float(np.nanmin(vals))])
            cb.ax.tick_params(labelsize=10)
        fig.suptitle(f"{label} (each panel its own colour scale)", fontsize=11)
    return fig


def reductions_by_multiplier(settings: pd.DataFrame):
    """Distribution over heads of both effective-dimension reductions, per multiplier (jittered dots)."""
    mults = sorted(settings["multiplier"].unique())
    fig, ax = plt.subplots(figsize=(7, 3.4))
    rng = np.random.default_rng(0)  # jitter only
    kinds = (("reduction", r"SVD bound $r(\tau)$"), ("reduction_osc", r"measured oscillation $r_{osc}(\tau)$"))
    for k, (col, name) in enumerate(kinds):
        for i, m in enumerate(mults):
            y = settings.loc[settings["multiplier"] == m, col].to_numpy()
            x = i + (k - 0.5) * 0.35 + rng.uniform(-0.1, 0.1, y.size)
            ax.plot(x, y, ".", color=f"C{k}", alpha=0.6, ms=4, label=name if i == 0 else None)
            centre = i + (k - 0.5) * 0.35
            ax.plot([centre - 0.15, centre + 0.15], [np.median(y)] * 2, "-", color="k", lw=1.5)
    ax.set_xticks(range(len(mults)), [f"{m:g}" for m in mults])
    ax.set(xlabel="inverse-temperature multiplier (x 1/sqrt(d_head))", ylabel="effective-dimension reduction")
    ax.legend(fontsize=9)
    return fig


def tau_curves(curves: pd.DataFrame):
    """Median (and quartiles over heads) of the reduction ``1 - r_osc(tau)/d_head`` against tau, per multiplier."""
    fig, ax = plt.subplots(figsize=(6, 3.6), constrained_layout=True)
    for i, (m, sub) in enumerate(curves.groupby("multiplier")):
        q = sub.groupby("tau")["reduction_osc"].quantile([0.25, 0.5, 0.75]).unstack()
        ax.plot(q.index, q[0.5], "o-", color=f"C{i}", ms=3, label=f"multiplier {m:g}")
        ax.fill_between(q.index, q[0.25], q[0.75], color=f"C{i}", alpha=0.15)
        b = sub.groupby("tau")["reduction"].median()
        ax.plot(b.index, b, ":", color=f"C{i}")
    ax.set(xscale="log", xlabel=r"output tolerance $\tau$", ylabel=r"reduction $1 - r(\tau)/d_{head}$")
    ax.set_title(r"solid: $r_{osc}$ (quartile band over heads); dotted: SVD bound $r$", fontsize=10)
    ax.legend(fontsize=9)
    return fig


def dimension_vs_certificates(settings: pd.DataFrame):
    """Scatter of the effective dimension r_osc(tau) against the polynomial certificate and the upper bracket."""
    fig, axes = plt.subplots(2, 1, figsize=(5.6, 7.0), constrained_layout=True)  # stacked: readable on a phone
    rng = np.random.default_rng(0)  # jitter only
    for i, (m, sub) in enumerate(settings.groupby("multiplier")):
        x = sub["r_osc_tau"].to_numpy() + rng.uniform(-0.2, 0.2, len(sub))
        y = sub["log10_poly_count"].to_numpy()
        ok = np.isfinite(y)
        axes[0].plot(x[ok], y[ok], ".", color=f"C{i}", ms=4, alpha=0.7, label=f"{m:g}")
        axes[1].plot(x, sub["upper_mean"], ".", color=f"C{i}", ms=4, alpha=0.7, label=f"{m:g}")
    for ax, ylabel in zip(axes, ("log10 count C(r+D, D)", "mean SVD upper bracket")):
        ax.set(xlabel=r"effective dimension $r_{osc}(\tau)$", ylabel=ylabel)
    axes[1].legend(title="multiplier", fontsize=9)
    return fig


def brackets_by_multiplier(settings: pd.DataFrame):
    """Certified rank brackets (mean over heads of the per-setting mean lower / upper) against the multiplier."""
    g = settings.groupby("multiplier")[["lower_mean", "upper_mean"]].mean()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    plot_bracket_band(ax, g.index.to_numpy(), g["lower_mean"].to_numpy(), g["upper_mean"].to_numpy(),
                      label=r"rank$_\varepsilon$")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="inverse-temperature multiplier", ylabel=r"rank$_\varepsilon$ bracket (mean over heads, sequences)")
    ax.legend(fontsize=8)
    return fig
