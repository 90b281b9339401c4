"""``python -m attnrank_lite {list, run, build, sweep, verify}``: every failure one line ``error: ...``
on standard error with its exit status (:data:`EXIT`; ``--debug`` adds the traceback); SIGINT and
SIGTERM stop the run, its partial folder removed and the previous outputs kept (exit 130, 143)."""
from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import traceback

from . import sweep_cli, verify_cli
from .chapters import all_chapters
from .errors import BuildFailed, CellTimeout, KernelDied, MissingExtra, OutputError, RunFailed, WorkerDied
from .memory import TooLarge
from .runtime import DEFAULT_MAX_MINUTES, TooSlow, check_runtime, format_minutes
from .spec import PROFILES, ParameterError, parse_value

__all__ = ["main", "EXIT", "Terminated"]

#: exit status of each kind of failure
EXIT = {"ok": 0, "cell failed": 1, "bad parameter": 2, "output folder refused": 3, "too large for this machine": 4,
        "cell timeout": 5, "kernel died": 6, "site build failed": 7, "file system error": 8, "internal error": 9,
        "estimated run time too long": 10, "certificate not verified": verify_cli.NOT_VERIFIED,
        "certificate file refused": verify_cli.REFUSED, "missing extra": 13, "worker died": 14,
        "interrupted (SIGINT)": 130, "terminated (SIGTERM)": 143}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every cleanup path runs."""


#: the failures with a one-line message of their own, most specific first
FAILURES = ((TooLarge, "too large for this machine"), (TooSlow, "estimated run time too long"),
            (ParameterError, "bad parameter"), (OutputError, "output folder refused"), (CellTimeout, "cell timeout"),
            (KernelDied, "kernel died"), (WorkerDied, "worker died"), (RunFailed, "cell failed"),
            (BuildFailed, "site build failed"),
            (sweep_cli.StoreFileError, "file system error"), (MissingExtra, "missing extra"))

_signalled: list[int] = []


def _on_signal(signum, frame):
    if _signalled:  # cleanup of the first signal is under way: do not interrupt it
        return
    _signalled.append(signum)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _cmd_list(args) -> int:
    for spec in all_chapters():
        print(f"{spec.key}  {spec.notebook}  —  {spec.title}")
        for p in spec.params:
            prof = "".join(f"  [{name}: {spec.profiles[name][p.name]!r}]" for name in ("quick", "paper")
                           if p.name in spec.profiles.get(name, {}))
            print(f"    {p.name} = {p.default!r}{prof}\n        {p.help} Allowed: {p.allowed()}.")
    return 0


#: the top-level modules of the ``book`` extra that ``run`` and ``build`` import
BOOK_EXTRA = ("papermill", "nbformat", "nbclient", "jupyter_client", "ipykernel", "yaml", "filelock", "markdown_it",
              "mdit_py_plugins")


def _book_machinery(command: str):
    """:mod:`.runner` and :mod:`.build`, or :class:`MissingExtra` naming the missing ``book`` package."""
    try:
        from . import build, runner
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in BOOK_EXTRA:
            raise
        raise MissingExtra(f"'{command}' needs the book extra ({top} is not installed): "
                           'pip install "attnrank-lite[book]"') from None
    return runner, build


def _cmd_run(args) -> int:
    runner = _book_machinery("run")[0]
    overrides = {}
    for name, value in args.param or []:
        if name in overrides:
            raise ParameterError(f"parameter {name!r} given twice")
        overrides[name] = parse_value(value)
    spec, values = runner.resolve_parameters(args.notebook, overrides, args.profile)  # fails before any work
    print(f"{spec.key}: estimated run time {format_minutes(check_runtime(spec, values, args.max_minutes))}",
          flush=True)
    args.where = f"while running {spec.key}; the previous outputs in {args.output} are unchanged"
    rec = runner.run_chapter(spec.key, overrides, args.profile, args.output, timeout=args.timeout,
                             progress_bar=sys.stderr is not None and sys.stderr.isatty())  # papermill's cell bar
    folder = os.path.join(args.output, spec.key)
    print(f"{spec.notebook}: executed in {rec['seconds']:.1f} s -> {os.path.join(folder, spec.notebook)}")
    for r in rec["results"]:
        print(f"  table {os.path.join(folder, r)}")
    return 0


def _cmd_build(args) -> int:
    args.where = f"while building the site; the previous site in {args.output}/html is unchanged"
    _book_machinery("build")[1].build_book(
        profile=args.profile, out=args.output, warnings_as_errors=not args.allow_warnings, jobs=args.jobs,
        cache=False if args.no_cache else (args.cache or True), max_minutes=args.max_minutes, student=args.student,
        pdf=args.pdf or args.pdf_api, pdf_api=args.pdf_api)
    return 0


def _number(kind, low: float, what: str, strict: bool):
    """An argparse type: a number of ``kind`` above ``low`` (``strict``) or at least ``low``."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}; got {text!r}") from None
        if not (value > low if strict else value >= low):
            raise argparse.ArgumentTypeError(f"must be {what}; got {text}")
        return value
    return parse


