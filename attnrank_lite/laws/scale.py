r"""The spherical law at scale: a stored sweep over ``d``, ``beta`` and eps, and its law table.

One configuration is ``(d, n, beta, eps, points, seed)``: ``n`` points of :math:`S^{d-1}`
(``points="well-spread"``: :func:`attnrank_lite.laws.geometry.well_spread_sphere`;
``"random"``: uniform, :func:`attnrank_lite.laws.geometry.random_sphere`), rebuilt from the
seed by the task itself, and a certified bracket on :math:`\operatorname{rank}_\varepsilon(A)`,
:math:`A = \operatorname{rowsoftmax}(\beta XX^\top)`, from
:func:`attnrank_lite.engine.streaming.point_brackets` (matrix-free: ``A`` is never stored;
when ``n <= verify_dense_limit`` the certificates are also re-verified on the materialised
matrix; the same families as :func:`attnrank_lite.laws.sweeps.point_sweep` with its defaults).

:func:`run_sweep` runs the configurations not yet in the store
(:mod:`attnrank_lite.laws.law_store`) as independent tasks on an optional executor and commits
each task's row as it finishes, with its certificate
(:mod:`attnrank_lite.laws.row_certificates`) in the same transaction. :func:`law_table` fits,
per ``(d, eps)``, the log-log slope of
each bracket end against ``beta`` and judges it against the law's exponent :math:`(d-1)/2`
(``thm-spherical-law``) by the book's one rule (:mod:`attnrank_lite.laws.verdicts`), capped
rows (:func:`capped`) left out and counted.
"""
from __future__ import annotations

import math
import sqlite3
import time
from functools import lru_cache

import numpy as np
import pandas as pd

from ..engine.parallel import run_tasks
from ..engine.threads import single_threaded
from . import law_store
from .row_certificates import certificate_blob, npy_bytes, point_set
from .spectra import harmonic_count
from .sweeps import _point_task, point_task_memory
from .verdicts import SLOPE_COLUMNS, capped_rows, judge_slope

__all__ = ["POINTS", "check_sweep_parameters", "configurations", "task_memory", "task_cost", "sweep_task",
           "sweep_rows", "run_sweep", "certificate_count", "capped", "law_table", "store_summary"]

#: point sets a sweep can use
POINTS = ("well-spread", "random")
#: rows at most this many points are re-verified on the dense matrix (as in ``point_sweep``)
VERIFY_DENSE_LIMIT = 4096


def _bad(param: str, why: str):
    return ValueError(f"parameter {param!r} {why}")


def check_sweep_parameters(ds, n, betas, eps_values, points="well-spread", seed=0) -> None:
    """Fail at once, naming the parameter, on values a sweep cannot run with.

    Raises
    ------
    ValueError
        ``parameter 'd' must ...`` (one line).
    """
    def whole(x):
        return not isinstance(x, bool) and isinstance(x, (int, np.integer))

    if not ds or not all(whole(d) and 2 <= d <= 12 for d in ds):
        raise _bad("d", f"must be whole numbers from 2 to 12; got {list(ds)}")
    if not whole(n) or not 16 <= n <= 10_000_000:
        raise _bad("n", f"must be a whole number from 16 to 10,000,000; got {n!r}")
    if len(betas) < 2 or not all(isinstance(b, (int, float)) and math.isfinite(b) and b > 0 for b in betas):
        raise _bad("beta", f"needs at least two finite positive values (a slope); got {list(betas)}")
    if len(set(betas)) < 2:
        raise _bad("beta", f"needs at least two distinct values (a slope); got {list(betas)}")
    if not eps_values or not all(isinstance(e, (int, float)) and 0 < e < 1 for e in eps_values):
        raise _bad("eps", f"must lie in (0, 1); got {list(eps_values)}")
    if points not in POINTS:
        raise _bad("points", f"must be one of {', '.join(POINTS)}; got {points!r}")
    if not whole(seed) or not 0 <= seed < 2 ** 32:
        raise _bad("seed", f"must be a whole number in [0, 2**32); got {seed!r}")


def configurations(ds, n, betas, eps_values, points="well-spread", seed=0) -> list[tuple]:
    """Every configuration, as :data:`attnrank_lite.laws.law_store.KEY` tuples, d then beta then eps."""
    return [(int(d), int(n), float(b), float(e), str(points), int(seed))
            for d in sorted(set(ds)) for b in sorted(set(betas)) for e in sorted(set(eps_values))]


