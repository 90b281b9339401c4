"""Certificate objects for the approximation rank (``SPEC.md`` section 2, :ref:`prop-certificate-chain`):
lower (:class:`LowerCertificate`) cluster-mass, Frobenius tail and norm certificates, upper
(:class:`UpperCertificate`) ``B = L R``.

Contract of every ``verify(A, eps)``: ``A`` a finite real matrix, ``eps`` finite ``>= 0`` (else
``TypeError`` / ``ValueError``); malformed stored data (bad indices, NaN / inf / complex entries,
shapes that do not fit, a rank the data do not support) give ``False``. ``certified_rank(A, eps)``
reads the stored data once as plain ndarrays (a subclass's ``shape`` or a list's ``__len__`` is
never trusted) and returns the rank they prove with a proven rounding margin (``None``: nothing);
``verify`` is ``True`` exactly when that rank equals the advertised ``rank``."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

import numpy as np

from .checks import UNIT_ROUNDOFF, count_value, eps_value, gamma, index_array, parse_stored, real_array, real_matrix
from .norms import row_l1_blockwise

__all__ = ["Certificate", "ClusterMassCertificate", "FrobeniusTailCertificate", "GroupedLowerCertificate",
           "LowerCertificate", "NormCertificate", "SEARCH_MARGIN", "SubspaceCertificate", "UpperCertificate",
           "advertised_rank", "frobenius_budget", "frobenius_tail_bounds", "row_l1_at_most", "search_target"]

_ETA = float(np.finfo(np.float64).smallest_subnormal)


def _arguments(A, eps):
    """``A`` and ``eps`` of a ``verify`` call, checked (raises on bad arguments)."""
    return real_matrix("A", A), eps_value(eps)


#: relative room a certificate search leaves below ``eps`` for the verifiers' rounding margins
SEARCH_MARGIN = 1e-9
#: absolute room (rounding margins of rows of mass ~1 in float64 are far below this)
_SEARCH_FLOOR = 1e-14


def search_target(eps: float) -> float:
    r"""The error a certificate search must reach, :math:`\varepsilon(1 - 10^{-9}) - 10^{-14}`: room
    for the verifiers' proven margins (:math:`\gamma_{k+m+4} \approx 10^{-12}`), so what a search
    finds verifies unless the matrix is extreme (every certificate is still verified)."""
    return eps * (1 - SEARCH_MARGIN) - _SEARCH_FLOOR


class Certificate:
    """Protocol of every certificate: ``rank``, ``certified_rank(A, eps)`` and ``verify(A, eps)``."""

    def certified_rank(self, A, eps: float) -> int | None:  # pragma: no cover - abstract
        """The rank the checked stored data prove on ``A`` at ``eps`` (``None``: nothing)."""
        raise NotImplementedError

    def verify(self, A, eps: float) -> bool:
        """``True`` iff the stored data prove the advertised ``rank`` on ``A`` at ``eps`` (see the module's
        contract)."""
        A, eps = _arguments(A, eps)
        rank = self.certified_rank(A, eps)
        return rank is not None and advertised_rank(self) == rank


class LowerCertificate(Certificate):
    """Base of the certificates that bound ``rank_eps(A)`` from below (``rank_eps(A) >= rank``)."""


class UpperCertificate(Certificate):
    """Base of the certificates that bound ``rank_eps(A)`` from above (``rank_eps(A) <= rank``)."""


def advertised_rank(cert) -> int | None:
    """The certificate's advertised ``rank`` as an int (``None`` if it is not an integer)."""
    return parse_stored(lambda: count_value("rank", cert.rank))


def _plain(x) -> np.ndarray:
    """Stored data as a plain ndarray (never a subclass, whose ``shape`` could lie)."""
    arr = np.asarray(x)
    return arr if type(arr) is np.ndarray else np.array(arr, subok=False)


