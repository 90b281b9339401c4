"""``python -m attnrank_lite verify FILE...``: recheck certificate files (``SPEC.md`` section 6).

One line per file on standard output for a verified file::

    FILE: verified: 28 <= rank_0.25(A) <= 78, n = 4096, kinds neumann/harmonic

and one line on standard error for a file that fails: ``error: FILE: not verified: bracket 0
(eps = 0.25): lower side (neumann) claims 30, its data prove rank >= 28`` (exit status 11) or
``error: FILE: refused: <what is wrong>`` (a pickle, a truncated archive, another format
version, a sha256 mismatch, an oversized array: exit status 12). Every file is checked; the exit
status is that of the first file that failed. ``--independent`` also runs
:mod:`attnrank_lite.checker` on each file, and a verdict that differs from ``verify``'s fails
the file (exit status 11). Nothing in a file is ever executed.
"""
from __future__ import annotations

import sys

from ..checker import check_file
from ..engine.certificate_file import CertificateFileError, verify_file

__all__ = ["add_parser", "cmd_verify", "NOT_VERIFIED", "REFUSED"]

#: exit status of a file whose certificates do not prove its claims
NOT_VERIFIED = 11
#: exit status of a file refused before verification (format, hash, size)
REFUSED = 12


def add_parser(sub, common) -> None:
    """Register the ``verify`` subcommand."""
    p = sub.add_parser("verify", parents=[common],
                       help="recheck certificate files (.npz written by RankBracket.save) from their data alone")
    p.add_argument("files", nargs="+", metavar="FILE", help="certificate files")
    p.add_argument("--independent", action="store_true",
                   help="also recheck with the independent checker (attnrank_lite.checker); they must agree")


def _one(path: str, independent: bool) -> tuple[int, str]:
    """``(status, line)`` for one file; status 0 when verified."""
    try:
        verdict = verify_file(path)
    except CertificateFileError as exc:
        return REFUSED, f"{path}: refused: {exc}"
    except OSError as exc:
        return 8, f"{path}: cannot read the file ({exc.strerror or exc})"
    line = verdict.line
    if independent:
        try:
            report = check_file(path)
        except ValueError as exc:
            return REFUSED, f"{path}: refused by the independent checker: {exc}"
        if report.ok != verdict.ok:
            side = verdict.failing or report.failing
            return NOT_VERIFIED, (f"{path}: the independent checker disagrees with verify "
                                  f"(verify: {'verified' if verdict.ok else 'not verified'}, checker: "
                                  f"{'verified' if report.ok else report.line}; {side})")
        if verdict.ok:
            line += "; independent checker agrees"
    if not verdict.ok:
        return NOT_VERIFIED, f"{path}: {line}"
    return 0, f"{path}: {line}"


def cmd_verify(args) -> int:
    """Check every file; print one line each; return the status of the first failure (0 if none)."""
    first = 0
    for path in args.files:
        status, line = _one(path, args.independent)
        if status:
            print(f"error: {line}", file=sys.stderr, flush=True)
            first = first or status
        else:
            print(line, flush=True)
    return first