def task_memory(d, n, beta, eps, points, seed) -> tuple[float, str]:
    """Estimated peak bytes of :func:`sweep_task`, and what they hold
    (:func:`attnrank_lite.laws.sweeps.point_task_memory`), plus four dense ``n x n`` float64
    arrays at every ``n``: the row's certificate is written and checked on the dense matrix
    (:func:`attnrank_lite.laws.row_certificates.certificate_blob`) while the basis is held."""
    need, what = point_task_memory(n, d, beta, VERIFY_DENSE_LIMIT)
    return need + 8.0 * 4 * n * n, f"{what} and the certificate's dense {n:,} x {n:,} matrix"


def task_cost(d, n, beta, eps, points, seed) -> float:
    r"""Relative run time of :func:`sweep_task`, to submit the costliest tasks first: passes over
    the :math:`n^2` kernel entries against about :math:`(1+\beta)^{(d-1)/2}` harmonics (the
    degree grows like :math:`\sqrt{\beta}`), more of them at a smaller eps."""
    return n * n * (1.0 + beta) ** ((d - 1) / 2) * (1.0 + math.log(1.0 / eps))


@lru_cache(maxsize=2)
def _points(points: str, n: int, d: int, seed: int) -> np.ndarray:
    X = point_set(points, n, d, seed)
    X.setflags(write=False)
    return X


@lru_cache(maxsize=1)
def _basis(points: str, n: int, d: int, seed: int):
    """One harmonic basis per point set and process (grown lazily, shared across ``beta``)."""
    from ..engine.harmonic import HarmonicBasis

    return HarmonicBasis(_points(points, n, d, seed))


def sweep_task(d, n, beta, eps, points, seed, certify: bool = True) -> dict:
    """The stored row of one configuration (a task: points rebuilt from ``points`` and ``seed``).

    Runs with one BLAS thread. ``wall_s`` and ``cpu_s`` are this task's wall-clock and
    thread CPU seconds, point set included (built once per process and reused), certificate
    included. ``certify``: the row also holds ``certificate``, its certificate blob
    (:func:`attnrank_lite.laws.row_certificates.certificate_blob`, checked on the dense matrix
    before it is written), and ``point_set``, the points it was made on as ``.npy`` bytes
    (stored once per point set: a recheck reads them instead of rebuilding them, so that it
    does not depend on rebuilding the same bits on another machine).
    """
    t0, c0 = time.perf_counter(), time.thread_time()
    with single_threaded():
        X = _points(points, n, d, seed)
        row, = _point_task(X, float(beta), (float(eps),), _basis(points, n, d, seed),
                           VERIFY_DENSE_LIMIT, "auto", {}, keep_brackets=certify)
        blob = certificate_blob(row["bracket"], X, float(beta)) if certify else None
    return {**({"certificate": blob, "point_set": npy_bytes(X)} if certify else {}),
            "d": int(d), "n": int(n), "beta": float(beta), "eps": float(eps), "points": points,
            "seed": int(seed), "n_points": int(row["n"]), "lower": int(row["lower"]),
            "upper": int(row["upper"]), "lower_kind": row["lower_kind"],
            "upper_source": row["upper_source"],
            "degree": None if row["degree"] is None else int(row["degree"]),
            "verified": bool(row["verified"]), "wall_s": time.perf_counter() - t0,
            "cpu_s": time.thread_time() - c0}


def sweep_rows(ds, n, betas, eps_values, points="well-spread", seed=0, executor=None) -> pd.DataFrame:
    """The rows of a sweep without a store and without timings (byte-identical run to run).

    Same tasks as :func:`run_sweep` (:func:`sweep_task`, one per configuration, on ``executor``
    or in this process), in configuration order; the ``wall_s`` and ``cpu_s`` columns dropped.
    """
    check_sweep_parameters(ds, n, betas, eps_values, points, seed)
    keys = configurations(ds, n, betas, eps_values, points, seed)
    rows = run_tasks(_uncertified_task, keys, executor, cost=task_cost, desc="rows",
                     need=lambda d, n, beta, *_: point_task_memory(n, d, beta, VERIFY_DENSE_LIMIT),
                     label=lambda k: f"d={k[0]} n={k[1]} beta={k[2]:g} eps={k[3]:g}")
    return pd.DataFrame(rows).drop(columns=["wall_s", "cpu_s"])


