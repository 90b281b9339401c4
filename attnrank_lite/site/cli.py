"""Command line: ``python -m attnrank_lite {list, run, build}``."""
from __future__ import annotations

import argparse
import os
import sys

from ..progress import terminal_device
from .build import build_book
from .chapters import all_chapters
from .runner import RunFailed, resolve_parameters, run_chapter
from .spec import PROFILES, ParameterError, parse_value

__all__ = ["main"]


def _cmd_list(args) -> int:
    for spec in all_chapters():
        print(f"{spec.key}  {spec.notebook}  —  {spec.title}")
        for p in spec.params:
            prof = "".join(
                f"  [{name}: {spec.profiles[name][p.name]!r}]" for name in ("quick", "paper")
                if p.name in spec.profiles.get(name, {})
            )
            print(f"    {p.name} = {p.default!r}{prof}\n        {p.help} Allowed: {p.allowed()}.")
    return 0


def _progress_to_terminal() -> bool:
    """On a terminal, let the notebook's sweep bars draw there (never into the notebook); see progress.py."""
    tty = terminal_device()
    if tty and "ATTNRANK_PROGRESS_TTY" not in os.environ and os.environ.get("ATTNRANK_PROGRESS") != "0":
        os.environ["ATTNRANK_PROGRESS_TTY"] = tty
    return tty is not None


def _cmd_run(args) -> int:
    overrides = {}
    for name, value in args.param or []:
        if name in overrides:
            raise ParameterError(f"parameter {name!r} given twice")
        overrides[name] = parse_value(value)
    spec, values = resolve_parameters(args.notebook, overrides, args.profile)  # fails before any work
    interactive = _progress_to_terminal()
    try:
        rec = run_chapter(spec.key, overrides, args.profile, args.output, timeout=args.timeout,
                          progress_bar=interactive)
    except RunFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{spec.notebook}: executed in {rec['seconds']:.1f} s -> {args.output}/{spec.notebook}")
    for r in rec["results"]:
        print(f"  table {args.output}/{r}")
    return 0


def _cmd_build(args) -> int:
    _progress_to_terminal()
    build_book(profile=args.profile, out=args.output, warnings_as_errors=not args.allow_warnings)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnrank_lite",
                                     description="Run the attnrank book's chapters and build the site.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="chapters and their parameters with defaults")
    run = sub.add_parser("run", help="execute one chapter notebook with papermill")
    run.add_argument("notebook", help="chapter key (ch02), number (2) or notebook name")
    run.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                     help="set a parameter (VALUE is a Python/JSON literal or a plain string)")
    run.add_argument("--profile", choices=PROFILES, default="book")
    run.add_argument("-o", "--output", default="runs", help="output folder (default: runs)")
    run.add_argument("--timeout", type=int, default=3600, help="per-cell timeout in seconds")
    build = sub.add_parser("build", help="execute every chapter and build the website")
    build.add_argument("--profile", choices=PROFILES, default="book")
    build.add_argument("-o", "--output", default="_build")
    build.add_argument("--allow-warnings", action="store_true", help="do not fail on Sphinx warnings")
    args = parser.parse_args(argv)
    try:
        return {"list": _cmd_list, "run": _cmd_run, "build": _cmd_build}[args.command](args)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
