"""Independent tasks on a ``concurrent.futures.Executor`` (:func:`run_tasks`), results in submission
order: a plain loop (``executor=None``: the sequential code, byte-identical tables), a thread or
process pool, or Dask's ``Client.get_executor()`` (:func:`dask_executor`; ``dask``/``distributed``
imported only when used). Each task's memory estimate is compared with the smallest worker's limit
before anything is submitted (:class:`TaskTooLarge`)."""
from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import Executor, as_completed
from urllib.parse import urlsplit

from .progress import progress

__all__ = ["TaskTooLarge", "SchedulerUnreachable", "run_tasks", "executor_memory_limit", "dask_executor",
           "SCHEDULER_ENV", "CONNECT_TIMEOUT_S", "WORKER_BASE_BYTES", "check_scheduler_address", "max_local_workers",
           "executor_from_env"]

#: seconds a Dask scheduler has to answer (connection and handshake) before the connection is given up
CONNECT_TIMEOUT_S = 20.0
#: memory a local worker process needs before its first task (Python, numpy, scipy, distributed)
WORKER_BASE_BYTES = 300 * 2 ** 20
#: environment variable naming a running Dask scheduler (``tcp://HOST:PORT``); papermill kernels
#: inherit it from the command line
SCHEDULER_ENV = "ATTNRANK_SCHEDULER"
#: environment variables read by the BLAS/OpenMP libraries numpy, scipy and torch load
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: each of them set to 1, in every worker process started here
_ONE_THREAD = dict.fromkeys(THREAD_VARS, "1")


class TaskTooLarge(ValueError):
    """A task's memory estimate exceeds the smallest worker's memory limit (nothing was submitted)."""


class SchedulerUnreachable(OSError):
    """No Dask scheduler answered at the address within :data:`CONNECT_TIMEOUT_S`."""


def check_scheduler_address(address: str) -> str:
    """``address`` if it is ``tcp://HOST:PORT`` or ``tls://HOST:PORT`` (IPv6 hosts in brackets,
    port 1..65535); ``ValueError`` naming ``scheduler`` otherwise."""
    why = ""
    try:
        parts = urlsplit(str(address))
        port = parts.port
    except ValueError as exc:
        parts, port, why = None, None, str(exc)
    if (parts is None or parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None
            or not 1 <= port <= 65535 or parts.path not in ("", "/") or parts.query or parts.fragment):
        raise ValueError(f"scheduler must look like tcp://HOST:PORT (port 1..65535, IPv6 as tcp://[::1]:PORT); "
                         f"got {address!r}" + (f" ({why})" if why else ""))
    return str(address)


def max_local_workers() -> int:
    """Most local workers: at most the cores and the available memory at :data:`WORKER_BASE_BYTES` each."""
    import psutil

    cores = os.cpu_count() or 1
    by_memory = int(psutil.virtual_memory().available // WORKER_BASE_BYTES)
    return max(1, min(cores, by_memory))


def _connect(address: str, timeout_s: float):
    """``distributed.Client(address)``, given up after ``timeout_s`` seconds whatever the peer does (in
    a daemon thread: a silent or non-Dask peer raises :class:`SchedulerUnreachable`)."""
    from distributed import Client

    out: dict = {}

    def connect():
        try:
            out["client"] = Client(address, timeout=f"{timeout_s}s")
        except BaseException as exc:  # noqa: BLE001  (reported below, in the caller's thread)
            out["error"] = exc
            _close_failed_client(exc.__traceback__)

    thread = threading.Thread(target=connect, name="dask-connect", daemon=True)
    thread.start()
    thread.join(timeout_s + 5.0)
    if thread.is_alive():
        raise SchedulerUnreachable(f"no Dask scheduler answered at {address} within {timeout_s:g} s")
    if "error" in out:
        exc = out["error"]
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise exc
        raise SchedulerUnreachable(f"no Dask scheduler at {address} ({type(exc).__name__}: "
                                   f"{str(exc)[:200] or 'no message'})") from exc
    return out["client"]


def _close_failed_client(tb) -> None:
    """Close, in the calling thread, the ``distributed.Client`` whose constructor raised with traceback
    ``tb``. Left to the garbage collector, its ``__del__`` closes it in whichever thread collects, and
    when that thread is inside another Client's start (which holds distributed's ``LoopRunner`` lock,
    not reentrant), the close waits for that lock for ever."""
    from distributed import Client

    while tb is not None:
        client = tb.tb_frame.f_locals.get("self")
        if isinstance(client, Client):
            with contextlib.suppress(Exception):
                client.close(timeout=CONNECT_TIMEOUT_S)
            return
        tb = tb.tb_next


def format_bytes(b: float) -> str:
    """``b`` bytes in the largest binary unit it reaches (``1.5 GiB``), with one decimal; KiB below 1 MiB."""
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20)):
        if b >= size:
            return f"{b / size:.1f} {unit}"
    return f"{b / 1024:.0f} KiB"


