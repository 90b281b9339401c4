r"""Certified brackets from the points themselves, without storing the attention matrix.

:func:`point_bracket` brackets :math:`\mathrm{rank}_\varepsilon(A)` for
:math:`A = \mathrm{rowsoftmax}(\beta QK^\top + \mathbf 1\log w^\top)` with keys on the unit
sphere. The points become a :class:`~attnrank_lite.engine.row_source.RowSource` whose row blocks
are rebuilt with :func:`attnrank_lite.engine.attention.softmax_attention` (one code path with the
dense matrix) on every pass, so memory is :math:`O(\text{block}\cdot m)` plus the factors of the
upper certificate, and the one bracket assembler (:mod:`attnrank_lite.engine.assemble`) applies
the best-of rule: Neumann, norm and (on small instances) cluster-mass and Frobenius-tail lower
certificates; harmonic (the book's :ref:`thm-sphere-upper`), streamed SVD and l1-fitted upper
certificates, the last two only where the cost-aware rule (``effort="auto"``, the default) expects
them to narrow the bracket enough for their cost; ``effort="max"`` runs them whatever they gain.

The returned :class:`~attnrank_lite.engine.certified_bracket.RankBracket` holds ordinary certificates: when ``A``
fits in memory, ``bracket.verify(A, eps)`` rechecks them on it.
"""
from __future__ import annotations

import numpy as np

from .assemble import FROBENIUS_LIMIT, STREAMED_SVD_LIMIT, CostLimits, assemble_brackets, check_effort
from .attention import query_key_pair
from .certified_bracket import RankBracket
from .checks import eps_value
from .harmonic import HarmonicBasis
from .row_source import RowSource

__all__ = ["point_bracket", "point_brackets", "FROBENIUS_LIMIT", "SVD_LIMIT"]

#: the streamed SVD family's limit on ``n * m`` (the assembler's ``STREAMED_SVD_LIMIT``)
SVD_LIMIT = STREAMED_SVD_LIMIT


def point_brackets(Q, beta: float, eps_values, *, K=None, log_weights=None, basis: HarmonicBasis | None = None,
                   svd="auto", block: int = 512, limits: CostLimits | None = None,
                   effort: str = "auto") -> list[RankBracket]:
    r"""Certified brackets of the attention of queries ``Q`` and keys ``K`` at several eps.

    Same as :func:`point_bracket`; the passes over ``A`` are shared between the error levels.
    ``limits`` overrides the cost limits of the best-of rule
    (:class:`~attnrank_lite.engine.assemble.CostLimits`).

    Returns
    -------
    list of RankBracket
        In the order of ``eps_values``.
    """
    effort = check_effort(effort)
    Q, K = query_key_pair(Q, K)
    eps_list = [eps_value(e) for e in np.atleast_1d(np.asarray(eps_values, dtype=np.float64)).tolist()]
    if svd not in ("auto", True, False):
        raise ValueError(f"svd must be 'auto', True or False, got {svd!r}")
    source = RowSource.from_points(Q, beta, K=K, log_weights=log_weights, block=block)
    m = source.m
    if basis is None:
        basis = HarmonicBasis(K, source.points[3])
    elif basis.m != m or basis.K.shape != K.shape or not np.array_equal(basis.K, K):
        raise ValueError("basis was built for other keys than K")
    return assemble_brackets(source, eps_list, points=Q, basis=basis, svd=svd, limits=limits, effort=effort)


def point_bracket(Q, beta: float, eps: float, *, K=None, log_weights=None, basis: HarmonicBasis | None = None,
                  svd="auto", block: int = 512, effort: str = "auto") -> RankBracket:
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
        Also search the top-singular-subspace family, from the randomized range finder run on
        row blocks (sketch of the harmonic rank plus 10): ``"auto"`` (the default) when
        ``n * m <= SVD_LIMIT`` (4096^2). The smaller certified rank wins.
    block : int
        Rows per generated block (memory about ``4 * block * m * 8`` bytes).
    effort : {"auto", "max"}
        ``"auto"`` (the default): the streamed SVD family and the l1-fitted family run only
        where their cost estimate and expected gain say they can narrow the bracket enough for
        their cost (:class:`~attnrank_lite.engine.assemble.Estimate`; not on a harmonic plateau
        the SVD cannot beat). ``"max"``: every family within the cost limits, whatever it can
        gain (several times slower; the chapters' stored tables use it).

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
    return point_brackets(Q, beta, [eps], K=K, log_weights=log_weights, basis=basis, svd=svd, block=block,
                          effort=effort)[0]

