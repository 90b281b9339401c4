"""Certificate files back as brackets: :func:`load_brackets`, :func:`load_bracket`, :func:`verify_file`
(the format: :mod:`attnrank_lite.engine.certificate_io`)."""
from __future__ import annotations

from dataclasses import dataclass

from .certificate_io import CertificateFile, CertificateFileError, file_certificates, read_certificate_file
from .certified_bracket import RankBracket

__all__ = ["CertificateFileError", "FileVerdict", "load_brackets", "load_bracket", "verify_file"]


def load_brackets(path, **limits) -> tuple[CertificateFile, list[RankBracket]]:
    """The file (checked structure) and its brackets, not verified (harmonic factors rebuilt)."""
    cf = read_certificate_file(path, **limits)
    return cf, [RankBracket(eps=eps, lower_certificate=low, upper_certificate=up)
                for eps, low, up in file_certificates(cf)]


def load_bracket(path, eps: float | None = None, **limits) -> RankBracket:
    """The one bracket of a certificate file (``eps`` selects one of several), unverified."""
    _, brackets = load_brackets(path, **limits)
    if eps is None:
        if len(brackets) != 1:
            raise ValueError(f"the file holds {len(brackets)} brackets (eps "
                             f"{', '.join(f'{b.eps:g}' for b in brackets)}): pass eps=")
        return brackets[0]
    chosen = [b for b in brackets if b.eps == float(eps)]
    if not chosen:
        raise ValueError(f"no bracket at eps = {eps:g} in the file")
    return chosen[0]


@dataclass(frozen=True)
class FileVerdict:
    """Outcome of :func:`verify_file`: ``ok``; ``line``, what was verified or what failed; ``failing``,
    ``""`` or e.g. ``"bracket 0 (eps = 0.25): lower side (neumann)"``; ``n``, ``m``."""

    ok: bool
    line: str
    failing: str = ""
    n: int = 0
    m: int = 0


def verify_file(path, **limits) -> FileVerdict:
    """Recheck every bracket of a certificate file on the instance it rebuilds from the file alone:
    each side's ``certified_rank`` must equal its claimed end, and ``lower <= upper``; the first
    failure is named. Structural refusals raise :class:`CertificateFileError`."""
    cf = read_certificate_file(path, **limits)
    A = cf.matrix()
    brackets = [RankBracket(eps=eps, lower_certificate=low, upper_certificate=up)
                for eps, low, up in file_certificates(cf, A)]
    n, m = A.shape
    clauses, kinds = [], []
    for t, (b, entry) in enumerate(zip(brackets, cf.header["brackets"])):
        eps = b.eps
        lk, uk = entry["lower_certificate"]["kind"], entry["upper_certificate"]["kind"]
        where = f"bracket {t} (eps = {eps:g})"
        for side, cert, kind, rel in (("lower", b.lower_certificate, lk, ">="),
                                      ("upper", b.upper_certificate, uk, "<=")):
            got = cert.certified_rank(A, eps)
            if got is None or got != entry[side]:
                proved = "nothing" if got is None else f"rank {rel} {got}"
                return FileVerdict(False, f"not verified: {where}: {side} side ({kind}) claims {entry[side]}, "
                                   f"its data prove {proved}", f"{where}: {side} side ({kind})", n, m)
        low, up = entry["lower"], entry["upper"]
        if low > up:
            return FileVerdict(False, f"not verified: {where}: lower end {low} above upper end {up}",
                               f"{where}: lower side ({lk})", n, m)
        clauses.append(f"{low} <= rank_{eps:g}(A) <= {up}")
        kinds.append(f"{lk}/{uk}")
    line = f"verified: {'; '.join(clauses)}, n = {n}" + (f", m = {m}" if m != n else "") + \
        f", kinds {', '.join(kinds)}"
    return FileVerdict(True, line, "", n, m)
