r"""The spherical law at scale: a stored, resumable sweep of configurations ``(d, n, beta, eps,
points, seed)``, each a streamed certified bracket committed with its certificate."""
from __future__ import annotations

import math
import sqlite3
import time
from functools import lru_cache, partial

import numpy as np
import pandas as pd

from ..engine.assemble import L1_LIMIT, STREAMED_SVD_LIMIT
from ..engine.parallel import run_tasks
from ..engine.threads import single_threaded
from . import law_store
from .row_certificates import certificate_blob, npy_bytes, point_set
from .sweeps import _point_task, point_task_memory

__all__ = ["POINTS", "check_sweep_parameters", "configurations", "sweep_l1_limit", "task_memory", "task_cost",
           "sweep_task", "sweep_rows", "run_sweep"]

#: point sets a sweep can use
POINTS = ("well-spread", "random")
#: rows at most this many points are re-verified on the dense matrix (as in ``point_sweep``)
VERIFY_DENSE_LIMIT = 4096
#: the stored rows also run the right-inverse family (``CostLimits.right_inverse``: n = 20,000 included)
RIGHT_INVERSE = 20000 * 20000
#: upper ends (columns) the l1-fitted family may reach in a row of n points: the engine's ``n m upper <=
#: L1_LIMIT`` allows 111 at n = 6,000 but 27 at n = 12,000, where three stored rows lost their l1 fit
#: (d = 4, beta 2, eps 0.1: 14 -> 30); fitted in a harmonic subspace it costs 30-60 CPU s a row there
L1_COLUMNS = 112


def sweep_l1_limit(n: int) -> int:
    """The l1 family's ``n m upper`` limit in a sweep row: the engine's, or ``L1_COLUMNS`` at ``n``."""
    return max(L1_LIMIT, n * n * L1_COLUMNS)


def _bad(param: str, why: str):
    return ValueError(f"parameter {param!r} {why}")


def check_sweep_parameters(ds, n, betas, eps_values, points="well-spread", seed=0) -> None:
    """``ValueError`` (one line) on values a sweep cannot run with."""
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
    """Estimated peak bytes of :func:`sweep_task`: the point sweep's and four dense ``n x n`` arrays."""
    need, what = point_task_memory(n, d, beta, VERIFY_DENSE_LIMIT)
    return need + 8.0 * 4 * n * n, f"{what} and the certificate's dense {n:,} x {n:,} matrix"


def task_cost(d, n, beta, eps, points, seed) -> float:
    r"""Relative run time of :func:`sweep_task`: :math:`n^2(1+\beta)^{(d-1)/2}(1 + \log(1/\varepsilon))`."""
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
    """The stored row of one configuration; ``certify``: with ``certificate`` and ``point_set`` bytes."""
    t0, c0 = time.perf_counter(), time.thread_time()
    with single_threaded():
        X = _points(points, n, d, seed)
        # no streamed SVD family beyond its cost limit: there effort "max" would run it on capped rows
        # (n = 6,000, d = 6, beta = 16: [224, 5964] and [114, 4579], 700 s a row), but its certificate,
        # two n x k float32 factors, is 220 MB a row, too large for the committed store; at n = 12,000
        # the harmonic degrees 11 and 12 (7,371 and 10,556 functions) certify those rows below n
        svd = "auto" if n * n <= STREAMED_SVD_LIMIT else False
        row, = _point_task(X, float(beta), (float(eps),), _basis(points, n, d, seed), VERIFY_DENSE_LIMIT, svd,
                           {}, sweep_l1_limit(n), keep_brackets=certify, right_inverse=RIGHT_INVERSE)
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
    """The rows of :func:`run_sweep`'s tasks without a store, certificates or timings."""
    check_sweep_parameters(ds, n, betas, eps_values, points, seed)
    keys = configurations(ds, n, betas, eps_values, points, seed)
    rows = run_tasks(partial(sweep_task, certify=False), keys, executor, cost=task_cost, desc="rows",
                     need=lambda d, n, beta, *_: point_task_memory(n, d, beta, VERIFY_DENSE_LIMIT),
                     label=lambda k: f"d={k[0]} n={k[1]} beta={k[2]:g} eps={k[3]:g}")
    return pd.DataFrame(rows).drop(columns=["wall_s", "cpu_s"])


def certified_keys(con, code: str) -> tuple[set[tuple], dict]:
    """Configurations stored under ``code`` whose blob's claims match the row; why not for others."""
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
    """Compute and commit on ``executor`` every configuration not in ``store`` under this code with a
    matching certificate; ``limit``: memory per task; ``command``, ``executor_name``: for ``runs``."""
    check_sweep_parameters(ds, n, betas, eps_values, points, seed)
    code = law_store.code_hash()
    con = law_store.open_store(store)
    try:
        return _sweep_into(con, store, code, keys=configurations(ds, n, betas, eps_values, points, seed),
                           executor=executor, limit=limit, log=log, command=command, executor_name=executor_name)
    except sqlite3.Error as exc:  # a full disk, a store damaged or made read-only while the sweep ran
        raise law_store.store_error(exc, store) from exc
    finally:
        con.close()


def _sweep_into(con, store, code, keys, executor, limit, log, command, executor_name) -> dict:
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