@dataclass
class GroupedLowerCertificate(LowerCertificate):
    r"""Lower certificate stored as ``rows`` :math:`i_1..i_k` and pairwise disjoint key ``groups``
    :math:`G_b` (lists of int): with :math:`G \in \{0,1\}^{m\times k}` (:math:`\|G\|_{\infty\to\infty}
    \le 1`) and :math:`M = A_S G`, :math:`M_{ab} = \sum_{j\in G_b} A_{i_a j}`, each subclass states its
    condition on ``M`` proving :math:`\mathrm{rank}_\varepsilon(A) \ge k` (``_holds``)."""

    rows: list = field(default_factory=list)
    groups: list = field(default_factory=list)
    kind: str = "grouped"
    #: whether an empty key group is refused as malformed
    nonempty_groups: ClassVar[bool] = False

    @property
    def rank(self) -> int:
        """``k``, the number of stored rows (counted on the plain array, not by ``len``)."""
        return int(_plain(self.rows).size)

    def _parse(self, n: int, m: int):
        """Stored rows and groups as plain int64 index vectors (raises on malformed data)."""
        rows = index_array("rows", _plain(self.rows), n)
        if not isinstance(self.groups, (list, tuple)):
            raise ValueError("groups must be a list of index sequences")
        groups = [index_array(f"groups[{b}]", _plain(g), m) for b, g in enumerate(list(self.groups))]
        if len(groups) != rows.size:
            raise ValueError(f"{rows.size} rows but {len(groups)} groups")
        if self.nonempty_groups and any(g.size == 0 for g in groups):
            raise ValueError("key groups must be non-empty")
        flat = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
        if np.unique(flat).size != flat.size:
            raise ValueError("key groups must be pairwise disjoint")
        return rows, groups

    def mass_matrix(self, A, block: int = 256) -> np.ndarray:
        """The k x k matrix ``M[a, b] = sum(A[rows[a], groups[b]])`` (groups may overlap here)."""
        A = real_matrix("A", A)
        rows = _plain(self.rows).astype(np.int64)
        groups = [_plain(g).astype(np.int64) for g in self.groups]
        return _mass_matrix(A, rows, groups, block)

    def _holds(self, A: np.ndarray, eps: float, rows: np.ndarray, groups: list) -> bool:
        """The subclass's condition on the parsed data (``rows`` non-empty, ``eps < 1``)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def certified_rank(self, A, eps: float) -> int | None:
        """``k`` (the number of parsed rows) when the condition holds; ``None`` otherwise."""
        A, eps = _arguments(A, eps)
        parsed = parse_stored(self._parse, *A.shape)
        if parsed is None:
            return None
        rows, groups = parsed
        if rows.size == 0:
            return 0
        if not eps < 1:
            return None
        return int(rows.size) if self._holds(A, eps, rows, groups) else None


def _mass_matrix(A: np.ndarray, rows: np.ndarray, groups: list, block: int = 256) -> np.ndarray:
    """``M = A_S G`` for index vectors ``rows`` and ``groups``, rows gathered ``block`` at a time."""
    k = rows.size
    M = np.zeros((k, len(groups)))
    sizes = np.array([g.size for g in groups], dtype=np.int64)
    nonempty = np.flatnonzero(sizes)
    if k == 0 or nonempty.size == 0:
        return M
    cols = np.concatenate([groups[b] for b in nonempty])
    starts = np.concatenate([[0], np.cumsum(sizes[nonempty])[:-1]])
    for s in range(0, k, block):
        sub = A[rows[s:s + block]][:, cols]
        M[s:s + block, nonempty] = np.add.reduceat(sub, starts, axis=1)
    return M


@dataclass
class ClusterMassCertificate(GroupedLowerCertificate):
    r"""Cluster-mass lower certificate: ``rank_eps(A) >= k`` (:ref:`prop-cluster-mass`) when

    .. math:: \max_a \Big(|1 - M_{aa}| + \sum_{b\ne a} |M_{ab}|\Big) < 1 - \varepsilon

    (selecting rows and summing group columns does not increase the norm, so the k x k image of any
    admissible B is within < 1 of the identity, hence invertible)."""

    kind: str = "cluster-mass"

    def defects(self, A) -> np.ndarray:
        r"""Per selected row: :math:`|1 - M_{aa}| + \sum_{b\ne a}|M_{ab}|` (must stay below 1 - eps)."""
        return _defects(self.mass_matrix(A))

    def margins(self, A) -> np.ndarray:
        r"""Per selected row, the rounding margin :math:`4\gamma_{m+k+5}(s_a + 2)`, :math:`s_a = \sum_j|A_{i_a j}|`.

        Proof: with disjoint groups the computed :math:`M_{a\cdot}` are within :math:`\gamma_m s_a` in
        total; the k-term sum, the subtraction of :math:`|M_{aa}|`, :math:`|1 - M_{aa}|` and the last
        addition add at most :math:`(\gamma_k + 5u)(s_a + 2)`; so the computed defect is within
        :math:`2\gamma_{m+k+5}(s_a + 2)` of the exact one, and evaluating :math:`1 - \varepsilon -`
        margin and :math:`s_a` costs less than the other half (subnormal additions are exact)."""
        A = real_matrix("A", A)
        return _margins(A, _plain(self.rows).astype(np.int64))

    def _holds(self, A, eps, rows, groups) -> bool:
        defects = _defects(_mass_matrix(A, rows, groups))
        return bool(np.all(defects < 1.0 - eps - _margins(A, rows)))


def _defects(M: np.ndarray) -> np.ndarray:
    absM = np.abs(M)
    return np.abs(1.0 - np.diag(M)) + absM.sum(axis=1) - np.diag(absM)


def _margins(A: np.ndarray, rows: np.ndarray) -> np.ndarray:
    s = row_l1_blockwise(A[rows]) if rows.size else np.zeros(0)
    return 4 * gamma(A.shape[1] + rows.size + 5) * (s + 2.0)


def frobenius_budget(rows: int, eps: float) -> float:
    r"""An upper bound on :math:`|S|\,\varepsilon^2` (``rows`` = :math:`|S|`): the float product times
    :math:`1 + \gamma_4` plus the smallest subnormal; ``inf`` on overflow."""
    with np.errstate(over="ignore"):
        b = np.float64(rows) * np.float64(eps) * np.float64(eps)
        return float(b * (1 + gamma(4)) + rows * _ETA)


def frobenius_tail_bounds(S, svd=None) -> np.ndarray:
    r"""Proven lower bounds :math:`t_k \le \sum_{l>k}\sigma_l(S)^2`, ``k = 0..min(p, q)``.

    The SVD ``(U, s, V^T)`` (``svd``, else computed) is an untrusted witness. **Proof.** With
    :math:`E = S - U\operatorname{diag}(s)V^T`, Weyl's inequality gives
    :math:`\sigma_l(S) \le \|U\|_2\|V\|_2\,|s|_{(l)} + \|E\|_2 =: \bar\sigma_l`, with
    :math:`\|U\|_2^2 \le 1 + \|U^TU - I\|_F` (likewise V). Every computed quantity is turned into an
    upper bound (Gram matrices within :math:`\gamma_p|U|^T|U|`, :math:`E` within
    :math:`\gamma_{r+3}(|S| + |U|\operatorname{diag}|s|\,|V^T|) + r\eta`, sums of N non-negative
    terms times :math:`1 + \gamma_{pq+p+q+16}`, :math:`\eta = 2^{-1074}` terms for underflow). Then
    :math:`\sum_{l>k}\sigma_l^2 = \|S\|_F^2 - \sum_{l\le k}\sigma_l^2 \ge \underline F -
    \sum_{l\le k}\bar\sigma_l^2 =: t_k`, rounded downward (:math:`\underline F \le \|S\|_F^2`).

    Parameters
    ----------
    S : ndarray, shape (p, q)
    svd : tuple ``(U, s, Vt)``, optional

    Returns
    -------
    t : ndarray, shape (min(p, q) + 1,)
        Non-increasing; ``t[min(p, q)] <= 0``."""
    S = real_matrix("S", S)
    p, q = S.shape
    r = min(p, q)
    if r == 0:
        return np.zeros(1)
    if svd is None:
        svd = np.linalg.svd(S, full_matrices=False)
    U, s, Vt = (np.asarray(x, dtype=np.float64) for x in svd)
    if U.shape != (p, r) or s.shape != (r,) or Vt.shape != (r, q):
        raise ValueError(f"svd factors of shapes {U.shape}, {s.shape}, {Vt.shape} do not fit S {S.shape}")
    up = 1.0 + gamma(p * q + p + q + 16)
    with np.errstate(over="ignore", invalid="ignore"):
        abs_s = np.sort(np.abs(s))[::-1]
        fro_S = math.sqrt(float(np.einsum("ij,ij->", S, S))) * up
        E = S - (U * s) @ Vt
        fro_E = math.sqrt(float(np.einsum("ij,ij->", E, E))) * up + math.sqrt(p * q * _ETA)
        un = np.sqrt(np.einsum("ij,ij->j", U, U)) * up
        vn = np.sqrt(np.einsum("ij,ij->i", Vt, Vt)) * up
        e = (fro_E + gamma(r + 3) * (fro_S + float(np.sum(abs_s * un * vn)) * up)
             + r * _ETA * math.sqrt(p * q)) * up

        def gram_bound(G, norms, dim):  # bounds ||G - I||_F for the exact Gram matrix, G computed
            G[np.diag_indices(r)] -= 1.0
            return (math.sqrt(float(np.einsum("ij,ij->", G, G))) * up
                    + gamma(dim + 1) * float(np.sum(norms * norms)) * up + r * r * dim * _ETA) * up
        c = math.sqrt((1.0 + gram_bound(U.T @ U, un, p)) * (1.0 + gram_bound(Vt @ Vt.T, vn, q))) * up
        sig = (c * abs_s + e) * up
        head = np.concatenate([[0.0], np.cumsum(sig * sig)]) * (1.0 + gamma(r + 4))
        F_low = float(np.einsum("ij,ij->", S, S)) * (1.0 - gamma(p * q + p + q + 16)) - p * q * _ETA
        t = F_low - head
        t = t - 2 * UNIT_ROUNDOFF * (abs(F_low) + head)
    t = np.where(np.isfinite(t), t, -np.inf)
    return np.minimum.accumulate(t)


@dataclass
class FrobeniusTailCertificate(LowerCertificate):
    r"""Frobenius-tail lower certificate: ``rank_eps(A) >= rank`` (:ref:`prop-frobenius-tail`).

    For :math:`\|E\| \le \varepsilon` and distinct rows S, columns T,
    :math:`\|E_{S,T}\|_F^2 \le |S|\varepsilon^2`, so by Eckart–Young
    :math:`\mathrm{rank}_\varepsilon(A) \ge \min\{k : \sum_{l>k} \sigma_l(A_{S,T})^2 \le |S|\varepsilon^2\}`;
    ``verify`` checks :math:`t_{\mathrm{rank}-1} > |S|\varepsilon^2` with the proven bounds of
    :func:`frobenius_tail_bounds`. ``rows``, ``cols``: distinct in-range indices or ``None`` (all)."""

    rank: int = 0
    rows: np.ndarray | None = None
    cols: np.ndarray | None = None
    kind: str = "frobenius-tail"

    def _parse(self, n: int, m: int):
        rank = count_value("rank", self.rank)
        rows = None if self.rows is None else index_array("rows", self.rows, n)
        cols = None if self.cols is None else index_array("cols", self.cols, m)
        return rank, rows, cols

    def certified_rank(self, A, eps: float) -> int | None:
        """The stored rank when the proven tail bound exceeds the budget; ``None`` otherwise."""
        A, eps = _arguments(A, eps)
        parsed = parse_stored(self._parse, *A.shape)
        if parsed is None:
            return None
        rank, rows, cols = parsed
        if rank == 0:
            return 0
        S = A if rows is None else A[rows]
        S = S if cols is None else S[:, cols]
        if rank > min(S.shape):
            return None
        try:
            t = frobenius_tail_bounds(S)
        except np.linalg.LinAlgError:  # the SVD did not converge: nothing is certified
            return None
        return rank if t[rank - 1] > frobenius_budget(S.shape[0], eps) else None


@dataclass
class NormCertificate(LowerCertificate):
    """Trivial lower certificate: ``rank_eps(A) >= 1`` (``rank`` 1) because the stored ``row`` has l1
    mass above ``eps``, so ``B = 0`` fails; ``rank`` 0 claims nothing."""

    rank: int = 1
    row: int = 0
    kind: str = "norm"

    def _parse(self, n: int):
        rank = count_value("rank", self.rank)
        if rank > 1:
            raise ValueError(f"a norm certificate claims rank 0 or 1, got {rank}")
        return rank, int(index_array("row", [self.row], n)[0]) if rank else 0

    def certified_rank(self, A, eps: float) -> int | None:
        """1 when the stored row's exact l1 mass provably exceeds ``eps``, 0 for rank 0."""
        A, eps = _arguments(A, eps)
        parsed = parse_stored(self._parse, A.shape[0])
        if parsed is None:
            return None
        rank, i = parsed
        if rank == 0:
            return 0
        s, rnd = row_l1_blockwise(A[i:i + 1], bound=True)
        return 1 if s[0] - 2 * rnd[0] > eps else None