def executor_memory_limit(executor) -> tuple[float, str] | None:
    """The smallest worker memory limit of a Dask executor as ``(bytes, worker address)``; None for
    other executors (they share this machine's memory) and for workers without a limit."""
    client = getattr(executor, "_client", None)  # the Client behind Client.get_executor()
    if client is None or not type(client).__module__.startswith("distributed"):
        return None
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    limits = [(float(w["memory_limit"]), addr) for addr, w in workers.items() if w.get("memory_limit")]
    return min(limits) if limits else None


def run_tasks(fn, tasks, executor: Executor | None = None, *, need=None, limit=None, on_done=None,
              desc: str = "", label=repr, cost=None) -> list:
    """``[fn(*t) for t in tasks]``, sequentially (``executor=None``) or on ``executor``, in submission
    order, with a progress bar labelled ``desc``.

    Parameters
    ----------
    fn : callable
        A module-level function (picklable by reference) returning plain data.
    tasks : sequence of tuple
    executor : concurrent.futures.Executor, optional
    need : callable, optional
        ``need(*t) -> (bytes, what)``, checked against ``limit`` (default
        :func:`executor_memory_limit`) before anything runs (else :class:`TaskTooLarge`).
    on_done : callable, optional
        ``on_done(i, result)`` here as each task finishes (completion order).
    desc : str
    label : callable
        ``label(t)`` names a task in the memory message.
    cost : callable, optional
        ``cost(*t)``, a relative run time: on an executor the costliest tasks are submitted first."""
    tasks = [tuple(t) for t in tasks]
    if need is not None:
        limit = executor_memory_limit(executor) if limit is None else limit
        if limit is not None:
            for t in tasks:
                b, what = need(*t)
                if b > limit[0]:
                    raise TaskTooLarge(
                        f"task {label(t)} needs about {format_bytes(b)} for {what}, more than the "
                        f"{format_bytes(limit[0])} memory limit of the smallest worker ({limit[1]}); "
                        "give the workers more memory or lower n/beta")
    futures = {}
    if executor is None:
        done = ((i, fn(*t)) for i, t in enumerate(tasks))
    else:
        order = range(len(tasks))
        if cost is not None:
            order = sorted(order, key=lambda i: -cost(*tasks[i]))  # stable: ties keep task order
        futures = {executor.submit(fn, *tasks[i]): i for i in order}
        done = ((futures[fut], fut.result()) for fut in as_completed(futures))
    out = [None] * len(tasks)
    try:
        for i, result in progress(done, desc=desc, total=len(tasks)):
            out[i] = result
            if on_done is not None:
                on_done(i, result)
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
    return out


@contextlib.contextmanager
def dask_executor(workers: int | None = None, scheduler: str | None = None, memory_limit="auto"):
    """A Dask executor (``Client.get_executor(pure=False)``) for the duration of a ``with`` block: a
    ``LocalCluster`` of ``workers`` processes (one thread and one BLAS thread each; per-worker
    ``memory_limit``), or a running scheduler at ``tcp://HOST:PORT`` (exclusive with ``workers``)."""
    if (workers is None) == (scheduler is None):
        raise ValueError("give exactly one of workers= and scheduler=")
    if workers is not None and (isinstance(workers, bool) or int(workers) != workers or workers < 1):
        raise ValueError(f"workers must be a positive whole number, got {workers!r}")
    if workers is not None and workers > max_local_workers():
        raise ValueError(f"workers must be at most {max_local_workers()} on this machine (its cores, and "
                         f"{WORKER_BASE_BYTES // 2 ** 20} MiB of available memory per worker); got {workers!r}")
    if scheduler is not None:
        check_scheduler_address(scheduler)
    import dask
    from distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if workers is not None:
            stack.enter_context(dask.config.set({"distributed.nanny.pre-spawn-environ": _ONE_THREAD}))
            cluster = stack.enter_context(LocalCluster(
                n_workers=int(workers), threads_per_worker=1, processes=True,
                memory_limit=memory_limit, dashboard_address=":0", env=dict(_ONE_THREAD)))
            client = stack.enter_context(Client(cluster))
        else:
            client = stack.enter_context(_connect(scheduler, CONNECT_TIMEOUT_S))
        yield client.get_executor(pure=False)


def executor_from_env(workers: int | None = None, scheduler: str | None = None):
    """:func:`dask_executor` for ``workers`` / ``scheduler`` / ``$ATTNRANK_SCHEDULER``, else ``None``."""
    scheduler = scheduler or (None if workers else os.environ.get(SCHEDULER_ENV) or None)
    if workers is None and scheduler is None:
        return contextlib.nullcontext(None)
    return dask_executor(workers=workers, scheduler=scheduler)
