"""``python -m attnrank_lite verify FILE... [--independent]``: recheck certificate files (``SPEC.md``
section 6), one line each; exit 11 (not verified, or the independent checker disagrees) or 12
(refused: not the format, a hash mismatch, oversized), the first failure's. Nothing in a file runs."""
from __future__ import annotations

import sys

from .. import checker
from ..engine.certificate_file import CertificateFileError, verify_file

__all__ = ["add_parser", "cmd_verify", "independent_opinion", "NOT_VERIFIED", "REFUSED"]

#: exit status of a file whose certificates do not prove its claims, and of one refused before verification
NOT_VERIFIED, REFUSED = 11, 12


def add_parser(sub, common) -> None:
    """Register the ``verify`` subcommand."""
    p = sub.add_parser("verify", parents=[common],
                       help="recheck certificate files (.npz written by RankBracket.save) from their data alone")
    p.add_argument("files", nargs="+", metavar="FILE", help="certificate files")
    p.add_argument("--independent", action="store_true",
                   help="also recheck with the independent checker (attnrank_lite.checker); they must agree")


def independent_opinion(path, ok: bool) -> tuple[int, str]:
    """``(0, "")`` when :func:`attnrank_lite.checker.check_file` agrees with the verdict ``ok``; else
    :data:`REFUSED` or :data:`NOT_VERIFIED` and one line saying so."""
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
