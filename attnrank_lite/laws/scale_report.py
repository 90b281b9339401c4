r"""Chapter 7's tables, figures and quoted numbers, and the text of ``sweep --report``.

Two law tables are reported the same way (:func:`law_report`): a sweep's rows
(:func:`attnrank_lite.laws.scale.sweep_rows`, computed live) and a stored sweep
(:func:`stored_report`, read from a :mod:`attnrank_lite.laws.law_store` file). Each table is
judged by the book's one rule (:func:`attnrank_lite.laws.scale.law_table`, capped rows left
out and counted), printed with its own command, and with the width trend upper/lower per beta
and :data:`attnrank_lite.laws.verdicts.WIDTH_SENTENCE`. Every number a sentence quotes is
returned as a string ready for ``myst_nb.glue``, so prose and tables agree on any rerun.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import law_store, scale
from .plots import add_reference_slope, eps_colors, plot_brackets
from .verdicts import WIDTH_SENTENCE, verdict_counts, width_trend

__all__ = ["sweep_command", "verdict_text", "one_plus_slope", "with_caps", "capped_text", "width_table", "width_text",
           "law_scale_figure", "law_report", "live_report", "stored_rows", "stored_report", "report_lines",
           "recheck_stored", "provenance_lines"]


def _num(x) -> str:
    return f"{x:g}"


def sweep_command(d_values, n, betas, eps_values, points="well-spread", seed=0,
                  store="laws.sqlite") -> str:
    """The ``sweep`` command line that computes these configurations (as it would be typed)."""
    parts = ["python -m attnrank_lite sweep", "--d", *map(str, d_values), "--n", str(n),
             "--beta", *map(_num, betas), "--eps", *map(_num, eps_values)]
    if points != "well-spread":
        parts += ["--points", str(points)]
    if int(seed) != 0:
        parts += ["--seed", str(seed)]
    return " ".join([*parts, "--store", str(store)])


def verdict_text(law: pd.DataFrame) -> str:
    """``"inside for 3, above for 2, below for 1 and inconclusive for 6 of 12"``: counts of
    the ``verdict`` column (:func:`attnrank_lite.laws.verdicts.verdict_counts`)."""
    c = verdict_counts(law["verdict"])
    words = [f"{w} for {c[w]}" for w in ("inside", "above", "below", "inconclusive")]
    return ", ".join(words[:-1]) + f" and {words[-1]} of {c['total']}"


def capped_text(rows: pd.DataFrame) -> str:
    """The capped rows (:func:`attnrank_lite.laws.scale.capped`), one phrase each:
    ``"d = 6, β = 16, ε = 0.1: [224, 6,000], harmonic degree 11, count 7,371 ≥ n = 6,000
    (the law's term (1+β)^((d-1)/2) = 1,192)"``;
    ``"none"`` when no row is capped."""
    rows = rows.reset_index(drop=True)
    out = scale.capped(rows)
    count = scale.certificate_count(rows)
    n = rows["n_points"] if "n_points" in rows.columns else rows["n"]
    parts = []
    for i in np.flatnonzero(out):
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
    """Width upper/lower per beta (columns ``beta = ...``), one row per ``(d, eps)``
    (:func:`attnrank_lite.laws.verdicts.width_trend`, transposed to read along a row)."""
    labels = [f"d = {int(d)}, eps = {e:g}" for d, e in zip(rows["d"], rows["eps"])]
    w = width_trend(rows["beta"], rows["lower"], rows["upper"], group=labels).T
    w.columns = [f"beta = {b:g}" for b in w.columns]
    w.index.name = "d, eps"
    return w


def width_text(rows: pd.DataFrame) -> str:
    """Per d, the width upper/lower at the first and the last beta (range over eps):
    ``"d = 6: 2.3–3.9 (β = 2) → 27–53 (β = 16)"``."""
    w = rows.assign(width=rows["upper"] / rows["lower"])
    parts = []
    for d, g in w.groupby("d"):
        ends = []
        for b in (g["beta"].min(), g["beta"].max()):
            x = g.loc[g["beta"] == b, "width"]
            lo, hi = float(x.min()), float(x.max())
            ends.append((f"{lo:.2g}" if np.isclose(lo, hi) else f"{lo:.2g}–{hi:.2g}") + f" (β = {b:g})")
        parts.append(f"d = {int(d)}: " + " → ".join(ends))
    return "; ".join(parts)


def one_plus_slope(betas) -> float:
    r"""Least-squares slope of :math:`\log(1+\beta)` on :math:`\log\beta` over the distinct
    ``betas``: an exact :math:`(1+\beta)^{k}` has the finite-range slope ``k`` times this
    against :math:`\log\beta` (the law is stated in :math:`1+\beta`, the fits are in beta)."""
    b = np.unique(np.asarray(betas, dtype=np.float64))
    return float(np.polyfit(np.log(b), np.log1p(b), 1)[0])


def with_caps(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with the columns ``harmonic_count`` (:func:`attnrank_lite.laws.scale.certificate_count`)
    and ``capped`` (:func:`attnrank_lite.laws.scale.capped`): what a reader of a results table
    needs to see which rows the fits left out."""
    rows = rows.reset_index(drop=True)
    return rows.assign(harmonic_count=scale.certificate_count(rows), capped=scale.capped(rows))


def law_scale_figure(df: pd.DataFrame):
    """Log-log brackets against ``beta``, one panel per ``d`` (stacked in one column), reference
    slope ``(d-1)/2`` per eps in that eps's colour (:func:`attnrank_lite.laws.plots.eps_colors`);
    capped rows (:func:`attnrank_lite.laws.scale.capped`, left out of the fits) are circled in black."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    df = df.reset_index(drop=True)
    df = df.assign(_capped=scale.capped(df))
    ds = sorted(df["d"].unique())
    colors = eps_colors(df["eps"])
    # one column of panels: readable on a phone, and no empty panel whatever the number of d
    fig, axes = plt.subplots(len(ds), 1, figsize=(5.6, 3.3 * len(ds)), squeeze=False)
    for ax, d in zip(axes[:, 0], ds):
        g = df[df["d"] == d]
        for eps, h in g.groupby("eps"):
            c = colors[float(eps)]
            plot_brackets(ax, h, label=rf"$\varepsilon$ = {eps:g}", color=c)
            first = h.sort_values("beta").iloc[0]
            add_reference_slope(ax, h["beta"], (d - 1) / 2, first["beta"], first["upper"], color=c,
                                label=rf"slope (d-1)/2 = {(d - 1) / 2:g} ($\varepsilon$ = {eps:g})")
        cap = g[g["_capped"]]
        if len(cap):
            ax.plot(cap["beta"], cap["upper"], "o", mfc="none", mec="k", ms=10,
                    label="capped: left out of the fits")
        betas = sorted(g["beta"].unique())
        ax.set_xticks(betas, [f"{b:g}" for b in betas])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"d = {d}, n = {int(g['n'].max()):,}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def law_report(rows: pd.DataFrame, command: str, prefix: str) -> dict:
    """Law table, width trend, figure and glued strings of one sweep's rows.

    Parameters
    ----------
    rows : pandas.DataFrame
        Rows of one code (:func:`attnrank_lite.laws.scale.sweep_rows` or a store's).
    command : str
        The command that computes these rows (printed with the table).
    prefix : str
        Prefix of the glue names (``f"{prefix}_verdicts"`` ...).

    Returns
    -------
    dict
        ``command``, ``rows`` (:func:`with_caps`), ``law``
        (:func:`attnrank_lite.laws.scale.law_table`), ``width``
        (:func:`width_table`), ``figure``, ``glue`` (name -> plain text): ``_rows``,
        ``_verdicts`` (:func:`verdict_text`), ``_fitted``, ``_off`` (ends judged above or
        below), ``_exact`` (ends with a zero-width interval: their points on one line),
        ``_one_plus`` (:func:`one_plus_slope` over the rows' betas),
        ``_capped`` (count of capped rows), ``_capped_rows`` (:func:`capped_text`),
        ``_width`` (:func:`width_text`), ``_width_sentence``.
    """
    rows = with_caps(rows)
    law = scale.law_table(rows)
    c = verdict_counts(law["verdict"])
    glue = {"rows": str(len(rows)), "verdicts": verdict_text(law),
            "fitted": str(c["total"]), "off": str(c["above"] + c["below"]),
            "exact": str(int(((law["ci_high"] - law["ci_low"]).abs() <= 1e-9).sum())),
            "one_plus": f"{one_plus_slope(rows['beta']):.2f}",
            "capped": str(int(scale.capped(rows.reset_index(drop=True)).sum())),
            "capped_rows": capped_text(rows), "width": width_text(rows),
            "width_sentence": WIDTH_SENTENCE}
    return {"command": command, "rows": rows, "law": law, "width": width_table(rows),
            "figure": law_scale_figure(rows),
            "glue": {f"{prefix}_{k}": v for k, v in glue.items()}}


def live_report(d_values, n, betas, eps_values, seed=0, executor=None,
                prefix="live") -> dict:
    """A sweep computed now (:func:`attnrank_lite.laws.scale.sweep_rows`) and its
    :func:`law_report`; raises ``AssertionError`` if a row is unverified."""
    rows = scale.sweep_rows(d_values, n, betas, eps_values, seed=seed, executor=executor)
    assert rows["verified"].all(), "a live bracket failed its re-verification"
    out = law_report(rows, sweep_command(d_values, n, betas, eps_values, seed=seed), prefix)
    return out


def stored_rows(path) -> tuple[pd.DataFrame, pd.Series, str]:
    """Rows of one code hash of a store: this build's if stored, else the latest run's.

    Returns
    -------
    (rows, run, code)
        The rows, the last ``runs`` record of that code (its ``command``, ``executor``,
        ``wall_s`` ...; a record of nans when the store has none), and the code hash.
    """
    df = law_store.read_store(path)
    if df.empty:
        raise ValueError(f"the store {path} holds no rows")
    current = law_store.code_hash()
    hashes = df.groupby("code_hash")["finished_utc"].max().sort_values()
    code = current if current in hashes.index else hashes.index[-1]
    runs = law_store.read_runs(path)
    runs = runs[runs["code_hash"] == code]
    run = (runs.iloc[-1] if len(runs) else
           pd.Series({c: np.nan for c in ("command", "executor", "finished_utc", "wall_s", "computed")}))
    return df[df["code_hash"] == code].reset_index(drop=True), run, code


def stored_report(path, prefix="paper") -> dict:
    """A stored sweep's :func:`law_report` (its own command from the store's ``runs`` table),
    with ``summary`` (:func:`attnrank_lite.laws.scale.store_summary`), ``run``,
    ``code``, ``code_now`` and ``other_codes`` (hashes of rows not shown), and glued
    ``_executor``, ``_wall`` (minutes), ``_cpu`` (CPU-minutes over the tasks), ``_code``,
    ``_code_now``, ``_same_code``."""
    rows, run, code = stored_rows(path)
    others = sorted(set(law_store.read_store(path)["code_hash"]) - {code})
    summary = scale.store_summary(rows)
    now = law_store.code_hash()
    out = law_report(rows, str(run["command"]), prefix)
    out["glue"].update({f"{prefix}_{k}": v for k, v in {
        "executor": str(run["executor"]), "wall": f"{float(run['wall_s']) / 60:.1f}",
        "cpu": f"{summary['task_cpu_s'] / 60:.1f}", "code": str(code), "code_now": str(now),
        "same_code": "the same" if code == now else "not the same"}.items()})
    return {"summary": summary, "run": run, "code": code, "code_now": now,
            "other_codes": others, **out}


def report_lines(report: dict, name) -> list[str]:
    """The text of ``sweep --report`` for a :func:`stored_report`: what the store holds, its
    command, the law table (columns of the rule first), the capped rows left out, the verdict
    counts, the width trend and :data:`attnrank_lite.laws.verdicts.WIDTH_SENTENCE`."""
    s, code, now, g = report["summary"], report["code"], report["code_now"], report["glue"]
    p = next(k for k in g if k.endswith("_verdicts"))[:-len("_verdicts")]
    fmt = {"float_format": lambda x: f"{x:.3f}", "index": False}
    return [
        f"store {Path(name)}: {s['rows']} rows under code {code}"
        f"{' (this code)' if code == now else f' (this code is {now})'}; d {s['d']}, n {s['n']}, "
        f"beta {s['beta']}, eps {s['eps']}, points {s['points']}, seed {s['seed']}; verified column "
        f"as stored (sweep --verify rechecks): {s['all_verified']}; task seconds: "
        f"wall {s['task_wall_s']:.0f}, CPU {s['task_cpu_s']:.0f}",
        *([f"  (other code hashes in the store, not shown: {', '.join(report['other_codes'])})"]
          if report.get("other_codes") else []),
        f"command: {report['command']}",
        report["law"].to_string(**fmt),
        f"capped rows left out of the fits ({g[p + '_capped']}): {g[p + '_capped_rows']}",
        f"verdicts against (d-1)/2: {g[p + '_verdicts']} fitted ends",
        "width upper/lower per beta:",
        report["width"].to_string(float_format=lambda x: f"{x:.2f}"),
        WIDTH_SENTENCE,
    ]


def provenance_lines(store, paper: dict, recheck: dict) -> list[str]:
    """The lines chapter 7 prints under its stored table: the recheck, the store and its command,
    where and how long it ran, and the code hashes of the store and of this build.

    Parameters
    ----------
    store : str or path
        The store as the chapter's ``store`` parameter names it.
    paper : dict
        :func:`stored_report` of the store.
    recheck : dict
        :func:`recheck_stored` of its rows.
    """
    run, summary = paper["run"], paper["summary"]
    return [f"rechecked: {recheck['line']}",
            f"store: {store}",
            f"command: {run.command}",
            f"ran on: {run.executor}; finished {run.finished_utc}",
            f"run wall time: {run.wall_s:.0f} s for {run.computed} rows",
            f"task CPU seconds (sum): {summary['task_cpu_s']:.0f}",
            f"code hash of the store: {paper['code']}",
            f"code hash of this build: {paper['code_now']}"]


def recheck_stored(path, rows: pd.DataFrame, sample: int | None = None, seed: int = 0,
                   prefix: str = "paper") -> dict:
    """Recheck stored rows from their certificates (:mod:`attnrank_lite.laws.row_certificates`)
    instead of trusting their ``verified`` column.

    Parameters
    ----------
    path : path
        The store.
    rows : pandas.DataFrame
        The rows to recheck (e.g. :func:`stored_rows`'s); their blobs are read from the store.
    sample : int, optional
        Recheck only this many rows, drawn without replacement (``numpy`` generator ``seed``);
        ``None`` (or at least ``len(rows)``): every row.
    prefix : str
        Prefix of the glue name.

    Returns
    -------
    dict
        ``has_certificates`` (the store has a ``certificates`` table), ``total``, ``checked``,
        ``passed``, ``seconds``, ``results``
        (:func:`attnrank_lite.laws.row_certificates.recheck_rows`), ``failures`` (one line
        per failing row), ``line`` (one sentence) and ``glue`` (``{prefix}_recheck``: that
        sentence).
    """
    import time

    from .row_certificates import recheck_rows

    total = len(rows)
    has = law_store.has_certificates(path)
    if not has:
        line = (f"the store keeps no certificates (it was written before sweep rows kept them): its {total} "
                "rows were not rechecked; rerun its command to store them with their certificates")
        return {"has_certificates": False, "total": total, "checked": 0, "passed": 0, "seconds": 0.0,
                "results": None, "failures": [], "line": line, "glue": {f"{prefix}_recheck": line}}
    blobs = law_store.read_certified_store(path)
    key = [*law_store.KEY, "code_hash"]
    shown = rows.reset_index(drop=True)
    if sample is not None and sample < total:
        pick = np.sort(np.random.default_rng(seed).choice(total, size=int(sample), replace=False))
        shown = shown.iloc[pick].reset_index(drop=True)
    merged = shown[[c for c in shown.columns if c != "certificate"]].merge(
        blobs[[*key, "certificate"]], on=key, how="left")
    t0 = time.perf_counter()
    results = recheck_rows(merged)
    seconds = time.perf_counter() - t0
    checked, passed = len(results), int(results["ok"].sum())
    what = (f"all {total} rows shown were" if checked == total
            else f"a sample of {checked} of the {total} rows shown (seed {seed}) was")
    line = (f"{what} rechecked from their stored certificates (both sides, and the claimed ends equal to "
            f"the row's): {passed} of {checked} passed, in {seconds:.1f} s")
    failures = [f"{r.row}: {r.line}" for r in results.itertuples() if not r.ok]
    return {"has_certificates": True, "total": total, "checked": checked, "passed": passed,
            "seconds": seconds, "results": results, "failures": failures, "line": line,
            "glue": {f"{prefix}_recheck": line}}
