"""Figures of chapters 4 and 5, each drawn from a table of :mod:`attnrank_lite.quotient.report`."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..basics.plots import plot_bracket_band
from ..engine.perturbation import oscillation_bound
from .report import SHARP_FAMILY

__all__ = ["lemma_figure", "polynomial_figure", "r_half_figure", "tolerance_figure",
           "tradeoff_figure", "truncation_figure"]


def r_half_figure(law, eps: float):
    """One panel per visible dimension r, stacked in one column (readable on a phone): bracket bands of each family
    against beta, with slopes r/2 (dashed) and (r+1)/2 (dotted) through the sharp family's last upper end."""
    groups = list(law.groupby("r"))
    fig, axes = plt.subplots(len(groups), 1, figsize=(5.6, 3.4 * len(groups)), squeeze=False)
    for ax, (r, g) in zip(axes[:, 0], groups):
        for fam, h in g.groupby("family"):
            plot_bracket_band(ax, h["beta"], h["lower"], h["upper"], label=fam, loglog=True)
        s = g[g["family"] == SHARP_FAMILY]
        b, u0 = s["beta"].to_numpy(), s["upper"].iloc[-1]
        for expo, style in ((r / 2, "k--"), ((r + 1) / 2, "k:")):
            ax.plot(b, u0 * (b / b[-1]) ** expo, style, label=f"reference slope {expo:g}")
        ax.set(title=f"visible dimension r = {r}", xlabel=r"$\beta$",
               ylabel=rf"rank$_\varepsilon$, $\varepsilon$ = {eps:g}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def polynomial_figure(poly, n: int):
    """Degree D and count C(r+D, D) of the polynomial certificates against beta, with the
    brackets and the trivial bound n (two panels, stacked)."""
    fig, axes = plt.subplots(2, 1, figsize=(5.6, 7.0))
    for r, g in poly.groupby("dim"):
        axes[0].plot(g["beta"], g["degree"], "o-", label=f"r = {r}")
        axes[1].plot(g["beta"], g["count"], "o-", label=f"r = {r}: C(r+D, D)")
        plot_bracket_band(axes[1], g["beta"], g["bracket lower"], g["bracket upper"], label=f"r = {r}: bracket")
    b = poly["beta"].unique()
    axes[0].plot(b, 2 * np.sqrt(b), "k--", label=r"reference $2\sqrt{\beta}$")
    axes[1].axhline(n, color="grey", lw=0.8, label="n (trivial)")
    for ax, ylabel in zip(axes, ("degree D", "rank bound")):
        ax.set(xscale="log", yscale="log", xlabel=r"$\beta$", ylabel=ylabel)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def lemma_figure(data: dict):
    """Random pairs (change against oscillation) under the bound 2 tanh(osc/4) and osc/2."""
    t = data["t"]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.loglog(data["osc"], data["change"], ".", ms=1, alpha=0.3, label="random pairs (m = 6)")
    ax.loglog(t, oscillation_bound(t), "k-", label=r"bound $2\tanh(\mathrm{osc}/4)$ = two-level example")
    ax.loglog(t, t / 2, "k--", label=r"reference $\mathrm{osc}/2$")
    ax.set(xlabel=r"$\mathrm{osc}(\delta)$", ylabel=r"$\|\mathrm{softmax}(a+\delta) - \mathrm{softmax}(a)\|_1$")
    ax.legend(fontsize=7)
    return fig


def truncation_figure(trunc, beta):
    """Per decay (panels stacked in one column): the measured truncation error and its three
    bounds against s, at ``beta``."""
    groups = list(trunc[trunc["beta"] == beta].groupby("decay"))
    fig, axes = plt.subplots(len(groups), 1, figsize=(5.6, 3.1 * len(groups)), squeeze=False)
    for ax, (rho, g) in zip(axes[:, 0], groups):
        for key, style in (("measured", "ko-"), ("tanh", "C0s--"), ("osc", "C1^--"), ("sigma", "C2v--")):
            ax.semilogy(g["s"][:-1], g[key][:-1], style, ms=4, label=key)
        ax.set(title=rf"decay {rho:g}, $\beta$ = {beta:g}", xlabel="truncation rank s",
               ylabel=r"$\|A - A_s\|$ and bounds")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def tolerance_figure(rtau):
    """Per decay (panels stacked in one column): the step curves r(tau) for every beta."""
    groups = list(rtau.groupby("decay"))
    fig, axes = plt.subplots(len(groups), 1, figsize=(5.6, 2.9 * len(groups)), sharex=True, squeeze=False)
    for ax, (rho, g) in zip(axes[:, 0], groups):
        for beta, h in g.groupby("beta"):
            ax.step(h["tau"], h["r_tau"], where="post", label=rf"$\beta$ = {beta:g}")
        ax.set(xscale="log", title=f"decay {rho:g}", ylabel=r"$r(\tau)$")
    axes[-1][0].set_xlabel(r"tolerance $\tau$")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def tradeoff_figure(trade):
    """SVD upper end and polynomial count of A_s against the truncation residual tau_s."""
    g = trade[trade["budget"] > 0]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(g["tau_tanh"], g["upper"], "o-", label=r"SVD upper of $A_s$ at $\varepsilon - \tau$")
    ax.plot(g["tau_tanh"], g["poly_count"], "s--", label="polynomial count C(s'+D, D)")
    for _, row in g.iterrows():
        ax.annotate(f"s={row.s}", (row.tau_tanh, row.upper), fontsize=7)
    ax.set_xscale("symlog", linthresh=1e-3)
    ax.set(yscale="log", xlabel=r"truncation residual $\tau_s$ (tanh bound)",
           ylabel="certified rank bound for A")
    ax.legend(fontsize=7)
    return fig