class _OneLineParser(argparse.ArgumentParser):
    """argparse's errors as one line naming the parameter, with a hint (not the usage block), exit 2."""

    def error(self, message):
        message = re.sub(r"^argument ([-\w/]+):", r"parameter '\1':", message)
        self.exit(EXIT["bad parameter"], f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    common = _OneLineParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show the full traceback of a failure")
    guard = _OneLineParser(add_help=False)
    guard.add_argument("--max-minutes", type=_number(float, 0, "0 (no limit) or a positive number of minutes", False),
                       default=DEFAULT_MAX_MINUTES,
                       help="refuse a chapter whose estimated run time is longer (default 60; 0: no limit)")
    guard.add_argument("--profile", choices=PROFILES, default="book")
    parser = _OneLineParser(prog="python -m attnrank_lite", parents=[common],
                            description="Run the attnrank book's chapters and build the site.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", parents=[common], help="chapters and their parameters with defaults")
    run = sub.add_parser("run", parents=[common, guard], help="execute one chapter notebook with papermill")
    run.add_argument("notebook", help="chapter key (ch02), number (2) or notebook name")
    run.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                     help="set a parameter (VALUE is a Python/JSON literal or a plain string)")
    run.add_argument("-o", "--output", default="runs", help="output folder (default runs); the run goes to OUTPUT/chNN")
    run.add_argument("--timeout", type=_number(int, 0, "a positive whole number of seconds", True), default=3600,
                     help="per-cell timeout in seconds, a positive whole number (default 3600)")
    build = sub.add_parser("build", parents=[common, guard], help="execute every chapter and build the website")
    build.add_argument("-o", "--output", default="_build", help="output folder; the site goes to OUTPUT/html")
    build.add_argument("--allow-warnings", action="store_true", help="do not fail on Sphinx warnings")
    build.add_argument("--jobs", "-j", type=_number(int, 1, "a whole number, at least 1", False), default=None,
                       help="chapters executed at once, within the memory available (default: the number of cores)")
    build.add_argument("--no-cache", action="store_true", help="execute every chapter; reuse and store nothing")
    build.add_argument("--cache", default=None, metavar="DIR",
                       help="the cache of executed chapters (default: $ATTNRANK_CACHE or .attnrank-cache/)")
    build.add_argument("--student", action="store_true", help="the same site without the exercises' solutions")
    build.add_argument("--pdf", action="store_true",
                       help="also the whole book as one PDF, OUTPUT/html/attnrank-book.pdf (without the API reference)")
    build.add_argument("--pdf-api", action="store_true", help="the PDF as --pdf, keeping the API reference")
    sweep_cli.add_parser(sub, common)
    verify_cli.add_parser(sub, common)
    return parser


def _fail(args, kind: str, message: str) -> int:
    if getattr(args, "debug", False):
        traceback.print_exc()
        if log := getattr(sys.exc_info()[1], "kernel_log", ""):
            print("--- the notebook kernel's standard error (last lines) ---\n" + log, file=sys.stderr)
    print(f"error: {message}", file=sys.stderr)
    return EXIT[kind]


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    args.where = ""
    _signalled.clear()
    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return {"list": _cmd_list, "run": _cmd_run, "build": _cmd_build,
                "sweep": sweep_cli.cmd_sweep, "verify": verify_cli.cmd_verify}[args.command](args)
    except KeyboardInterrupt as exc:
        kind = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted (SIGINT)"
        return _fail(args, kind, f"{kind} {args.where}".rstrip())
    except BrokenPipeError:  # e.g. `list | head`: the reader has gone, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # every failure becomes one line: a known kind, a file system error, or internal
        kind = next((k for cls, k in FAILURES if isinstance(exc, cls)), None)
        if kind == "cell failed":
            return _fail(args, kind, f"{exc}; nothing was written (rerun with --debug for the traceback)")
        if kind is not None:
            return _fail(args, kind, str(exc))
        if isinstance(exc, OSError):
            return _fail(args, "file system error", f"{exc.strerror or exc} ({exc.filename or 'no file name'}) "
                         f"{args.where}; check free disk space and permissions".replace("  ", " "))
        return _fail(args, "internal error", f"{type(exc).__name__}: {exc} {args.where}; "
                     "rerun with --debug for the traceback and report it")
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
