"""Issue 25: figures that read. Greek axis labels (β, ε, rank_ε, never "beta", "eps", "rank_eps"),
every dashed or dotted reference line labelled, distinct colours per eps, no empty panel, panels
stacked in one column (readable on a phone), and chapter 6's heatmaps with a colour scale per panel."""
from __future__ import annotations

import re

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from attnrank_lite.basics import plots as bp  # noqa: E402
from attnrank_lite.calibration import plots as pc  # noqa: E402
from attnrank_lite.laws import plots as lp  # noqa: E402
from attnrank_lite.quotient import plots as qp  # noqa: E402
from attnrank_lite.quotient.report import SHARP_FAMILY  # noqa: E402

#: names of symbols that a label must show as symbols
RAW = re.compile(r"\b(beta|eps|rank_eps|tau|r_osc)\b")


def _texts(fig) -> list[str]:
    out = []
    for ax in fig.axes:
        out += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
        leg = ax.get_legend()
        if leg is not None:
            out += [t.get_text() for t in leg.get_texts()]
    return [t for t in out if t]


def _reference_lines(fig):
    return [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_linestyle() in ("--", ":")]


def _check(fig, max_width: float = 6.5):
    fig.canvas.draw()
    raw = [t for t in _texts(fig) if RAW.search(t.replace("$", " "))
           and not re.search(r"\\(beta|varepsilon|tau)", t)]
    assert not raw, f"labels naming symbols in words: {raw}"
    unlabelled = [ln for ln in _reference_lines(fig) if ln.get_label().startswith("_")]
    assert not unlabelled, "dashed/dotted lines without a label"
    assert all(ax.get_visible() for ax in fig.axes), "an empty (hidden) panel"
    assert fig.get_size_inches()[0] <= max_width, "panels side by side: unreadable on a phone"
    plt.close(fig)


def _law_rows(ds=(2, 3, 4, 5, 6), eps_values=(0.1, 0.25)):
    rows = []
    for d in ds:
        for e in eps_values:
            for b in (2.0, 4.0, 8.0, 16.0):
                up = 2 + b ** ((d - 1) / 2)
                rows.append({"d": d, "n": 1000, "n_points": 1000, "eps": e, "beta": b, "lower": up / 3,
                             "upper": up})
    return pd.DataFrame(rows)


def test_law_figure_eps_colours_and_labelled_reference_lines():
    fig = lp.law_figure(_law_rows(ds=(3,)), 1.0, "sphere")
    ax = fig.axes[0]
    refs = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(refs) == 2 and len({to_hex(r.get_color()) for r in refs}) == 2  # one per eps, own colour
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("0.1" in t and "varepsilon" in t for t in labels)
    assert ax.get_xlabel() == r"$\beta$" and "varepsilon" in ax.get_ylabel()
    _check(fig)


def test_eps_colors_distinct():
    c = lp.eps_colors([0.25, 0.1, 0.25, 0.5])
    assert list(c) == [0.1, 0.25, 0.5] and len(set(c.values())) == 3


@pytest.mark.parametrize("ds", [(2, 3, 4, 5, 6), (2, 3)])
def test_law_scale_figure_has_one_stacked_panel_per_d(ds):
    fig = lp.law_scale_figure(_law_rows(ds=ds))
    assert len(fig.axes) == len(ds)
    _check(fig)


