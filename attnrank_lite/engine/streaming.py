r"""Certified brackets from the points themselves, without storing the attention matrix.

:func:`point_bracket` brackets :math:`\mathrm{rank}_\varepsilon(A)` for
:math:`A = \mathrm{rowsoftmax}(\beta QK^\top + \mathbf 1\log w^\top)` with keys on the unit
sphere. Every pass over ``A`` (certificate search and verification) rebuilds row blocks from the
points with :func:`attnrank_lite.engine.attention.softmax_attention` (one code path with the dense
matrix), so memory is :math:`O(\text{block}\cdot m)` plus the factors of the upper certificate.

* Upper side: the harmonic certificate :math:`B = (AV)V^\top` of :mod:`attnrank_lite.engine.harmonic`
  (the book's :ref:`thm-sphere-upper`), smallest degree found, verified row block by row
  block with the rigorous margin of ``SubspaceCertificate.verify``.
* Lower side: the Neumann certificate of :mod:`attnrank_lite.engine.neumann` (farthest-point centres
  among the queries, Voronoi key groups; the book's :ref:`prop-neumann-lower`), which only needs
  the rows of its centres; the norm certificate; on instances small enough to afford it
  (``n * m <= FROBENIUS_LIMIT``) the Frobenius-tail certificate of an evenly spaced row
  submatrix and the greedy cluster-mass certificate (on a temporary copy of ``A``: at most
  ``FROBENIUS_LIMIT`` entries).

The returned :class:`~attnrank_lite.engine.bracket.RankBracket` holds ordinary certificates: when ``A``
fits in memory, ``bracket.verify(A, eps)`` rechecks them on it.
"""
from __future__ import annotations

import numpy as np

from .attention import query_key_pair, softmax_attention
from .bracket import RankBracket
from .certificates import NormCertificate, SubspaceCertificate
from .checks import eps_value, finite_nonnegative, gamma
from .checks import log_weights as _check_log_weights
from .harmonic import HarmonicBasis, harmonic_search
from .nested import nested_family_search
from .neumann import farthest_point_order, neumann_search
from .range_finder import randomized_range_finder
from .row_source import RowSource, evenly_spaced_rows
from .upper import identity_certificate

__all__ = ["point_bracket", "point_brackets", "FROBENIUS_LIMIT", "SVD_LIMIT"]

#: the Frobenius-tail lower certificate (an SVD of a row submatrix) is tried when n * m is at most this
FROBENIUS_LIMIT = 1024 * 1024
#: the streamed randomized SVD family (four float32 passes of the range finder and one float64
#: pass of the search, each of cost n * m * l) is tried, next to the harmonic family, when n * m
#: is at most this (``svd="auto"``, the default). Measured on 3,000 random points of S^3 at
#: beta = 16 (benchmarks/README.md): the family costs about 6x the time to form A.
SVD_LIMIT = 4096 * 4096
_FROB_ROWS = 1024


class _LazyOrder:
    """Farthest-point ordering of the queries, extended on demand (prefixes are stable)."""

    def __init__(self, P):
        self.P = P
        self.order = np.zeros(0, dtype=np.int64)

    def __getitem__(self, sl):
        stop = sl.stop
        if stop > self.order.size:
            self.order = farthest_point_order(self.P, min(self.P.shape[0], max(stop, 2 * self.order.size)))
        return self.order[sl]

    @property
    def size(self):
        return self.P.shape[0]


