"""run_tasks: submission order, the memory check before any submission, on_done per task; a failed Dask
connection closes its Client at once."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attnrank_lite.engine.parallel import TaskTooLarge, executor_memory_limit, run_tasks

ROOT = Path(__file__).resolve().parents[2]


def _square(x):
    return x * x


class _Reversed:
    """Task i finishes only after task i + 1 has finished: completion order is reversed."""

    def __init__(self, k):
        self.done = [threading.Event() for _ in range(k + 1)]
        self.done[k].set()
        self.order = []

    def __call__(self, i):
        assert self.done[i + 1].wait(10)
        self.order.append(i)
        self.done[i].set()
        return f"row {i}"


def test_results_come_back_in_submission_order_whatever_the_completion_order():
    task = _Reversed(5)
    seen = []
    with ThreadPoolExecutor(max_workers=5) as ex:
        out = run_tasks(task, [(i,) for i in range(5)], ex, on_done=lambda i, r: seen.append((i, r)))
    assert task.order == [4, 3, 2, 1, 0]
    assert out == [f"row {i}" for i in range(5)]
    assert sorted(seen) == [(i, f"row {i}") for i in range(5)]  # once per task, with its index


def test_sequential_and_pool_agree():
    tasks = [(x,) for x in (3, -2, 7, 0)]
    with ThreadPoolExecutor(max_workers=2) as ex:
        assert run_tasks(_square, tasks, ex) == run_tasks(_square, tasks) == [9, 4, 49, 0]


def test_a_task_too_large_is_refused_before_anything_runs():
    calls = []

    def fn(x):
        calls.append(x)
        return x

    def need(x):
        return (x * 2.0 ** 30, f"{x} GiB of things")

    with pytest.raises(TaskTooLarge, match=r"task \(5,\) needs about 5\.0 GiB for 5 GiB of things, "
                                           r"more than the 4\.0 GiB memory limit of the smallest worker \(w1\)"):
        run_tasks(fn, [(1,), (5,), (2,)], None, need=need, limit=(4.0 * 2 ** 30, "w1"))
    assert calls == []
    assert run_tasks(fn, [(1,), (3,)], None, need=need, limit=(4.0 * 2 ** 30, "w1")) == [1, 3]


def test_non_dask_executors_have_no_worker_limit():
    with ThreadPoolExecutor(max_workers=1) as ex:
        assert executor_memory_limit(ex) is None
    assert executor_memory_limit(None) is None


class _Recording:
    """An executor that records the order of submission and runs each call at once."""

    def __init__(self):
        self.submitted = []

    def submit(self, fn, *args):
        from concurrent.futures import Future

        self.submitted.append(args)
        f = Future()
        f.set_result(fn(*args))
        return f


def test_cost_submits_the_costliest_tasks_first_and_keeps_the_result_order():
    tasks = [(3,), (9,), (1,), (9,), (5,)]
    ex = _Recording()
    assert run_tasks(_square, tasks, ex, cost=lambda x: x) == [9, 81, 1, 81, 25]
    assert ex.submitted == [(9,), (9,), (5,), (3,), (1,)]
    ex = _Recording()
    run_tasks(_square, tasks, ex)
    assert ex.submitted == tasks  # no cost: submission in task order


_FAILED_CONNECT = r'''
import gc, socket, sys, threading
from attnrank_lite.engine import parallel
from distributed.utils import LoopRunner

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)


def serve():  # a peer that is not Dask: it answers with garbage bytes, so the handshake fails at once
    while True:
        try:
            c, _ = srv.accept()
        except OSError:
            return
        c.sendall(b"\xff" * 64)


threading.Thread(target=serve, daemon=True).start()
try:
    parallel._connect(f"tcp://127.0.0.1:{srv.getsockname()[1]}", 5.0)
except parallel.SchedulerUnreachable:
    pass
else:
    sys.exit("connected to a peer that is not Dask")
with LoopRunner._lock:  # as the next Client's start holds it
    gc.collect()
print("collected")
'''


def test_a_failed_connection_leaves_no_client_that_deadlocks_the_next_one():
    """A Client whose handshake failed, left to the garbage collector, closed itself in whichever thread
    collected; inside the next Client's start (which holds distributed's LoopRunner lock) that close
    waited for the lock for ever (a fresh-clone test run hung there). ``_connect`` closes it at once."""
    pytest.importorskip("distributed")
    proc = subprocess.run([sys.executable, "-c", _FAILED_CONNECT], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0 and proc.stdout.strip() == "collected", proc.stderr[-2000:]
