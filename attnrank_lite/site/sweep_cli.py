"""``python -m attnrank_lite sweep``: the spherical law at scale, stored in SQLite, resumable.

Compute (each finished row committed to the store at once; a rerun skips what is stored)::

    python -m attnrank_lite sweep --d 2 3 4 5 6 --n 20000 --beta 4 8 16 32 64 --eps 0.1 0.25 \\
        --store laws.sqlite [--workers N | --scheduler tcp://HOST:PORT]

Report (the store's command, the law table judged against (d-1)/2 by the book's one rule with
capped rows left out, the width trend, and the log-log figure)::

    python -m attnrank_lite sweep --report laws.sqlite [--figure laws.png]

Each row is stored with its certificate (:mod:`attnrank_lite.laws.row_certificates`); a rerun
recomputes a stored row whose certificate is missing or disagrees with it. ``--report`` first
rechecks the rows it shows from their certificates and refuses (exit 11) when one fails.
Recheck every stored row (one line per failing row, a summary; exit 11 on any failure)::

    python -m attnrank_lite sweep --verify laws.sqlite [--independent]

(``--independent``: each row also by :mod:`attnrank_lite.checker`, which must agree.)

Without ``--workers`` and ``--scheduler`` the environment variable ``ATTNRANK_SCHEDULER``
names the scheduler; when it is unset too, the rows are computed in this process.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from ..engine.parallel import (
    SCHEDULER_ENV,
    WORKER_BASE_BYTES,
    SchedulerUnreachable,
    TaskTooLarge,
    check_scheduler_address,
    executor_from_env,
    max_local_workers,
)
from .memory import TooLarge, available_memory
from .spec import ParameterError

__all__ = ["add_parser", "cmd_sweep", "store_report", "StoreFileError", "store_failure", "verify_store",
           "refuse_unverified"]


class StoreFileError(Exception):
    """The file system refused the store (read-only, full disk, I/O error): ``cli.main`` exits
    with the status of a file-system error, in one line naming the parameter."""


def store_failure(exc, parameter: str, note: str = "") -> Exception:
    """The command line's exception for a :class:`attnrank_lite.laws.law_store.StoreError` (or a
    missing file) of ``parameter`` (``'--store'`` or ``'--report'``): a :class:`StoreFileError`
    when the file system refused, a :class:`~attnrank_lite.site.spec.ParameterError` otherwise;
    ``note`` is appended to the one line."""
    what = f"parameter '{parameter}': {exc}{note}"
    return StoreFileError(what) if getattr(exc, "filesystem", False) else ParameterError(what)


def add_parser(sub, common) -> None:
    """Register the ``sweep`` subcommand (all values parsed here, one-line errors)."""
    p = sub.add_parser("sweep", parents=[common],
                       help="the spherical law for several d, stored in SQLite (resumable), or its report")
    p.add_argument("--d", nargs="+", metavar="D", help="dimensions (points on S^(d-1))")
    p.add_argument("--n", metavar="N", help="points per sphere")
    p.add_argument("--beta", nargs="+", metavar="BETA", help="inverse temperatures (at least two)")
    p.add_argument("--eps", nargs="+", metavar="EPS", help="error levels in (0, 1)")
    p.add_argument("--points", default="well-spread", help="point set: well-spread (default) or random")
    p.add_argument("--seed", default="0", help="seed of the point set (default 0)")
    p.add_argument("--store", metavar="FILE", help="SQLite store of the rows (created if missing)")
    p.add_argument("--workers", metavar="N", help="start a local Dask cluster of N worker processes")
    p.add_argument("--scheduler", metavar="ADDR",
                   help=f"tcp://HOST:PORT of a running dask scheduler (default: ${SCHEDULER_ENV})")
    p.add_argument("--report", metavar="FILE", help="print the law table of a store and write its figure")
    p.add_argument("--figure", metavar="FILE", help="figure path of --report (default: FILE_laws.png)")
    p.add_argument("--verify", metavar="FILE",
                   help="recheck every stored row from its stored certificate (exit 11 if any fails)")
    p.add_argument("--independent", action="store_true",
                   help="with --verify: also recheck each row with the independent checker; they must agree")


def _numbers(name: str, texts, kind):
    if not texts:
        raise ParameterError(f"parameter '--{name}' is required")
    try:
        vals = [kind(t) for t in texts]
    except ValueError:
        raise ParameterError(f"parameter '--{name}' must be {'whole ' if kind is int else ''}numbers; "
                             f"got {' '.join(texts)}") from None
    return vals


def _executor(args):
    workers = None
    if args.workers is not None:
        workers, = _numbers("workers", [args.workers], int)
        if workers < 1:
            raise ParameterError(f"parameter '--workers' must be at least 1; got {workers}")
        if args.scheduler:
            raise ParameterError("parameter '--workers' and '--scheduler' exclude each other")
        if workers > max_local_workers():
            raise ParameterError(f"parameter '--workers' must be at most {max_local_workers()} on this machine "
                                 f"(its cores, and {WORKER_BASE_BYTES // 2 ** 20} MiB of available memory per "
                                 f"worker); got {workers}")
    scheduler = args.scheduler or (None if workers else os.environ.get(SCHEDULER_ENV) or None)
    if scheduler is not None:
        name = "parameter '--scheduler'" if args.scheduler else f"environment variable {SCHEDULER_ENV}"
        try:
            check_scheduler_address(scheduler)
        except ValueError as exc:
            raise ParameterError(f"{name}: {exc}") from None
    return workers, scheduler


def store_report(store, figure=None, log=print) -> Path:
    """Print the store's summary, its command and its law table judged by the book's rule
    (:func:`attnrank_lite.laws.report.report_lines`); write the figure. Returns the
    figure path."""
    from ..laws import report  # here, not at the top: every command line starts 1 s faster
    from ..laws.law_store import StoreError

    try:
        rep = report.stored_report(store)
    except (StoreError, FileNotFoundError) as exc:  # no file, not a sweep store, unreadable
        raise store_failure(exc, "--report") from None
    except ValueError as exc:  # no rows, or no (d, eps) with two betas
        raise ParameterError(f"parameter '--report': {exc}") from None
    for line in report.report_lines(rep, store):
        log(line)
    path = Path(figure) if figure else Path(store).with_name(Path(store).stem + "_laws.png")
    rep["figure"].savefig(path, dpi=120)
    log(f"figure -> {path}")
    return path


def _command(args) -> str:
    """The sweep's command line as it would be typed (store path as given)."""
    parts = ["python -m attnrank_lite sweep", "--d", *args.d, "--n", args.n, "--beta", *args.beta,
             "--eps", *args.eps]
    if args.points != "well-spread":
        parts += ["--points", args.points]
    if str(args.seed) != "0":
        parts += ["--seed", args.seed]
    parts += ["--store", args.store]
    if args.workers:
        parts += ["--workers", args.workers]
    elif args.scheduler:
        parts += ["--scheduler", args.scheduler]
    return " ".join(map(str, parts))