def point_brackets(Q, beta: float, eps_values, *, K=None, log_weights=None, basis: HarmonicBasis | None = None,
                   svd="auto", block: int = 512) -> list[RankBracket]:
    r"""Certified brackets of the attention of queries ``Q`` and keys ``K`` at several eps.

    Same as :func:`point_bracket`; the passes over ``A`` are shared between the error levels.

    Returns
    -------
    list of RankBracket
        In the order of ``eps_values``.
    """
    Q, K = query_key_pair(Q, K)
    beta = finite_nonnegative("beta", beta)
    eps_list = [eps_value(e) for e in np.atleast_1d(np.asarray(eps_values, dtype=np.float64)).tolist()]
    n, m = Q.shape[0], K.shape[0]
    lw = None if log_weights is None else _check_log_weights(log_weights, m)
    if lw is not None and not np.isfinite(lw).any():
        raise ValueError("log_weights must have at least one finite entry")
    if basis is None:
        basis = HarmonicBasis(K, lw)
    elif basis.m != m or basis.K.shape != K.shape or not np.array_equal(basis.K, K):
        raise ValueError("basis was built for other keys than K")
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be a positive integer, got {block!r}")
    if svd not in ("auto", True, False):
        raise ValueError(f"svd must be 'auto', True or False, got {svd!r}")

    def rows_of(idx):
        return softmax_attention(Q[idx], K, beta, lw)

    # row masses: the zero certificate and the norm certificate. Row 0 alone settles both when
    # its mass exceeds every eps (softmax rows have mass ~1); otherwise one pass over all rows.
    mass = np.abs(rows_of(slice(0, 1))).sum(axis=1)
    if float(mass[0]) * (1 - gamma(m + 1)) <= max(eps_list, default=0.0):
        mass = np.empty(n)
        for s in range(0, n, block):
            mass[s:s + block] = np.abs(rows_of(slice(s, s + block))).sum(axis=1)
    mass_hi = mass * (1 + gamma(m + 1))
    order = _LazyOrder(Q)
    frob_S = frob_rows = small_A = None
    out: list = [None] * len(eps_list)
    need = []
    lowers = {}
    for e, eps in enumerate(eps_list):
        if float(mass_hi.max()) <= eps:
            zero = SubspaceCertificate(np.zeros((n, 0)), np.zeros((0, m)), source="B = 0")
            out[e] = RankBracket(eps, NormCertificate(rank=0), zero)
            continue
        i = int(np.argmax(mass))
        lower = NormCertificate(rank=1, row=i) if mass[i] * (1 - gamma(m + 1)) > eps else NormCertificate(rank=0)
        neu = neumann_search(rows_of, n, m, eps, order, lo=0)
        if neu.rank > lower.rank:
            lower = neu
        if n * m <= FROBENIUS_LIMIT:
            from .lower import cluster_mass_lower_bound, frobenius_tail_lower_bound

            if small_A is None:  # small instance: a temporary copy for the greedy cluster search
                small_A = np.empty((n, m))
                for s in range(0, n, block):
                    small_A[s:s + block] = rows_of(slice(s, s + block))
            cm = cluster_mass_lower_bound(small_A, eps)
            if cm.rank > lower.rank:
                lower = cm

            if frob_rows is None:
                frob_rows = evenly_spaced_rows(n, _FROB_ROWS)
                frob_S = rows_of(frob_rows)
            fr = frobenius_tail_lower_bound(frob_S, eps)
            if fr.rank > lower.rank:
                fr.rows = None if frob_rows.size == n else frob_rows
                lower = fr
        lowers[e] = lower
        need.append(e)
    del small_A
    if need:
        lo = min(lowers[e].rank for e in need) - 1
        source = RowSource(n, m, rows_of, block=block)
        ups = harmonic_search(source, basis, [eps_list[e] for e in need], lo=max(0, lo))
        k_h = max([u.rank for u in ups if u is not None] or [min(n, m)])
        l = min(n, m, k_h + 10)
        if svd is True or (svd == "auto" and n * m <= SVD_LIMIT):
            V = randomized_range_finder(source, l).V
            found = nested_family_search(source, V, range(1, l + 1), [eps_list[e] for e in need], lo=max(0, lo))
            for j, res in enumerate(found):
                if res is not None and (ups[j] is None or res[0] < ups[j].rank):
                    ups[j] = SubspaceCertificate(res[1], np.ascontiguousarray(V[:, :res[0]].T),
                                                 source=f"streamed randomized SVD (l={l})")
        for e, up in zip(need, ups):
            if up is None:
                up = identity_certificate(rows_of, n, m, block)
            out[e] = RankBracket(eps_list[e], lowers[e], up)
    return out


def point_bracket(Q, beta: float, eps: float, *, K=None, log_weights=None, basis: HarmonicBasis | None = None,
                  svd="auto", block: int = 512) -> RankBracket:
    r"""Certified bracket on :math:`\mathrm{rank}_\varepsilon(A)`, ``A`` the attention of ``Q`` on ``K``,
    computed from the points without storing ``A``.

    Parameters
    ----------
    Q : array_like, shape (n, d)
        Queries (any finite points).
    beta : float
        Inverse temperature, ``>= 0``.
    eps : float
        Error level, ``>= 0``.
    K : array_like, shape (m, d), optional
        Keys, on the unit sphere :math:`S^{d-1}`; default ``K = Q`` (self-attention).
    log_weights : array_like, shape (m,), optional
        Key log-weights.
    basis : HarmonicBasis, optional
        A basis of the same keys, shared across calls (it does not depend on ``beta``).
    svd : {"auto", True, False}
        Also search the top-singular-subspace family, from a randomized range finder run on row
        blocks (sketch of the harmonic rank plus 10): ``"auto"`` when ``n * m <= SVD_LIMIT``.
        The smaller certified rank wins.
    block : int
        Rows per generated block (memory about ``4 * block * m * 8`` bytes).

    Returns
    -------
    RankBracket
        ``upper_certificate.source`` is ``"harmonic degree L"`` (``"B = 0"`` or ``"identity"`` in
        the edge cases); ``lower_kind`` is ``"neumann"``, ``"frobenius-tail"`` or ``"norm"``.
        ``verify(A, eps)`` rechecks both on a materialised
        ``A = softmax_attention(Q, K, beta, log_weights)``.

    Examples
    --------
    >>> from attnrank_lite.laws.geometry import fibonacci_sphere
    >>> b = point_bracket(fibonacci_sphere(512), 16.0, 0.25)
    >>> b.lower <= b.upper
    True
    """
    return point_brackets(Q, beta, [eps], K=K, log_weights=log_weights, basis=basis, svd=svd, block=block)[0]

