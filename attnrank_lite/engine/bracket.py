r"""``rank_bracket``: certified lower and upper bounds on :math:`\mathrm{rank}_\varepsilon(A)`
(:ref:`def-rank-eps`), each side a certificate that ``RankBracket.verify`` rechecks
(:ref:`prop-certificate-chain`); ``[0, 0]`` exactly when ``B = 0`` meets eps (:ref:`prop-exact-cases`)."""
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
    """Certified bracket on the max-row-l1 approximation rank of ``A`` (the families and their order:
    :mod:`attnrank_lite.engine.assemble`).

    Parameters
    ----------
    A : array_like, shape (n, m)
        Typically row-stochastic (the cluster-mass search needs ``A >= 0``).
    eps : float
    method : {"auto", "dense", "randomized"}
        ``auto``: ``dense`` when ``min(n, m) <= DENSE_LIMIT``; ``seed`` seeds the randomized path.
    points : array_like, shape (n, d), optional
        The queries (self-attention on the unit sphere: also the keys): Neumann and harmonic families.
    limits : CostLimits, optional
        E.g. ``CostLimits(l1=0)`` leaves out the l1-fitted family.
    effort : {"auto", "max"}
        ``"max"``: every family within ``limits``; ``"auto"``: the expensive ones where they pay.

    Examples
    --------
    >>> import numpy as np
    >>> rank_bracket(np.eye(5), 0.5)
    RankBracket(eps=0.5, [5, 5], lower by cluster-mass)"""
    return rank_brackets(A, [eps], method=method, seed=seed, points=points, limits=limits, effort=effort)[0]


def rank_brackets(A, eps_values, method: str = "auto", seed: int = 0, points=None,
                  limits=None, effort: str = "auto") -> list[RankBracket]:
    """Certified brackets of ``A`` at each of ``eps_values`` (in their order), as :func:`rank_bracket`
    with the factorisations and spectra shared by all levels."""
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