def cmd_sweep(args) -> int:
    """The ``sweep`` subcommand; failures raise the exceptions that ``cli.main`` maps to exits."""
    from ..laws import scale

    if args.verify:
        if args.store or args.d or args.report:
            raise ParameterError("parameter '--verify' is used alone; not with --store, --d or --report")
        args.where = f"while rechecking {args.verify}"
        from ..laws.law_store import StoreError

        try:
            return verify_store(args.verify, independent=args.independent)
        except (StoreError, FileNotFoundError) as exc:  # no file, not a sweep store, unreadable
            raise store_failure(exc, "--verify") from None
    if args.independent:
        raise ParameterError("parameter '--independent' goes with --verify")
    if args.report:
        if args.store or args.d:
            raise ParameterError("parameter '--report' is used alone (with --figure); not with --store or --d")
        args.where = f"while reading {args.report}"
        rechecked: list[str] = []
        from ..laws.law_store import StoreError

        try:
            status = refuse_unverified(args.report, log=rechecked.append)
        except (StoreError, FileNotFoundError) as exc:  # no file, not a sweep store, unreadable
            raise store_failure(exc, "--report") from None
        if status:
            return status
        store_report(args.report, args.figure)
        print(*rechecked, sep="\n")
        return 0
    if not args.store:
        raise ParameterError("parameter '--store' is required (or --report FILE)")
    ds = _numbers("d", args.d, int)
    n, = _numbers("n", [args.n] if args.n else None, int)
    betas = _numbers("beta", args.beta, float)
    eps = _numbers("eps", args.eps, float)
    seed, = _numbers("seed", [args.seed], int)
    try:
        scale.check_sweep_parameters(ds, n, betas, eps, args.points, seed)
    except ValueError as exc:  # name the parameter as it is typed
        raise ParameterError(str(exc).replace("parameter '", "parameter '--", 1)) from None
    workers, scheduler = _executor(args)
    from ..laws import law_store

    try:  # before any worker starts: a store that cannot be written fails at once
        law_store.open_store(args.store).close()
    except law_store.StoreError as exc:
        raise store_failure(exc, "--store") from None
    args.where = f"during the sweep; the rows committed to {args.store} are kept (rerun to resume)"
    t0 = time.perf_counter()
    try:
        ctx = executor_from_env(workers=workers, scheduler=scheduler)
        executor = ctx.__enter__()
    except SchedulerUnreachable as exc:  # nothing, or not Dask, at that address
        raise ParameterError(f"parameter '--scheduler': {exc}") from None
    except OSError as exc:
        raise ParameterError(f"parameter '--scheduler': no Dask scheduler answered at {scheduler} ({exc})") from None
    try:
        limit = None
        where = ("this process" if executor is None else
                 f"a local Dask cluster of {workers} workers" if workers else f"the Dask scheduler {scheduler}")
        if executor is None:
            avail = available_memory()
            limit = None if avail is None else (avail, "this machine")
        try:
            res = scale.run_sweep(args.store, ds, n, betas, eps, args.points, seed, executor=executor,
                                  limit=limit, command=_command(args), executor_name=where)
        except TaskTooLarge as exc:
            raise TooLarge(str(exc)) from None
        except law_store.StoreError as exc:
            raise store_failure(exc, "--store", "; the rows committed before it are kept (rerun to resume)"
                                ) from None
    finally:
        ctx.__exit__(None, None, None)
    elsewhere = (f", {res['elsewhere']} left to another sweep running on this store (rerun after it ends)"
                 if res["elsewhere"] else "")
    print(f"{res['computed']} rows computed, {res['skipped']} already stored{elsewhere}, code {res['code_hash']}, "
          f"{time.perf_counter() - t0:.1f} s -> {args.store}")
    return 0


