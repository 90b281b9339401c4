r"""``rank_bracket``: certified lower and upper bounds on the max-row-l1 approximation rank.

.. math:: \mathrm{rank}_\varepsilon(A) = \min\{\mathrm{rank}\,B :
          \max_i \textstyle\sum_j |A_{ij} - B_{ij}| \le \varepsilon\}

(the book's :ref:`def-rank-eps`). Each side of a bracket is a certificate of
:mod:`attnrank_lite.engine.certificates` that ``RankBracket.verify`` rechecks from its stored data
(:ref:`prop-certificate-chain`); ``[0, 0]`` is returned exactly when ``B = 0`` meets ``eps``
for the stored float matrix (:ref:`prop-exact-cases`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .certificates import (
    GroupedLowerCertificate,
    LowerCertificate,
    SubspaceCertificate,
    UpperCertificate,
    advertised_rank,
    frobenius_budget,
    frobenius_tail_bounds,
)
from .checks import eps_value, real_matrix
from .lower import cluster_mass_lower_bound, frobenius_tail_lower_bound, norm_lower_bound
from .row_source import evenly_spaced_rows
from .upper import nested_certificate, randomized_family, svd_upper_bound

__all__ = ["DENSE_LIMIT", "RankBracket", "rank_bracket", "rank_brackets"]

#: matrices with ``min(n, m)`` up to this size use one dense SVD; larger ones the randomized path
DENSE_LIMIT = 1024
#: rows of the submatrix whose exact spectrum feeds the Frobenius-tail bound on the randomized path
FROBENIUS_ROWS = 1024


@dataclass
class RankBracket:
    r"""Certified bracket ``lower <= rank_eps(A) <= upper``.

    Attributes
    ----------
    eps : float
    lower_certificate : ClusterMassCertificate, FrobeniusTailCertificate or NormCertificate
    upper_certificate : SubspaceCertificate
    """

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

    @property
    def ratio(self) -> float:
        """``upper / lower`` (``inf`` when ``lower == 0 < upper``; 1 for ``[0, 0]``)."""
        if self.lower == 0:
            return 1.0 if self.upper == 0 else float("inf")
        return self.upper / self.lower

    def verify(self, A, eps: float | None = None) -> bool:
        """Recheck both certificates on ``A`` from their stored data, and ``lower <= upper``.

        Each slot accepts only certificates that bound its side: the lower slot a
        :class:`~attnrank_lite.engine.certificates.LowerCertificate`, the upper slot an
        :class:`~attnrank_lite.engine.certificates.UpperCertificate` (a class property, not
        stored data). The ranks compared are those each certificate's ``certified_rank``
        derives from its checked data, and they must equal the advertised ``lower`` and
        ``upper``.

        ``eps=None`` uses the stored ``self.eps``. ``A`` must be a finite real matrix and the
        level a finite real number ``>= 0`` (else ``TypeError`` / ``ValueError``); malformed
        certificate data give ``False``.
        """
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

    def as_dict(self) -> dict:
        """Summary row for results tables."""
        return {
            "eps": self.eps,
            "lower": self.lower,
            "upper": self.upper,
            "lower_kind": self.lower_kind,
            "upper_source": self.upper_certificate.source,
        }

    def __repr__(self) -> str:
        return f"RankBracket(eps={self.eps:g}, [{self.lower}, {self.upper}], lower by {self.lower_kind})"


def _bounds(cert) -> str:
    """The side a certificate bounds: ``"lower"``, ``"upper"`` or ``""`` (not a certificate).

    Read from the class (``isinstance``), never from attributes stored on the object.
    """
    if isinstance(cert, LowerCertificate) and not isinstance(cert, UpperCertificate):
        return "lower"
    if isinstance(cert, UpperCertificate) and not isinstance(cert, LowerCertificate):
        return "upper"
    return ""


def _best(*certs):
    return max(certs, key=lambda c: c.rank)


def rank_bracket(A, eps: float, method: str = "auto", seed: int = 0, points=None) -> RankBracket:
    r"""Certified bracket on the max-row-l1 approximation rank of ``A``.

    Lower side: the best of the greedy cluster-mass certificate, the Frobenius-tail certificate
    (exact spectrum of ``A``, or of an evenly spaced row submatrix on the randomized path) and the
    trivial norm certificate. Upper side: the smallest ``k`` found by bisection over the nested
    family ``A V_k V_k^T`` of top right-singular subspaces (dense SVD, or a randomized range
    finder for large matrices). Both certificates verify on ``A``.

    Parameters
    ----------
    A : array_like, shape (n, m)
        Typically a row-stochastic attention matrix (the cluster-mass search needs ``A >= 0``;
        other matrices get the Frobenius and norm certificates only).
    eps : float
        Error level, ``eps >= 0``.
    method : {"auto", "dense", "randomized"}
        ``auto`` uses ``dense`` when ``min(n, m) <= DENSE_LIMIT``.
    seed : int
        Seed for the randomized path (deterministic).
    points : array_like, shape (n, d), optional
        The queries as points (self-attention: also the keys, on the unit sphere). Adds the
        Neumann lower search and the harmonic upper family of :mod:`attnrank_lite.engine.geometric`.

    Returns
    -------
    RankBracket

    Examples
    --------
    >>> import numpy as np
    >>> rank_bracket(np.eye(5), 0.5)
    RankBracket(eps=0.5, [5, 5], lower by cluster-mass)
    """
    return rank_brackets(A, [eps], method=method, seed=seed, points=points)[0]


def rank_brackets(A, eps_values, method: str = "auto", seed: int = 0, points=None) -> list[RankBracket]:
    r"""Certified brackets of ``A`` at several error levels, sharing one factorisation.

    Same certificates as :func:`rank_bracket` (which calls this with one level), but the SVD
    (dense path) or the randomized nested family (randomized path, built for the smallest
    ``eps``, which needs the largest rank) and the exact submatrix spectrum for the Frobenius
    bound are computed once and searched for every level.

    Parameters
    ----------
    A : array_like, shape (n, m)
    eps_values : sequence of float
        Error levels, each ``>= 0``.
    method : {"auto", "dense", "randomized"}
    seed : int
    points : array_like, shape (n, d), optional
        See :func:`rank_bracket`.

    Returns
    -------
    list of RankBracket
        In the order of ``eps_values``.
    """
    A = real_matrix("A", A)
    if np.ndim(eps_values) == 0:
        eps_values = [eps_values]
    eps_list = [eps_value(e) for e in eps_values]
    if method not in ("auto", "dense", "randomized"):
        raise ValueError(f"method must be 'auto', 'dense' or 'randomized', got {method!r}")
    n, m = A.shape
    if method == "auto":
        method = "dense" if min(n, m) <= DENSE_LIMIT else "randomized"
    out: dict[int, RankBracket] = {}
    svd = None  # dense path: (U, S, Vt)
    family = None  # randomized path: (US, Vt, source) meeting the smallest eps handled so far
    tails = None  # dense path: proven Frobenius tail bounds of A
    sub_svd = None  # randomized path: thin SVD of the row submatrix
    sub_tails = None  # ... and its proven tail bounds
    rows = None
    geo = None  # issue 12: Neumann lower / harmonic upper families from the points
    if points is not None and A.size:
        from .geometric import geometric_certificates

        geo = geometric_certificates(A, points, eps_list)
    for idx in sorted(range(len(eps_list)), key=lambda i: eps_list[i]):
        eps = eps_list[idx]
        zero = SubspaceCertificate(np.zeros((n, 0)), np.zeros((0, m)), source="B = 0")
        if A.size == 0 or zero.verify(A, eps):
            out[idx] = RankBracket(eps, norm_lower_bound(A, eps), zero)
            continue
        cluster = cluster_mass_lower_bound(A, eps)
        norm = norm_lower_bound(A, eps)
        if method == "dense":
            if svd is None:
                svd = np.linalg.svd(A, full_matrices=False)
                tails = frobenius_tail_bounds(A, svd=svd)
            lower = _best(cluster, frobenius_tail_lower_bound(A, eps, tails=tails), norm)
            lower = lower if geo is None else _best(lower, geo.lower[idx])
            upper = svd_upper_bound(A, eps, svd=svd, lo=lower.rank - 1)
        else:
            if rows is None:
                rows = evenly_spaced_rows(n, FROBENIUS_ROWS)
                rows = None if rows.size == n else rows
            if sub_svd is None:
                S = A if rows is None else A[rows]
                if float(np.einsum("ij,ij->", S, S)) > frobenius_budget(S.shape[0], eps):
                    # the Frobenius mass exceeds the budget: the spectrum is needed (kept for the
                    # larger eps that follow). A full SVD of S, never a randomized approximation.
                    sub_svd = np.linalg.svd(S, full_matrices=False)
                    sub_tails = frobenius_tail_bounds(S, svd=sub_svd)
            frob = frobenius_tail_lower_bound(A, eps, rows=rows, tails=sub_tails)
            lower = _best(cluster, frob, norm)
            lower = lower if geo is None else _best(lower, geo.lower[idx])
            upper = None
            if geo is not None and geo.upper[idx] is not None and not geo.svd_affordable(idx, max(32, 2 * lower.rank)):
                upper = geo.upper[idx]  # high rank: the harmonic family alone (no dense-SVD fallback)
            elif family is not None:
                upper = nested_certificate(A, family[0], eps, lo=lower.rank - 1, source=family[1])
            if upper is None:
                upper, fam = randomized_family(A, eps, start=max(32, 2 * lower.rank), seed=seed,
                                               lo=lower.rank - 1)
                family = fam if fam is not None else family
        if geo is not None and geo.upper[idx] is not None and geo.upper[idx].rank < upper.rank:
            upper = geo.upper[idx]
        out[idx] = RankBracket(eps, lower, upper)
    return [out[i] for i in range(len(eps_list))]
