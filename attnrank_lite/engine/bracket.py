r"""``rank_bracket``: certified lower and upper bounds on the max-row-l1 approximation rank.

.. math:: \mathrm{rank}_\varepsilon(A) = \min\{\mathrm{rank}\,B :
          \max_i \textstyle\sum_j |A_{ij} - B_{ij}| \le \varepsilon\}

(the book's :ref:`def-rank-eps`). Each side of a bracket is a certificate of
:mod:`attnrank_lite.engine.certificates` that ``RankBracket.verify`` rechecks from its stored data
(:ref:`prop-certificate-chain`); ``[0, 0]`` is returned exactly when ``B = 0`` meets ``eps``
for the stored float matrix (:ref:`prop-exact-cases`).
"""
from __future__ import annotations

import numpy as np

from .assemble import assemble_brackets, check_effort
from .certified_bracket import RankBracket
from .checks import eps_value, real_matrix
from .harmonic import SPHERE_TOL, HarmonicBasis
from .row_source import RowSource

__all__ = ["RankBracket", "rank_bracket", "rank_brackets"]


def rank_bracket(A, eps: float, method: str = "auto", seed: int = 0, points=None, limits=None,
                 effort: str = "auto") -> RankBracket:
    r"""Certified bracket on the max-row-l1 approximation rank of ``A``.

    Lower side: the best of the greedy cluster-mass certificate, the Frobenius-tail certificate
    (exact spectrum of ``A``, or of an evenly spaced row submatrix on the randomized path) and the
    trivial norm certificate. Upper side: the smallest ``k`` found by bisection over the nested
    family ``A V_k V_k^T`` of top right-singular subspaces (dense SVD, or a randomized range
    finder for large matrices), then the same subspaces with every row fitted in l1
    (:mod:`attnrank_lite.engine.l1fit`, within ``CostLimits.l1``). Both certificates verify on
    ``A``.

    Parameters
    ----------
    A : array_like, shape (n, m)
        Typically a row-stochastic attention matrix (the cluster-mass search needs ``A >= 0``;
        other matrices get the Frobenius and norm certificates only).
    eps : float
        Error level, ``eps >= 0``.
    method : {"auto", "dense", "randomized"}
        ``auto`` uses ``dense`` when ``min(n, m) <= DENSE_LIMIT`` (:mod:`attnrank_lite.engine.assemble`).
    seed : int
        Seed for the randomized path (deterministic).
    points : array_like, shape (n, d), optional
        The queries as points (self-attention: also the keys, on the unit sphere). Adds the
        Neumann lower search and the harmonic upper family (:mod:`attnrank_lite.engine.assemble`).
    limits : CostLimits, optional
        Cost limits of the best-of rule (:class:`~attnrank_lite.engine.assemble.CostLimits`;
        e.g. ``CostLimits(l1=0)`` leaves out the l1-fitted family).
    effort : {"auto", "max"}
        ``"auto"`` (the default): the l1-fitted family runs only where its cost estimate and
        expected gain make it worth it (:class:`~attnrank_lite.engine.assemble.Estimate`);
        ``"max"``: every family within ``limits``.

    Returns
    -------
    RankBracket

    Examples
    --------
    >>> import numpy as np
    >>> rank_bracket(np.eye(5), 0.5)
    RankBracket(eps=0.5, [5, 5], lower by cluster-mass)
    """
    return rank_brackets(A, [eps], method=method, seed=seed, points=points, limits=limits, effort=effort)[0]


def rank_brackets(A, eps_values, method: str = "auto", seed: int = 0, points=None,
                  limits=None, effort: str = "auto") -> list[RankBracket]:
    r"""Certified brackets of ``A`` at several error levels, sharing one factorisation.

    Same certificates as :func:`rank_bracket` (which calls this with one level), but the SVD
    (dense path) or the randomized nested family (randomized path, built for the smallest
    ``eps``, which needs the largest rank) and the exact submatrix spectrum for the Frobenius
    bound are computed once and searched for every level. The best-of rule is
    :func:`attnrank_lite.engine.assemble.best_of`.

    Parameters
    ----------
    A : array_like, shape (n, m)
    eps_values : sequence of float
        Error levels, each ``>= 0``.
    method : {"auto", "dense", "randomized"}
    seed : int
    points : array_like, shape (n, d), optional
        See :func:`rank_bracket`.
    limits : CostLimits, optional
        See :func:`rank_bracket`.
    effort : {"auto", "max"}
        See :func:`rank_bracket`.

    Returns
    -------
    list of RankBracket
        In the order of ``eps_values``.
    """
    effort = check_effort(effort)
    A = real_matrix("A", A)
    if np.ndim(eps_values) == 0:
        eps_values = [eps_values]
    eps_list = [eps_value(e) for e in eps_values]
    if method not in ("auto", "dense", "randomized"):
        raise ValueError(f"method must be 'auto', 'dense' or 'randomized', got {method!r}")
    n, m = A.shape
    P = basis = None
    if points is not None and A.size:
        P = real_matrix("points", points)
        if P.shape[0] != n:
            raise ValueError(f"points has {P.shape[0]} rows but A has {n} rows")
        on_sphere = n == m and P.shape[1] >= 2 and bool(
            np.all(np.abs(np.linalg.norm(P, axis=1) - 1) <= SPHERE_TOL))
        basis = HarmonicBasis(P) if on_sphere else None
    return assemble_brackets(RowSource.from_matrix(A), eps_list, points=P, basis=basis, method=method,
                             seed=seed, limits=limits, effort=effort)
