r"""Certified brackets from the points themselves, without storing the attention matrix: the points
become a :class:`~attnrank_lite.engine.row_source.RowSource` (memory :math:`O(\text{block}\cdot m)`
plus the upper factors) and :mod:`attnrank_lite.engine.assemble` applies the best-of rule. The
certificates are ordinary ones: when ``A`` fits in memory, ``bracket.verify(A, eps)`` rechecks them."""
from __future__ import annotations

import numpy as np

from .assemble import CostLimits, assemble_brackets, check_effort
from .attention import query_key_pair
from .certified_bracket import RankBracket
from .checks import eps_value
from .harmonic import HarmonicBasis
from .row_source import RowSource

__all__ = ["point_bracket", "point_brackets"]


def point_brackets(Q, beta: float, eps_values, *, K=None, log_weights=None, basis: HarmonicBasis | None = None,
                   svd="auto", block: int = 512, limits: CostLimits | None = None,
                   effort: str = "auto") -> list[RankBracket]:
    """:func:`point_bracket` at several eps (in their order), passes shared; ``limits``: the ``CostLimits``."""
    effort = check_effort(effort)
    Q, K = query_key_pair(Q, K)
    eps_list = [eps_value(e) for e in np.atleast_1d(np.asarray(eps_values, dtype=np.float64)).tolist()]
    if svd not in ("auto", True, False):
        raise ValueError(f"svd must be 'auto', True or False, got {svd!r}")
    source = RowSource.from_points(Q, beta, K=K, log_weights=log_weights, block=block)
    if basis is None:
        basis = HarmonicBasis(K, source.points[3])
    elif basis.m != source.m or basis.K.shape != K.shape or not np.array_equal(basis.K, K):
        raise ValueError("basis was built for other keys than K")
    return assemble_brackets(source, eps_list, points=Q, basis=basis, svd=svd, limits=limits, effort=effort)


def point_bracket(Q, beta: float, eps: float, *, K=None, log_weights=None, basis: HarmonicBasis | None = None,
                  svd="auto", block: int = 512, effort: str = "auto") -> RankBracket:
    r"""Certified bracket on :math:`\mathrm{rank}_\varepsilon(A)`, ``A`` the attention of ``Q`` on ``K``,
    computed from the points without storing ``A``; ``verify(softmax_attention(Q, K, beta,
    log_weights), eps)`` rechecks it.

    Parameters
    ----------
    Q : array_like, shape (n, d)
    beta, eps : float
    K : array_like, shape (m, d), optional
        Keys on the unit sphere; default ``K = Q``.
    log_weights : array_like, shape (m,), optional
    basis : HarmonicBasis, optional
        A basis of the same keys, to share across calls.
    svd : {"auto", True, False}
        The streamed SVD family; ``"auto"``: when ``n * m`` is within ``CostLimits.streamed_svd``.
    block : int
    effort : {"auto", "max"}
        As in :func:`~attnrank_lite.engine.bracket.rank_bracket`.

    Examples
    --------
    >>> from attnrank_lite.laws.geometry import fibonacci_sphere
    >>> b = point_bracket(fibonacci_sphere(512), 16.0, 0.25)
    >>> b.lower <= b.upper
    True"""
    return point_brackets(Q, beta, [eps], K=K, log_weights=log_weights, basis=basis, svd=svd, block=block,
                          effort=effort)[0]