def verify_store(store, log=print, err=None, independent: bool = False) -> int:
    """``sweep --verify STORE``: recheck every stored row (all code hashes) from its certificate.

    ``independent``: each row's rebuilt certificate file is also checked by
    :mod:`attnrank_lite.checker`, and a row on which the two disagree (or that the checker
    refuses) fails.

    One line per failing row on standard error (``error: d=3 n=200 beta=8 eps=0.25 well-spread
    seed=0 [1, 1]: not verified: ...``; a row without a certificate fails), then one summary
    line on standard output. Returns 0 when every row passed, else
    :data:`attnrank_lite.site.verify_cli.NOT_VERIFIED` (11).
    """
    import sys

    from ..laws import law_store
    from ..laws.row_certificates import recheck_rows
    from .verify_cli import NOT_VERIFIED

    err = err or (lambda line: print(line, file=sys.stderr, flush=True))
    rows = law_store.read_store(store, certificates=True)
    if rows.empty:
        raise ParameterError(f"parameter '--verify': the store {store} holds no rows")
    t0 = time.perf_counter()
    results = recheck_rows(rows, on_row=lambda label, v: None if v.ok else err(f"error: {label}: {v.line}"),
                           second=_independent_opinion if independent else None)
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


def refuse_unverified(store, log=print, err=None) -> int:
    """Before ``sweep --report`` fits anything: recheck the rows it shows
    (:func:`attnrank_lite.laws.report.recheck_stored`) and refuse (one line per failing
    row, exit 11) when a row fails or the store keeps no certificates. Returns 0 otherwise."""
    import sys

    from ..laws import report
    from .verify_cli import NOT_VERIFIED

    err = err or (lambda line: print(line, file=sys.stderr, flush=True))
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


def _independent_opinion(path, ok: bool) -> str:
    """``""`` when :func:`attnrank_lite.checker.check_file` agrees with ``verify``'s verdict
    ``ok`` on the file at ``path``, else one line saying how they differ."""
    from ..checker import check_file

    try:
        report = check_file(path)
    except ValueError as exc:
        return f"refused by the independent checker: {exc}"
    if report.ok != ok:
        return (f"the independent checker disagrees with verify (verify: {'verified' if ok else 'not verified'}, "
                f"checker: {'verified' if report.ok else report.line})")
    return ""