@dataclass
class SubspaceCertificate(UpperCertificate):
    """Upper certificate: ``B = L @ R`` (L (n, k), R (k, m)) with ``||A - B|| <= eps``, so
    ``rank_eps(A) <= k``. Row errors carry the proven rounding bound of
    :func:`~attnrank_lite.engine.norms.row_l1_blockwise`; rows within rounding of ``eps`` are settled
    in exact rational arithmetic. ``source`` says how it was found (not read by ``verify``)."""

    L: np.ndarray
    R: np.ndarray
    source: str = ""
    kind: str = "subspace"

    @property
    def rank(self) -> int:
        """``k``, the columns of ``L`` (of the plain array: a subclass's ``shape`` is not read)."""
        return int(_plain(self.L).shape[1])

    def _parse(self, n: int, m: int):
        L = real_array("L", self.L, ndim=2)
        R = real_array("R", self.R, ndim=2)
        if L.shape[0] != n or R.shape[1] != m or L.shape[1] != R.shape[0]:
            raise ValueError(f"factors of shapes {L.shape} and {R.shape} do not fit A of shape {(n, m)}")
        return L, R

    def certified_rank(self, A, eps: float) -> int | None:
        """``k`` (columns of the parsed ``L``) when ``max_i sum_j |A - LR|_ij <= eps`` holds
        exactly on the stored float ``A``; ``None`` otherwise."""
        A, eps = _arguments(A, eps)
        parsed = parse_stored(self._parse, *A.shape)
        if parsed is None:
            return None
        L, R = parsed
        return L.shape[1] if _factorisation_meets(A, L, R, eps) else None


