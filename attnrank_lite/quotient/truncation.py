r"""Total rank certificates through interaction truncations
(``prop-truncation-residual``, ``def-tolerance-dimension``).

For ``A = rowsoftmax(beta Q M K^T)`` and the rank-``s`` truncation ``M_s``,
the residual :math:`\tau_s = \max_i 2\tanh(\mathrm{osc}_i/4) \ge \|A - A_s\|`
leaves the budget :math:`\varepsilon - \tau_s` for ``A_s``, and
:math:`\mathrm{rank}_\varepsilon(A) \le \mathrm{rank}_{\varepsilon-\tau_s}(A_s)`.
"""
from __future__ import annotations

import numpy as np

from ..engine.attention import softmax_attention
from ..engine.bracket import rank_bracket
from ..engine.checks import finite_nonnegative
from .interaction import residual_bounds, truncate_interaction, visible_coordinates
from .polynomial import polynomial_certificate

__all__ = ["truncation_tradeoff"]


def truncation_tradeoff(Q, K, M, beta: float, eps: float, s_values=None,
                        max_degree: int = 64) -> list:
    r"""Total certificate for ``A = rowsoftmax(beta Q M K^T)`` through ``M_s``.

    For each ``s``, two certificates of ``A_s`` at the budget
    :math:`\varepsilon - \tau_s` are built, and each is then re-verified
    **against A at eps** from its stored data alone (its ``verify``, with its
    rounding margin), so neither rests on the floating-point value of
    :math:`\tau_s`:

    * the bracket's SVD upper side (a factorisation ``L R``);
    * the polynomial certificate (``prop-polynomial-certificate``) in the
      visible coordinates of ``A_s`` (:func:`visible_coordinates`: ``s``
      coordinates and key log-weights), count :math:`\binom{s' + D}{D}` with
      ``s'`` the visible dimension of ``A_s`` (at most ``s``).

    Parameters
    ----------
    Q : array_like, shape (n, a)
    K : array_like, shape (m, b)
    M : array_like, shape (a, b)
    beta, eps : float
        ``eps > 0``.
    s_values : iterable of int, optional
        Default ``0..min(a, b)``.
    max_degree : int
        Largest polynomial degree tried.

    Returns
    -------
    list of dict
        ``s``, ``tau_measured``, ``tau_tanh``, ``tau_sigma``, ``budget``,
        ``upper`` (SVD upper of ``A_s``), ``verified_on_A``, ``poly_dim``,
        ``poly_degree``, ``poly_count``, ``poly_verified_on_A`` (``None`` /
        ``False`` when there is no budget or no certificate).
    """
    Q = np.atleast_2d(np.asarray(Q, dtype=np.float64))
    K = np.atleast_2d(np.asarray(K, dtype=np.float64))
    M = np.atleast_2d(np.asarray(M, dtype=np.float64))
    eps = finite_nonnegative("eps", eps)
    A = softmax_attention(Q @ M, K, beta)
    if s_values is None:
        s_values = range(min(M.shape) + 1)
    rows = []
    for s in s_values:
        b = residual_bounds(Q, K, M, s, beta)
        budget = eps - b["tanh"]
        row = {"s": int(s), "tau_measured": b["measured"],
               "tau_tanh": b["tanh"], "tau_sigma": b["sigma"],
               "budget": budget, "upper": None, "verified_on_A": False,
               "poly_dim": None, "poly_degree": None, "poly_count": None,
               "poly_verified_on_A": False}
        if budget > 0:
            QMs = Q @ truncate_interaction(M, s)
            As = softmax_attention(QMs, K, beta)
            br = rank_bracket(As, budget, effort="max")  # every family, as the chapter's tables
            row["upper"] = br.upper
            row["verified_on_A"] = bool(br.upper_certificate.verify(A, eps))
            Qv, Kv, a = visible_coordinates(QMs, K)
            cert = polynomial_certificate(Qv, Kv, beta, budget,
                                          max_degree=max_degree,
                                          log_weights=beta * a)
            if cert is not None:
                row["poly_dim"] = cert.dim
                row["poly_degree"] = cert.degree
                row["poly_count"] = cert.count
                row["poly_verified_on_A"] = bool(cert.verify(A, eps))
        rows.append(row)
    return rows
