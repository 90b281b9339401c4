r"""Certificate files back as brackets: :func:`load_brackets`, :func:`load_bracket`, :func:`verify_file`.

The format and its structural checks are :mod:`attnrank_lite.engine.certificate_io`
(``SPEC.md`` section 6); ``RankBracket.save`` writes it. :func:`verify_file` rebuilds ``A`` from
the file alone (the stored matrix, or the recipe through
:func:`~attnrank_lite.engine.attention.softmax_attention`) and rechecks each side with the
certificate classes' own ``certified_rank``: the claimed ends must equal the ranks the checked
data prove, and the first failure is named (bracket, side, kind).
"""
from __future__ import annotations

from dataclasses import dataclass

from .certificate_io import CertificateFile, CertificateFileError, file_certificates, read_certificate_file
from .certified_bracket import RankBracket

__all__ = ["CertificateFileError", "FileVerdict", "load_brackets", "load_bracket", "verify_file"]


def load_brackets(path, **limits) -> tuple[CertificateFile, list[RankBracket]]:
    """The file (checked structure) and its brackets rebuilt as :class:`RankBracket` objects.

    The brackets are *not* verified here (see :func:`verify_file`); a harmonic certificate's
    factors are rebuilt from the recipe's keys, which computes ``A``.
    """
    cf = read_certificate_file(path, **limits)
    return cf, [RankBracket(eps=eps, lower_certificate=low, upper_certificate=up)
                for eps, low, up in file_certificates(cf)]


def load_bracket(path, eps: float | None = None, **limits) -> RankBracket:
    """The one bracket of a certificate file (``eps`` selects one when the file holds several).

    The bracket is returned unverified; call ``verify_file(path)`` or
    ``bracket.verify(load_brackets(path)[0].matrix())``.
    """
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
    """Outcome of :func:`verify_file`: ``ok``, one line of text, and the first failing side.

    Attributes
    ----------
    ok : bool
    line : str
        ``verified: 28 <= rank_0.25(A) <= 78, n = 4096, kinds neumann/harmonic`` (one clause per
        bracket) or what failed.
    failing : str
        ``""`` or e.g. ``"bracket 0 (eps = 0.25): lower side (neumann)"``.
    n, m : int
    """

    ok: bool
    line: str
    failing: str = ""
    n: int = 0
    m: int = 0


def verify_file(path, **limits) -> FileVerdict:
    """Recheck every bracket of a certificate file on the instance it rebuilds.

    For each bracket: the lower certificate's ``certified_rank`` must equal the claimed lower
    end, the upper one's the claimed upper end, and ``lower <= upper``. The first failure is
    named (side and kind). Structural refusals raise :class:`CertificateFileError`.
    """
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
        low = b.lower_certificate.certified_rank(A, eps)
        if low is None or low != entry["lower"]:
            got = "nothing" if low is None else f"rank >= {low}"
            return FileVerdict(False, f"not verified: {where}: lower side ({lk}) claims {entry['lower']}, "
                               f"its data prove {got}", f"{where}: lower side ({lk})", n, m)
        up = b.upper_certificate.certified_rank(A, eps)
        if up is None or up != entry["upper"]:
            got = "nothing" if up is None else f"rank <= {up}"
            return FileVerdict(False, f"not verified: {where}: upper side ({uk}) claims {entry['upper']}, "
                               f"its data prove {got}", f"{where}: upper side ({uk})", n, m)
        if low > up:
            return FileVerdict(False, f"not verified: {where}: lower end {low} above upper end {up}",
                               f"{where}: lower side ({lk})", n, m)
        clauses.append(f"{low} <= rank_{eps:g}(A) <= {up}")
        kinds.append(f"{lk}/{uk}")
    line = f"verified: {'; '.join(clauses)}, n = {n}" + (f", m = {m}" if m != n else "") + \
        f", kinds {', '.join(kinds)}"
    return FileVerdict(True, line, "", n, m)