def test_quotient_figures_read():
    law = pd.DataFrame([{"r": r, "family": f, "beta": b, "lower": b ** (r / 2) / 2, "upper": b ** (r / 2) + 1}
                        for r in (1, 2, 3) for f in (SHARP_FAMILY, "random") for b in (16.0, 64.0, 256.0)])
    fig = qp.r_half_figure(law, 0.25)
    assert len(fig.axes) == 3
    _check(fig)
    poly = pd.DataFrame([{"dim": r, "beta": b, "degree": 2 * np.sqrt(b), "count": b ** r,
                          "bracket lower": 1.0, "bracket upper": b} for r in (1, 2) for b in (1.0, 16.0, 256.0)])
    _check(qp.polynomial_figure(poly, 300))
    trunc = pd.DataFrame([{"beta": 4.0, "decay": rho, "s": s, "measured": 0.1 / (s + 1), "tanh": 0.2 / (s + 1),
                           "osc": 0.3 / (s + 1), "sigma": 0.4 / (s + 1)} for rho in (0.3, 0.6) for s in range(5)])
    _check(qp.truncation_figure(trunc, 4.0))
    rtau = pd.DataFrame([{"decay": rho, "beta": b, "tau": t, "r_tau": int(8 * (1 - t))}
                         for rho in (0.3, 0.6) for b in (1.0, 4.0) for t in (0.01, 0.1, 0.5)])
    _check(qp.tolerance_figure(rtau))


def test_chapter1_and_6_figures_read():
    sweep = pd.DataFrame({"eps": [0.1, 0.25, 0.5], "lower": [3, 2, 1], "upper": [9, 6, 3]})
    _check(bp.eps_sweep_figure(sweep, r"circle, $\beta$ = 64"))
    settings = pd.DataFrame([{"layer": la, "head": h, "multiplier": m, "reduction_osc": m * (la + h) / 400,
                              "reduction": m * (la + h) / 500, "r_osc_tau": la + h, "log10_poly_count": 2.0,
                              "upper_mean": 5.0, "lower_mean": 2.0}
                             for la in range(4) for h in range(3) for m in (0.25, 1.0, 4.0)])
    _check(pc.dimension_vs_certificates(settings))
    _check(pc.brackets_by_multiplier(settings))
    _check(pc.reductions_by_multiplier(settings), max_width=7.5)


def test_heatmaps_have_a_colour_scale_per_panel():
    """Issue 25: with one scale shared by all multipliers, 3 of 5 panels were uniformly dark."""
    rows = [{"layer": la, "head": h, "multiplier": m, "reduction_osc": m * (la + h) / 400}
            for la in range(4) for h in range(5) for m in (0.25, 1.0, 4.0)]
    fig = pc.heatmaps(pd.DataFrame(rows))
    images = [im for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 3
    assert all(ax.get_visible() for ax in fig.axes)  # no hidden (empty) panel
    fig.canvas.draw()
    panels = [ax for ax in fig.axes if ax.get_images()]
    last, first = panels[-1].get_position(), panels[0].get_position()
    assert last.y0 < first.y0 and abs((last.x0 + last.x1) / 2 - 0.5) < 0.1  # the odd last panel is centred
    for im in images:  # every panel spans its colour map, from its least to its largest value
        data = np.asarray(im.get_array(), dtype=float)
        lo, hi = im.get_clim()
        assert lo == pytest.approx(np.nanmin(data)) and hi == pytest.approx(np.nanmax(data))
    assert len({im.get_clim() for im in images}) == 3
    plt.close(fig)
    rows = [{**r, "reduction_osc": 0.0 if r["multiplier"] == 4.0 else r["reduction_osc"]} for r in rows]
    fig = pc.heatmaps(pd.DataFrame(rows))
    flat = [ax for ax in fig.axes if ax.get_title().startswith("multiplier 4")]
    assert flat and "(all 0)" in flat[0].get_title()  # a constant panel says so
    ticks = [list(cb_ax.get_yticks()) for cb_ax in fig.axes if not cb_ax.get_title() and cb_ax.get_images() == []]
    assert [0.0] in ticks  # its colour bar names the one value, no invented range
    plt.close(fig)


def test_chapter_2_and_3_report_figures_read():
    """The figures of chapters 2 and 3 (laws/plots.py, through laws/report.py) follow the same
    rules: symbols as symbols, reference lines labelled."""
    from attnrank_lite.laws import report
    from attnrank_lite.laws.ball_law import token_count_table

    _, fig = report.heuristic_table(1e-3, betas=[4.0, 16.0, 64.0])
    _check(fig)
    _check(lp.token_figure(token_count_table([2, 3], [8.0, 16.0, 32.0], 1.0)))
