"""``RankBracket``: a certified bracket ``lower <= rank_eps(A) <= upper``, a pair of
certificates, frozen once the best-of rule has built it (:ref:`prop-certificate-chain`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .certificate_io import save_brackets
from .certificates import (
    GroupedLowerCertificate,
    LowerCertificate,
    SubspaceCertificate,
    UpperCertificate,
    advertised_rank,
)
from .checks import eps_value, real_matrix

__all__ = ["RankBracket"]


@dataclass(frozen=True)
class RankBracket:
    """Certified bracket ``lower <= rank_eps(A) <= upper`` at ``eps``: a lower certificate (cluster-mass,
    Frobenius tail, norm, Neumann, right-inverse) and an upper :class:`SubspaceCertificate`."""

    eps: float
    lower_certificate: object
    upper_certificate: SubspaceCertificate

    @property
    def lower(self) -> int:
        return int(self.lower_certificate.rank)

    @property
    def upper(self) -> int:
        return int(self.upper_certificate.rank)

    @property
    def upper_factors(self) -> tuple[np.ndarray, np.ndarray]:
        """``(L, R)`` with ``L`` of shape (n, upper) and ``R`` of shape (upper, m)."""
        return self.upper_certificate.L, self.upper_certificate.R

    @property
    def lower_kind(self) -> str:
        return self.lower_certificate.kind

    @property
    def lower_rows(self) -> list:
        c = self.lower_certificate
        return list(c.rows) if isinstance(c, GroupedLowerCertificate) else []

    @property
    def lower_groups(self) -> list:
        c = self.lower_certificate
        return [list(g) for g in c.groups] if isinstance(c, GroupedLowerCertificate) else []

    def verify(self, A, eps: float | None = None) -> bool:
        """Recheck both certificates on ``A`` (at ``eps``, default ``self.eps``) from their stored data:
        each slot must hold one of the package's own classes (exact type) of its side, the ranks each
        ``certified_rank`` derives must equal the advertised ``lower`` and ``upper``, and
        ``lower <= upper``. Bad arguments raise; malformed certificate data give ``False``."""
        eps = eps_value(self.eps if eps is None else eps)
        A = real_matrix("A", A)
        low, up = self.lower_certificate, self.upper_certificate
        if not (_bounds(low) == "lower" and _bounds(up) == "upper"):
            return False
        lower = low.certified_rank(A, eps)
        if lower is None:
            return False
        upper = up.certified_rank(A, eps)
        return bool(upper is not None and lower <= upper
                    and advertised_rank(low) == lower and advertised_rank(up) == upper)

    def save(self, path, *, A=None, Q=None, K=None, beta=None, log_weights=None, factors: str = "float32") -> str:
        """Write this bracket, verified first, to a certificate file for the matrix ``A`` or the recipe
        ``Q``, ``beta``, ``K``, ``log_weights``: :func:`~attnrank_lite.engine.certificate_io.save_brackets`."""
        return save_brackets(path, [self], A=A, Q=Q, K=K, beta=beta, log_weights=log_weights, factors=factors)

    def as_dict(self) -> dict:
        """Summary row for results tables."""
        return {"eps": self.eps, "lower": self.lower, "upper": self.upper, "lower_kind": self.lower_kind,
                "upper_source": self.upper_certificate.source}

    def __repr__(self) -> str:
        return f"RankBracket(eps={self.eps:g}, [{self.lower}, {self.upper}], lower by {self.lower_kind})"


def _bounds(cert) -> str:
    """The side a certificate bounds, ``"lower"``, ``"upper"`` or ``""``, read from the exact class
    (a subclass, which could override ``certified_rank``, does not count)."""
    cls = type(cert)
    lower, upper = issubclass(cls, LowerCertificate), issubclass(cls, UpperCertificate)
    if not cls.__module__.startswith("attnrank_lite.") or lower == upper:
        return ""  # a class defined outside the package (a subclass of ours included), or of no one side
    return "lower" if lower else "upper"
