"""Benchmark of sweeps on Dask (issue 19): speed-up, overhead, bytes per task, a cluster estimate.

``--d4 N``: the d = 4 sweep of chapter 2's paper profile (beta = 8, 16, 32, 64; eps = 0.1,
0.25) on N well-spread points of S^3 (the paper profile has N = 20,000), one task per
(beta, eps), run sequentially in this process and then on a local Dask cluster of
``--workers`` processes (one thread, one BLAS thread each). Prints wall time, the CPU seconds
of the tasks (summed, from the rows) and of this process, and the load average before and
after each run; checks that both runs give identical brackets.

``--tiny K``: K tiny configurations (d = 2, n = 64, K/2 betas, 2 eps) sequentially and through
a local scheduler (cluster start-up timed separately; a warm-up task first so that the workers
have imported the package).

``--bytes``: pickled size of one task (function reference and arguments) and of one result row
(Dask sends both with cloudpickle), and the per-task times stored in ``--store``.

Usage::

    .venv/bin/python benchmarks/bench_sweep.py --d4 20000 --workers 2
    .venv/bin/python benchmarks/bench_sweep.py --tiny 100 --bytes --store attnrank_lite/laws/data/laws_paper.sqlite
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import pandas as pd

from attnrank_lite.engine.parallel import dask_executor, run_tasks
from attnrank_lite.laws import law_store, scale

SAME = ["d", "n", "beta", "eps", "lower", "upper", "lower_kind", "upper_source", "degree", "verified"]


def _cpu_self() -> float:
    t = os.times()
    return t.user + t.system


def _timed_sweep(ds, n, betas, eps, executor, store):
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), _cpu_self()
    scale.run_sweep(store, ds, n, betas, eps, executor=executor, log=lambda s: None)
    wall, cpu = time.perf_counter() - t0, _cpu_self() - c0
    rows = law_store.read_store(store)
    return rows, {"wall_s": wall, "task_cpu_s": rows.cpu_s.sum(), "max_task_cpu_s": rows.cpu_s.max(),
                  "this_process_cpu_s": cpu, "load_before": load0, "load_after": os.getloadavg()[0]}


def bench_d4(n: int, workers: int) -> None:
    betas, eps = [8.0, 16.0, 32.0, 64.0], [0.1, 0.25]
    with tempfile.TemporaryDirectory() as tmp:
        seq, s = _timed_sweep([4], n, betas, eps, None, os.path.join(tmp, "seq.sqlite"))
        t0 = time.perf_counter()
        with dask_executor(workers=workers) as ex:
            start = time.perf_counter() - t0
            par, p = _timed_sweep([4], n, betas, eps, ex, os.path.join(tmp, "par.sqlite"))
    assert seq[SAME].equals(par[SAME]), "the parallel sweep gave other brackets"
    print(f"d = 4, n = {n}, {len(seq)} tasks; cluster start-up {start:.1f} s")
    print("| run | wall s | task CPU s (sum) | largest task CPU s | this process CPU s | load before → after |")
    print("|---|---|---|---|---|---|")
    for name, r in (("sequential", s), (f"--workers {workers}", p)):
        print(f"| {name} | {r['wall_s']:.1f} | {r['task_cpu_s']:.1f} | {r['max_task_cpu_s']:.1f} | "
              f"{r['this_process_cpu_s']:.1f} | {r['load_before']:.1f} → {r['load_after']:.1f} |")
    print(f"speed-up (wall): {s['wall_s'] / p['wall_s']:.2f}x; bound from the largest task: "
          f"{s['task_cpu_s'] / max(p['max_task_cpu_s'], s['max_task_cpu_s']):.2f}x")


def _tiny(i):
    return scale.sweep_task(2, 64, 1.0 + i, 0.25, "well-spread", 0)


def bench_tiny(k: int, workers: int) -> None:
    tasks = [(i,) for i in range(k)]
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), _cpu_self()
    seq = run_tasks(_tiny, tasks)
    t_seq, c_seq = time.perf_counter() - t0, _cpu_self() - c0
    t0 = time.perf_counter()
    with dask_executor(workers=workers) as ex:
        t_start = time.perf_counter() - t0
        run_tasks(_tiny, [(0,)], ex)  # warm-up: the workers import the package
        t0 = time.perf_counter()
        par = run_tasks(_tiny, tasks, ex)
        t_par = time.perf_counter() - t0
    key = ["lower", "upper", "degree"]
    assert [[r[c] for c in key] for r in seq] == [[r[c] for c in key] for r in par]
    print(f"{k} tiny tasks: sequential {t_seq:.2f} s (CPU {c_seq:.2f} s); local scheduler, "
          f"{workers} workers: {t_par:.2f} s ({t_par / t_seq:.2f}x sequential), cluster start-up "
          f"{t_start:.1f} s; per task {1000 * t_seq / k:.1f} ms vs {1000 * t_par / k:.1f} ms; "
          f"load {load0:.1f} → {os.getloadavg()[0]:.1f}")


def bench_bytes(store) -> None:
    import cloudpickle

    args = (4, 100_000, 64.0, 0.1, "well-spread", 0)
    task = len(cloudpickle.dumps((scale.sweep_task, args)))
    row = scale.sweep_task(2, 64, 4.0, 0.25, "well-spread", 0)
    print(f"bytes per task: {task} sent (function reference + arguments), "
          f"{len(cloudpickle.dumps(row))} returned (one row)")
    if store:
        df = law_store.read_store(store)
        t = df.groupby(["d", "beta"])[["cpu_s", "wall_s"]].sum().reset_index()
        print(f"stored task seconds ({store}, n = {sorted(df.n.unique())}):")
        print(t.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
        need = pd.DataFrame([{"d": d, "beta": b, "GiB at n = 100,000": scale.task_memory(d, 100_000, b, 0.1, "", 0)[0]
                              / 2 ** 30} for d in range(2, 7) for b in (4.0, 16.0, 64.0)])
        print(need.to_string(index=False, float_format=lambda x: f"{x:.1f}"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d4", type=int, metavar="N", help="points of the d = 4 sweep")
    ap.add_argument("--tiny", type=int, metavar="K", help="number of tiny tasks")
    ap.add_argument("--bytes", action="store_true")
    ap.add_argument("--store", help="a sweep store for the per-task times of --bytes")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()}")
    if a.tiny:
        bench_tiny(a.tiny, a.workers)
    if a.bytes:
        bench_bytes(a.store)
    if a.d4:
        bench_d4(a.d4, a.workers)


if __name__ == "__main__":
    main()
