"""``python -m attnrank_lite sweep``: the spherical law at scale in a resumable SQLite store
(``--store``, each row with its certificate; ``--workers`` or ``--scheduler`` for Dask), its law table
and figure (``--report``) and every row rechecked (``--verify``; exit 11 when one fails)."""
from __future__ import annotations

import os
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ..engine import parallel
from .errors import WorkerDied
from .memory import TooLarge, available_memory
from .spec import ParameterError
from .verify_cli import NOT_VERIFIED, independent_opinion

__all__ = ["add_parser", "cmd_sweep", "StoreFileError", "verify_store", "refuse_unverified", "local_worker_memory",
           "LOCAL_WORKER_MEMORY"]

#: Dask settings of the local workers of ``--workers N``: none is paused, spilled or restarted at a
#: share of its memory limit. That limit (this machine's memory split evenly) only decides which rows
#: may start; a running row may pass it while the other workers use less (the committed store's
#: d = 6, beta = 16 rows take about 15 GB of a 24 GB machine), its arrays cannot be spilled, and a
#: restart would lose it. The machine's memory is the limit: a worker the operating system kills
#: ends the sweep with exit status 14.
LOCAL_WORKER_MEMORY = {f"distributed.worker.memory.{k}": False for k in ("target", "spill", "pause", "terminate")}


class StoreFileError(Exception):
    """The file system refused the store (read-only, full disk, I/O error): a file-system error."""


@contextmanager
def _store_errors(parameter: str, note: str = ""):
    """A store error of ``parameter`` as one line: :class:`StoreFileError` when the file system refused,
    else :class:`ParameterError`."""
    from ..laws.law_store import StoreError

    try:
        yield
    except (StoreError, FileNotFoundError) as exc:
        what = f"parameter '{parameter}': {exc}{note}"
        raise (StoreFileError if getattr(exc, "filesystem", False) else ParameterError)(what) from None


