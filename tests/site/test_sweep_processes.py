"""The ``sweep`` command with real processes: a Dask scheduler and two workers started here, a
sweep through ``--scheduler`` against the sequential one, and a sweep killed with SIGKILL and
resumed. Every process started here is stopped in the fixture's ``finally``."""
from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from attnrank_lite.laws import law_store

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAME = ["d", "n", "beta", "eps", "points", "seed", "n_points", "lower", "upper", "lower_kind",
        "upper_source", "degree", "verified", "code_hash"]


def _env():
    # one BLAS/OpenMP thread everywhere, as in a Dask worker (the nanny sets these for its
    # processes): the sequential run and the workers then run the same kernels, and a library
    # loaded after threadpoolctl's limit cannot run with other thread counts in one of them
    env = dict(os.environ, PYTHONPATH=str(ROOT), ATTNRANK_PROGRESS="0", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("ATTNRANK_SCHEDULER", None)
    return env


def _sweep(*args, **kw):
    return subprocess.run([sys.executable, "-m", "attnrank_lite", "sweep", *map(str, args)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600, **kw)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=20)


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """``tcp://127.0.0.1:PORT`` of a ``dask scheduler`` with two one-thread ``dask worker``s."""
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask")
    addr = f"tcp://127.0.0.1:{_free_port()}"
    procs = []
    try:
        def start(name, cmd):
            out = open(logs / f"{name}.log", "w")
            procs.append(subprocess.Popen(cmd, env=_env(), stdout=out, stderr=subprocess.STDOUT,
                                          start_new_session=True))

        start("scheduler", [BIN / "dask", "scheduler", "--host", "127.0.0.1",
                            "--port", addr.rsplit(":", 1)[1], "--no-dashboard"])
        for i in range(2):
            start(f"worker{i}", [BIN / "dask", "worker", addr, "--nthreads", "1", "--nworkers", "1",
                                 "--no-dashboard", "--host", "127.0.0.1", "--memory-limit", "4GiB"])
        with Client(addr, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
        yield addr
    finally:
        _stop(procs)
    assert all(p.poll() is not None for p in procs)


def test_sweep_through_a_scheduler_matches_the_sequential_sweep(tmp_path, scheduler):
    args = ["--d", 2, 3, "--n", 300, "--beta", 4, 16, "--eps", 0.1, 0.25]
    seq = _sweep(*args, "--store", tmp_path / "seq.sqlite")
    assert seq.returncode == 0, seq.stderr
    dist = _sweep(*args, "--store", tmp_path / "dist.sqlite", "--scheduler", scheduler)
    assert dist.returncode == 0, dist.stderr
    assert f"8 to compute on the Dask scheduler {scheduler}" in dist.stdout
    run = law_store.read_runs(tmp_path / "dist.sqlite").iloc[-1]
    assert run.executor == f"the Dask scheduler {scheduler}" and run.computed == 8
    assert run.command.endswith(f"--scheduler {scheduler}")
    a = law_store.read_store(tmp_path / "seq.sqlite")[SAME]
    b = law_store.read_store(tmp_path / "dist.sqlite")[SAME]
    assert len(a) == 8 and a["verified"].all()
    pd.testing.assert_frame_equal(a, b)  # identical brackets, kinds and degrees, row for row


def test_a_task_larger_than_the_smallest_worker_is_refused_in_one_line(tmp_path, scheduler):
    r = _sweep("--d", 6, "--n", 2_000_000, "--beta", 4, 64, "--eps", 0.1, "--store",
               tmp_path / "big.sqlite", "--scheduler", scheduler)
    assert r.returncode == 4
    assert r.stderr.count("\n") == 1 and "memory limit of the smallest worker" in r.stderr
    assert law_store.read_store(tmp_path / "big.sqlite").empty


def test_a_killed_sweep_resumes_without_recomputing_finished_rows(tmp_path):
    store = tmp_path / "k.sqlite"
    # 12 rows of 0.3-1.4 CPU-seconds each (8 s in all on an idle core): killed after the third
    args = ["--d", 2, 3, "--n", 1500, "--beta", 4, 8, 16, "--eps", 0.1, 0.25, "--store", store]
    p = subprocess.Popen([sys.executable, "-m", "attnrank_lite", "sweep", *map(str, args)], cwd=ROOT,
                         env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        count = 0
        while count < 3 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            if store.exists():
                try:
                    with sqlite3.connect(store, timeout=5) as con:
                        count = con.execute("SELECT count(*) FROM rows").fetchone()[0]
                except sqlite3.OperationalError:  # table not created yet
                    count = 0
        assert p.poll() is None, "the sweep finished before it could be killed"
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == -signal.SIGKILL
    before = law_store.read_store(store)  # readable after the kill
    assert 3 <= len(before) < 12
    r = _sweep(*args)
    assert r.returncode == 0, r.stderr
    assert f"{len(before)} already stored" in r.stdout and f"{12 - len(before)} to compute" in r.stdout
    after = law_store.read_store(store)
    assert len(after) == 12 and after["verified"].all()
    keys = list(law_store.KEY)
    kept = before.merge(after, on=keys, suffixes=("", "_after"))
    assert len(kept) == len(before)
    # not recomputed: the committed rows are untouched, down to their measured seconds
    for c in ("wall_s", "cpu_s", "finished_utc", "lower", "upper"):
        assert (kept[c] == kept[f"{c}_after"]).all(), c


def test_parameter_errors_fail_at_once_in_one_line(tmp_path):
    for args, name in ((["--d", 2, "x"], "'--d'"), (["--d", 1], "'--d'"), (["--eps", 1.5], "'--eps'")):
        full = {"--d": [2], "--n": [100], "--beta": [4, 8], "--eps": [0.1]}
        full[args[0]] = args[1:]
        r = _sweep(*[x for k, v in full.items() for x in (k, *v)], "--store", tmp_path / "e.sqlite")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and name in r.stderr, r.stderr
    assert not (tmp_path / "e.sqlite").exists()


def test_a_worker_that_dies_fails_in_one_line_and_keeps_the_rows(tmp_path):
    """A row that outlives its workers (the nanny's memory limit, the OOM killer, a kill) is reported
    as exit 14 with what to do, not as an internal error; here the worker is killed outright, and
    ``allowed-failures`` 0 makes the first death final (Dask's default retries a row 3 times)."""
    import psutil

    store = tmp_path / "w.sqlite"
    args = ["--d", 3, "--n", 4000, "--beta", 16, 64, "--eps", 0.25, "--store", store, "--workers", 1]
    env = dict(_env(), DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0")
    p = subprocess.Popen([sys.executable, "-m", "attnrank_lite", "sweep", *map(str, args)], cwd=ROOT,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        worker, deadline = None, time.monotonic() + 300
        while worker is None and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            for c in psutil.Process(p.pid).children():  # the nanny runs here, its worker is a child
                try:
                    if "spawn_main" in " ".join(c.cmdline()) and c.cpu_times().user > 5:  # in a row
                        worker = c
                except psutil.NoSuchProcess:
                    pass
        assert worker is not None, "no worker computed a row"
        worker.kill()
        out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 14, err
    line, = [x for x in err.splitlines() if x.startswith("error: ")]
    assert "a Dask worker died computing a row of the sweep (1 attempt)" in line
    assert "per worker here" in line and f"the rows committed to {store} are kept" in line
    assert "internal error" not in err and "Traceback" not in err
    assert law_store.read_store(store)["verified"].all()  # readable, whatever was committed


def test_local_workers_are_not_restarted_at_their_memory_threshold():
    """``sweep --workers`` starts its workers under ``LOCAL_WORKER_MEMORY``: a row above 95% of a
    worker's limit runs to its end (Dask's default restarts the worker and, after three tries,
    fails the row). Real workers and a real allocation, with a limit small enough to pass."""
    from attnrank_lite.engine.parallel import dask_executor
    from attnrank_lite.site.sweep_cli import local_worker_memory

    def hold(nbytes):
        import time

        import numpy as np
        a = np.ones(int(nbytes) // 8)
        time.sleep(2.0)  # the nanny checks its worker's memory every 0.1 s
        return float(a.sum())

    nbytes = 600 * 2**20
    with local_worker_memory(), dask_executor(workers=1, memory_limit="400MiB") as ex:
        assert ex.submit(hold, nbytes).result(timeout=300) == nbytes // 8