def _uncertified_task(d, n, beta, eps, points, seed) -> dict:
    """:func:`sweep_task` without the certificate (rows that are not stored)."""
    return sweep_task(d, n, beta, eps, points, seed, certify=False)


def certified_keys(con, code: str) -> tuple[set[tuple], dict]:
    """Configurations stored under ``code`` whose certificate blob is present and agrees with
    the row (:func:`attnrank_lite.laws.row_certificates.claims_match`: instance, eps and claimed
    ends; no arithmetic), and, for the others, why not (key -> reason)."""
    from ..engine.certificate_io import CertificateFileError
    from .row_certificates import blob_header, claims_match

    good, bad = set(), {}
    for r in law_store.stored_rows_with_blobs(con, code):
        key = (int(r["d"]), int(r["n"]), float(r["beta"]), float(r["eps"]), str(r["points"]), int(r["seed"]))
        if r["certificate"] is None:
            bad[key] = "no stored certificate"
            continue
        try:
            why = claims_match(r, blob_header(r["certificate"]))
        except CertificateFileError as exc:
            why = str(exc)
        if why:
            bad[key] = why
        else:
            good.add(key)
    return good, bad


def run_sweep(store, ds, n, betas, eps_values, points="well-spread", seed=0, executor=None,
              limit=None, log=print, command: str = "", executor_name: str | None = None) -> dict:
    """Compute and commit every configuration not yet stored under this code with its certificate.

    A stored row counts as done only when its certificate blob is present and agrees with the
    row (:func:`certified_keys`); the others (a row edited after it was written, a blob swapped
    from another row, a store written before certificates were kept) are recomputed and
    replaced, row and certificate in one transaction
    (:func:`attnrank_lite.laws.law_store.insert_certified_rows`). The full arithmetic recheck is
    ``sweep --verify`` (:func:`attnrank_lite.laws.row_certificates.verify_row`).

    Parameters
    ----------
    store : path
        SQLite file (created if missing).
    executor : concurrent.futures.Executor, optional
        Where the tasks run (``None``: this process, one after another).
    limit : (float, str), optional
        Memory limit to check each task against; default: the smallest Dask worker's.
    log : callable
        Receives one summary line before the work starts.
    command, executor_name : str
        Recorded in the store's ``runs`` table when the sweep completes (with its wall time).

    Returns
    -------
    dict
        ``configurations``, ``skipped`` (already stored with a certificate that matches the
        row), ``elsewhere`` (being computed by another sweep on this store), ``computed``,
        ``code_hash``, ``wall_s`` (of the whole run).

    Raises
    ------
    attnrank_lite.laws.law_store.StoreError
        The store cannot be opened, read or written (a missing folder, a file that is not a
        sweep store, a read-only file, a full disk), in one line saying which.

    Notes
    -----
    Sweeps run at the same time on one store share the work: a sweep claims the configurations
    it computes before it starts them (:func:`attnrank_lite.laws.law_store.claim_rows`), so no
    row is computed twice, and the ``runs`` table's ``computed`` counts the rows this run
    computed. A sweep that finds rows claimed by another running sweep leaves them to it
    (``elsewhere``); run it again after that sweep ends to see them stored. The claims of a
    sweep that stopped (an error, SIGKILL) are taken over by the next sweep.
    """
    check_sweep_parameters(ds, n, betas, eps_values, points, seed)
    code = law_store.code_hash()
    con = law_store.open_store(store)
    try:
        return _sweep_into(con, store, code, ds, n, betas, eps_values, points, seed, executor, limit, log,
                           command, executor_name)
    except sqlite3.Error as exc:  # a full disk, a store damaged or made read-only while the sweep ran
        raise law_store.store_error(exc, store) from exc
    finally:
        con.close()