def add_parser(sub, common) -> None:
    """Register the ``sweep`` subcommand."""
    p = sub.add_parser("sweep", parents=[common],
                       help="the spherical law for several d, stored in SQLite (resumable), or its report")
    p.add_argument("--d", nargs="+", type=int, metavar="D", help="dimensions (points on S^(d-1))")
    p.add_argument("--n", type=int, metavar="N", help="points per sphere")
    p.add_argument("--beta", nargs="+", type=float, metavar="BETA", help="inverse temperatures (at least two)")
    p.add_argument("--eps", nargs="+", type=float, metavar="EPS", help="error levels in (0, 1)")
    p.add_argument("--points", default="well-spread", help="point set: well-spread (default) or random")
    p.add_argument("--seed", type=int, default=0, help="seed of the point set (default 0)")
    p.add_argument("--store", metavar="FILE", help="SQLite store of the rows (created if missing)")
    p.add_argument("--workers", type=int, metavar="N", help="start a local Dask cluster of N worker processes "
                   "(no Dask memory thresholds: this machine's memory is the limit)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help=f"tcp://HOST:PORT of a running dask scheduler (default: ${parallel.SCHEDULER_ENV})")
    p.add_argument("--report", metavar="FILE", help="print the law table of a store and write its figure")
    p.add_argument("--figure", metavar="FILE", help="figure path of --report (default: FILE_laws.png)")
    p.add_argument("--verify", metavar="FILE",
                   help="recheck every stored row from its stored certificate (exit 11 if any fails)")
    p.add_argument("--independent", action="store_true",
                   help="with --verify: also recheck each row with the independent checker; they must agree")


def _executor(args):
    """``(workers, scheduler)`` checked before any work, naming the parameter or variable."""
    workers = args.workers
    if workers is not None:
        if args.scheduler:
            raise ParameterError("parameter '--workers' and '--scheduler' exclude each other")
        if not 1 <= workers <= (most := parallel.max_local_workers()):
            raise ParameterError(f"parameter '--workers' must be at least 1 and at most {most} on this machine "
                                 f"(its cores, and {parallel.WORKER_BASE_BYTES // 2 ** 20} MiB of available "
                                 f"memory per worker); got {workers}")
    scheduler = args.scheduler or (None if workers else os.environ.get(parallel.SCHEDULER_ENV) or None)
    if scheduler is not None:
        try:
            parallel.check_scheduler_address(scheduler)
        except ValueError as exc:
            name = "parameter '--scheduler'" if args.scheduler else f"environment variable {parallel.SCHEDULER_ENV}"
            raise ParameterError(f"{name}: {exc}") from None
    return workers, scheduler


@contextmanager
def local_worker_memory():
    """:data:`LOCAL_WORKER_MEMORY` set while local Dask workers are started and run."""
    import dask

    with dask.config.set(LOCAL_WORKER_MEMORY):
        yield


def cmd_sweep(args) -> int:
    """The ``sweep`` subcommand; failures raise the exceptions that ``cli.main`` maps to exits."""
    from ..laws import law_store, scale

    if args.verify:
        if args.store or args.d or args.report:
            raise ParameterError("parameter '--verify' is used alone; not with --store, --d or --report")
        args.where = f"while rechecking {args.verify}"
        with _store_errors("--verify"):
            return verify_store(args.verify, independent=args.independent)
    if args.independent:
        raise ParameterError("parameter '--independent' goes with --verify")
    if args.report:
        if args.store or args.d:
            raise ParameterError("parameter '--report' is used alone (with --figure); not with --store or --d")
        args.where = f"while reading {args.report}"
        return _report(args.report, args.figure)
    if not args.store:
        raise ParameterError("parameter '--store' is required (or --report FILE)")
    if missing := next((k for k in ("d", "n", "beta", "eps") if getattr(args, k) is None), None):
        raise ParameterError(f"parameter '--{missing}' is required")
    ds, n, betas, eps, seed = args.d, args.n, args.beta, args.eps, args.seed
    try:
        scale.check_sweep_parameters(ds, n, betas, eps, args.points, seed)
    except ValueError as exc:  # name the parameter as it is typed
        raise ParameterError(str(exc).replace("parameter '", "parameter '--", 1)) from None
    workers, scheduler = _executor(args)
    from ..laws.report import sweep_command  # the sweep's command line as typed (store path as given)

    command = sweep_command(ds, n, betas, eps, args.points, seed, store=args.store) + (
        f" --workers {workers}" if workers else f" --scheduler {args.scheduler}" if args.scheduler else "")
    with _store_errors("--store"):  # before any worker starts: a store that cannot be written fails at once
        law_store.open_store(args.store).close()
    args.where = f"during the sweep; the rows committed to {args.store} are kept (rerun to resume)"
    t0 = time.perf_counter()
    with ExitStack() as ctx:
        try:
            if workers:
                ctx.enter_context(local_worker_memory())
            executor = ctx.enter_context(parallel.executor_from_env(workers=workers, scheduler=scheduler))
        except parallel.SchedulerUnreachable as exc:  # nothing, or not Dask, at that address
            raise ParameterError(f"parameter '--scheduler': {exc}") from None
        except OSError as exc:
            raise ParameterError(f"parameter '--scheduler': no Dask scheduler answered at {scheduler} "
                                 f"({exc})") from None
        where = ("this process" if executor is None else
                 f"a local Dask cluster of {workers} workers" if workers else f"the Dask scheduler {scheduler}")
        avail = available_memory() if executor is None else None
        per_worker = None if executor is None else parallel.executor_memory_limit(executor)
        with _store_errors("--store", "; the rows committed before it are kept (rerun to resume)"):
            try:
                res = scale.run_sweep(args.store, ds, n, betas, eps, args.points, seed, executor=executor,
                                      limit=None if avail is None else (avail, "this machine"),
                                      command=command, executor_name=where)
            except parallel.TaskTooLarge as exc:
                raise TooLarge(str(exc)) from None
            except Exception as exc:
                if type(exc).__name__ == "KilledWorker":  # distributed's, imported only with an executor
                    raise WorkerDied(_worker_died(exc, per_worker, workers, args.store)) from None
                raise
    elsewhere = (f", {res['elsewhere']} left to another sweep running on this store (rerun after it ends)"
                 if res["elsewhere"] else "")
    print(f"{res['computed']} rows computed, {res['skipped']} already stored{elsewhere}, code {res['code_hash']}, "
          f"{time.perf_counter() - t0:.1f} s -> {args.store}")
    return 0


def _worker_died(exc, limit, workers, store) -> str:
    """The one line of a sweep whose row outlived its workers (``distributed.KilledWorker``); ``limit``:
    :func:`~attnrank_lite.engine.parallel.executor_memory_limit` before the run."""
    per = f" ({parallel.format_bytes(limit[0])} per worker here)" if limit else ""
    tries = getattr(exc, "allowed_failures", 0) + 1
    fewer = ("rerun with fewer --workers (fewer rows then share this machine's memory), "
             if workers and workers > 1 else "rerun ")
    why = ("the operating system kills a process when this machine's memory runs out (local workers are "
           f"not restarted at a memory threshold: their limit{per} only decides which rows may start)" if workers else
           f"a worker's nanny restarts it when its memory passes its threshold (Dask's default: 95% of its "
           f"limit){per}, and the operating system kills a process when memory runs out")
    return (f"a Dask worker died computing a row of the sweep ({tries} attempt{'s' if tries > 1 else ''}): "
            f"{why}; the rows committed to {store} are kept: "
            f"{fewer}on a machine with more memory, or with lower --n or --beta, to compute the rest")


def _report(store, figure) -> int:
    """``sweep --report``: the rows shown rechecked (:func:`refuse_unverified`), the law table printed,
    the figure written."""
    from ..laws import report as law_report  # here, not at the top: every command line starts 1 s faster

    rechecked: list[str] = []
    with _store_errors("--report"):
        if status := refuse_unverified(store, log=rechecked.append):
            return status
        try:
            report = law_report.stored_report(store)
        except ValueError as exc:  # no (d, eps) with two betas
            raise ParameterError(f"parameter '--report': {exc}") from None
    print(*law_report.report_lines(report, store), sep="\n")
    path = Path(figure) if figure else Path(store).with_name(Path(store).stem + "_laws.png")
    report["figure"].savefig(path, dpi=120)
    print(f"figure -> {path}", *rechecked, sep="\n")
    return 0


def _err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def verify_store(store, log=print, err=_err, independent: bool = False) -> int:
    """``sweep --verify``: every row rechecked from its certificate (``independent``: the checker must
    agree); a line per failing row to ``err``, a summary to ``log``; 0 or NOT_VERIFIED (11)."""
    from ..laws import law_store
    from ..laws.row_certificates import recheck_rows

    rows = law_store.read_store(store, certificates=True)
    if rows.empty:
        raise ParameterError(f"parameter '--verify': the store {store} holds no rows")
    t0 = time.perf_counter()
    results = recheck_rows(rows, on_row=lambda label, v: None if v.ok else err(f"error: {label}: {v.line}"),
                           second=(lambda path, ok: independent_opinion(path, ok)[1]) if independent else None)
    failed = int((~results["ok"]).sum())
    missing = int((results["blob_bytes"] == 0).sum())
    runs = law_store.read_runs(store)
    command = f" `{runs.iloc[-1].command}`" if len(runs) else ""
    note = ("" if law_store.has_certificates(store)
            else f" (the store keeps no certificates: rerun its command{command})")
    also = " (and by the independent checker)" if independent else ""
    log(f"{store}: {len(results) - failed} of {len(results)} rows verified from their certificates{also}, {failed} "
        f"failed ({missing} without a certificate){note}, {time.perf_counter() - t0:.1f} s; certificates "
        f"{int(results['blob_bytes'].sum()):,} bytes")
    return NOT_VERIFIED if failed else 0


def refuse_unverified(store, log=print, err=_err) -> int:
    """Recheck the rows ``sweep --report`` shows: 11 (a line per failing row) when one fails or the
    store keeps no certificates, else 0."""
    from ..laws import report

    try:
        rows, run, _ = report.stored_rows(store)
    except ValueError as exc:  # no rows: the report names it
        raise ParameterError(f"parameter '--report': {exc}") from None
    check = report.recheck_stored(store, rows, prefix="report")
    if not check["has_certificates"]:
        err(f"error: {store}: refused: {check['line']} (`{run['command']}`)")
        return NOT_VERIFIED
    for line in check["failures"]:
        err(f"error: {line}")
    if check["passed"] < check["checked"]:
        err(f"error: {store}: refused: {check['checked'] - check['passed']} of {check['checked']} rows fail their "
            "certificates; no law is fitted on them (sweep --verify lists every failing row)")
        return NOT_VERIFIED
    log(check["line"])
    return 0
