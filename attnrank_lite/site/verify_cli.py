"""``python -m attnrank_lite verify FILE...``: recheck certificate files (``SPEC.md`` section 6).

One line per file: ``FILE: verified: 28 <= rank_0.25(A) <= 78, n = 4096, kinds neumann/harmonic``
on standard output, or on standard error ``error: FILE: not verified: <the side its data do not
prove>`` (exit 11) or ``error: FILE: refused: <why>`` (a pickle, a truncated archive, another
format, a sha256 mismatch, an oversized array: exit 12). Every file is checked; the exit status
is the first failure's. ``--independent``: :mod:`attnrank_lite.checker` must agree on each file
(else 11). Nothing in a file is ever executed.
"""
from __future__ import annotations

import sys

from .. import checker
from ..engine.certificate_file import CertificateFileError, verify_file

__all__ = ["add_parser", "cmd_verify", "independent_opinion", "NOT_VERIFIED", "REFUSED"]

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


def independent_opinion(path, ok: bool) -> tuple[int, str]:
    """``(0, "")`` when :func:`attnrank_lite.checker.check_file` agrees with ``verify``'s verdict
    ``ok`` on the file at ``path``; else :data:`REFUSED` (the checker refused the file) or
    :data:`NOT_VERIFIED` (the verdicts differ) and one line saying so."""
    try:
        report = checker.check_file(path)
    except ValueError as exc:
        return REFUSED, f"refused by the independent checker: {exc}"
    if report.ok == ok:
        return 0, ""
    mine, theirs = "verified" if ok else "not verified", "verified" if report.ok else report.line
    return NOT_VERIFIED, f"the independent checker disagrees with verify (verify: {mine}, checker: {theirs})"


def _one(path: str, independent: bool) -> tuple[int, str]:
    """``(status, line)`` for one file; status 0 when verified."""
    try:
        verdict = verify_file(path)
    except CertificateFileError as exc:
        return REFUSED, f"{path}: refused: {exc}"
    except OSError as exc:
        return 8, f"{path}: cannot read the file ({exc.strerror or exc})"
    status, line = independent_opinion(path, verdict.ok) if independent else (0, "")
    if status:
        return status, f"{path}: {line}"
    line = verdict.line + ("; independent checker agrees" if independent and verdict.ok else "")
    return (0 if verdict.ok else NOT_VERIFIED), f"{path}: {line}"


def cmd_verify(args) -> int:
    """Check every file; print one line each; return the status of the first failure (0 if none)."""
    first = 0
    for path in args.files:
        status, line = _one(path, args.independent)
        print(f"error: {line}" if status else line, file=sys.stderr if status else sys.stdout, flush=True)
        first = first or status
    return first