def _factorisation_meets(A: np.ndarray, L: np.ndarray, R: np.ndarray, eps: float) -> bool:
    """Exact test of ``max_i sum_j |A - LR|_ij <= eps`` for checked plain factors."""
    if A.shape[0] == 0:
        return True
    err, rnd = row_l1_blockwise(A, L, R, bound=True)
    if not (np.isfinite(err).all() and np.isfinite(rnd).all()):
        return False
    if np.any(err - 2 * rnd > eps):
        return False
    unsure = np.flatnonzero(err + 2 * rnd > eps)
    if np.count_nonzero(L[unsure]) * A.shape[1] > 4_000_000:
        return False  # too many rows within rounding of eps to settle exactly: refuse
    target = Fraction(eps)
    return all(_exact_row_error(A[i], L[i], R) <= target for i in unsure)


def _exact_row_error(a: np.ndarray, l: np.ndarray, R: np.ndarray) -> Fraction:
    """:math:`\\sum_j |a_j - (l R)_j|` in exact rational arithmetic (for rows within rounding of eps)."""
    nz = np.flatnonzero(l)
    lf = [Fraction(x) for x in l[nz].tolist()]
    Rn = R[nz]
    total = Fraction(0)
    for j, aj in enumerate(a.tolist()):
        total += abs(Fraction(aj) - sum(x * Fraction(r) for x, r in zip(lf, Rn[:, j].tolist())))
    return total


def row_l1_at_most(A, eps: float) -> bool:
    r"""Exact test of :math:`\max_i \sum_j |A_{ij}| \le \varepsilon` for the stored float matrix: the
    check of the certificate ``B = 0`` (:ref:`prop-exact-cases`), a factorisation of rank 0."""
    A, eps = _arguments(A, eps)
    return _factorisation_meets(A, np.zeros((A.shape[0], 0)), np.zeros((0, A.shape[1])), eps)