def _sweep_into(con, store, code, ds, n, betas, eps_values, points, seed, executor, limit, log, command,
                executor_name) -> dict:
    """:func:`run_sweep`'s work on the open store ``con``."""
    keys = configurations(ds, n, betas, eps_values, points, seed)
    done, bad = certified_keys(con, code)
    owner = law_store.claim_owner()
    todo, elsewhere = law_store.claim_rows(con, keys, code, owner, done=done)
    skipped = len(keys) - len(todo) - elsewhere
    redo = [k for k in todo if k in bad]
    where = executor_name or ("this process" if executor is None else type(executor).__name__)
    log(f"{len(keys)} configurations: {skipped} already stored under code {code}, "
        + (f"{elsewhere} being computed by another sweep on this store, " if elsewhere else "")
        + f"{len(todo)} to compute on {where} -> {store}"
        + (f" ({len(redo)} stored without a certificate that matches the row: recomputed)" if redo else ""))
    t0, started = time.perf_counter(), time.time()
    try:
        run_tasks(sweep_task, todo, executor, need=task_memory, cost=task_cost, limit=limit,
                  on_done=lambda i, row: law_store.insert_rows(con, [row], code), desc="rows",
                  label=lambda k: f"d={k[0]} n={k[1]} beta={k[2]:g} eps={k[3]:g}")
    finally:
        try:
            law_store.release_claims(con, owner)
        except sqlite3.Error:  # a store that can no longer be written: the first error is the one to tell
            pass
    wall = time.perf_counter() - t0
    law_store.record_run(con, started, command, where, len(todo), skipped, wall, code)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return {"configurations": len(keys), "skipped": skipped, "elsewhere": elsewhere, "computed": len(todo),
            "code_hash": code, "wall_s": wall}


def certificate_count(df: pd.DataFrame) -> np.ndarray:
    r"""The harmonic count :math:`N(d,\le L)` of each row's upper certificate (nan when unknown).

    A row whose upper end comes from the harmonic family of degree ``L`` (column ``degree``)
    has the rank of the span of all harmonics of degree at most ``L``
    (:func:`attnrank_lite.laws.spectra.harmonic_count`); once that count reaches ``n`` the
    certificate is the trivial one, rank ``n``. Rows without a degree (an l1 fit, or tables
    without the column) give nan: only their upper end can mark them capped.
    """
    if "degree" not in df.columns:
        return np.full(len(df), np.nan)
    return np.array([np.nan if pd.isna(L) else float(harmonic_count(int(L), int(d)))
                     for d, L in zip(df["d"], df["degree"])], dtype=np.float64)


def capped(df: pd.DataFrame) -> np.ndarray:
    """Rows whose upper certificate is capped (``upper >= n`` or its harmonic count ``>= n``),
    by the book's rule (:func:`attnrank_lite.laws.verdicts.capped_rows`)."""
    n = df["n_points"] if "n_points" in df.columns else df["n"]
    return capped_rows(df["upper"], n, count=certificate_count(df))


def law_table(df: pd.DataFrame) -> pd.DataFrame:
    r"""Slope of each bracket end against ``beta`` per ``(d, n, point set, eps)``, judged by the
    book's rule against :math:`(d-1)/2` (:func:`attnrank_lite.laws.verdicts.judge_slope`).

    Rows whose upper certificate is capped (:func:`capped`) are left out of both ends' fits
    and counted in ``left_out``: their upper end is tied to ``n``, not to the law, and the row
    is at a beta where ``n`` may be the binding term of :math:`\min\{n, \cdot\}`.

    Parameters
    ----------
    df : pandas.DataFrame
        Stored rows (:func:`attnrank_lite.laws.law_store.read_store`) of one code hash, or
        :func:`sweep_rows`; columns d, n, beta, eps, lower, upper (``points``, ``degree`` and
        ``n_points`` when present).

    Returns
    -------
    pandas.DataFrame
        :data:`attnrank_lite.laws.verdicts.SLOPE_COLUMNS` (slope, ci_low, ci_high, points
        (rows fitted), reference (= (d-1)/2), left_out, verdict), then d, n, point_set, eps,
        end, beta_min, beta_max.
    """
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
    return (pd.DataFrame(parts)[cols].sort_values(["d", "n", "point_set", "eps", "end"])
            .reset_index(drop=True))


def store_summary(df: pd.DataFrame) -> dict:
    """What a store holds: parameters, code hashes, rows, task seconds (wall and CPU)."""
    return {"rows": len(df), "d": sorted(int(x) for x in df["d"].unique()),
            "n": sorted(int(x) for x in df["n"].unique()),
            "beta": sorted(float(x) for x in df["beta"].unique()),
            "eps": sorted(float(x) for x in df["eps"].unique()),
            "points": sorted(df["points"].unique()), "seed": sorted(int(x) for x in df["seed"].unique()),
            "code_hash": sorted(df["code_hash"].unique()), "all_verified": bool(df["verified"].all()),
            "task_wall_s": float(df["wall_s"].sum()), "task_cpu_s": float(df["cpu_s"].sum())}
