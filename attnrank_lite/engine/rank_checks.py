r"""The numerical checks of chapter 1, one function per statement.

Each function builds the table a chapter-1 cell shows and the check it prints, from the
engine (:func:`attnrank_lite.rank_bracket`, the certificates) and the constructions of
:mod:`attnrank_lite.quotient.constructions`:

* ``prop-bounded-outputs``: :func:`bounded_outputs_table`;
* ``prop-exact-cases``: :func:`exact_case_table`;
* ``prop-invariances`` (c) with ``prop-frobenius-tail``: :func:`eps_sweep_table`;
* ``prop-multiplicity``: :func:`multiplicity_table`;
* the spectral contrast: :func:`spectral_contrast_table`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .attention import softmax_attention
from .bracket import rank_bracket, rank_brackets
from .bracket_algebra import monotone_envelope
from .examples import (
    exact_cases,
    merge_duplicate_keys,
    random_bounded_values_max,
    spectral_numerical_rank,
    split_keys,
)
from .lower import frobenius_tail_lower_bound
from .norms import row_l1, worst_case_values

__all__ = [
    "bounded_outputs_table",
    "eps_sweep_table",
    "exact_case_table",
    "multiplicity_table",
    "spectral_contrast_table",
]


def bounded_outputs_table(E, trials: int, seed: int = 0, tol: float = 1e-12):
    r"""``prop-bounded-outputs`` on one error matrix ``E``.

    Parameters
    ----------
    E : array_like, shape (n, m)
    trials : int
        Random value matrices with entries in [-1, 1] (half uniform, half signs).
    seed : int
    tol : float
        Rounding tolerance of the two checks.

    Returns
    -------
    table : pandas.DataFrame
        One row: ``row_l1(E)``, the sign vector's :math:`\max|EV|`, the best random one.
    checks : dict
        ``sign_attains`` (:math:`|\text{sign} - \|E\|| \le` tol) and ``random_below``
        (best random :math:`\le \|E\| +` tol).
    """
    norm = row_l1(E)
    _, attained = worst_case_values(E)
    best = random_bounded_values_max(E, trials, seed=seed)
    table = pd.DataFrame([{"row_l1(E)": norm, "sign vector": attained,
                           f"best of {trials} random V": best}])
    checks = {"sign_attains": bool(abs(attained - norm) <= tol),
              "random_below": bool(best <= norm + tol)}
    return table, checks


def exact_case_table(n: int, blocks: int, eps: float) -> pd.DataFrame:
    r"""Brackets of the exact cases of ``prop-exact-cases`` at ``eps``, 1 and 1.5.

    Returns
    -------
    pandas.DataFrame
        Columns ``matrix, eps, exact rank`` (the proposition's value: the case's rank for
        eps < 1, else 0), ``lower, upper, verified``.
    """
    rows = []
    for name, (A, rank) in exact_cases(n, blocks).items():
        for e in (eps, 1.0, 1.5):
            b = rank_bracket(A, e)
            rows.append({"matrix": name, "eps": e, "exact rank": rank if e < 1 else 0,
                         "lower": b.lower, "upper": b.upper, "verified": b.verify(A, e)})
    return pd.DataFrame(rows)


def eps_sweep_table(A, eps_values) -> pd.DataFrame:
    r"""Brackets of ``A`` over ``eps_values`` with the Frobenius-tail lower bound beside them
    and the envelopes of :func:`attnrank_lite.engine.bracket_algebra.monotone_envelope`.

    Returns
    -------
    pandas.DataFrame
        Sorted by eps: the bracket's columns, ``frobenius_tail`` (``prop-frobenius-tail`` on all
        rows), ``frobenius_verified``, ``lower_envelope``, ``upper_envelope``.
    """
    rows = []
    # one factorisation for every level (rank_brackets), not one SVD per level
    for e, br in zip(eps_values, rank_brackets(A, list(eps_values))):
        ft = frobenius_tail_lower_bound(A, e)
        rows.append({**br.as_dict(), "frobenius_tail": ft.rank, "frobenius_verified": ft.verify(A, e)})
    return monotone_envelope(pd.DataFrame(rows))


def multiplicity_table(X, multiplicities, beta: float, eps: float):
    r"""``prop-multiplicity``: keys ``X`` repeated ``multiplicities`` times, written out and merged.

    Parameters
    ----------
    X : array_like, shape (m, d)
        Queries and (distinct) keys.
    multiplicities : array_like of int, shape (m,)
    beta, eps : float

    Returns
    -------
    table : pandas.DataFrame
        Two rows (all copies; merged with log-weights): ``instance, keys`` and the bracket.
    column_change : float
        :math:`\max|A_\text{merged} - \text{column sums of } A_\text{full}|` (rounding only).
    """
    X = np.asarray(X, dtype=np.float64)
    K_full = np.repeat(X, np.asarray(multiplicities), axis=0)
    K_merged, logw, inverse = merge_duplicate_keys(K_full)
    A_full = softmax_attention(X, K_full, beta=beta)
    A_merged = softmax_attention(X, K_merged, beta=beta, log_weights=logw)
    A_summed = np.zeros_like(A_merged)
    np.add.at(A_summed.T, inverse, A_full.T)
    table = pd.DataFrame([
        {"instance": "all copies", "keys": A_full.shape[1], **rank_bracket(A_full, eps).as_dict()},
        {"instance": "merged with log-weights", "keys": A_merged.shape[1],
         **rank_bracket(A_merged, eps).as_dict()},
    ])
    return table, float(np.abs(A_merged - A_summed).max())


def spectral_contrast_table(matrices: dict, split_factors, eps: float) -> pd.DataFrame:
    r"""Spectral numerical rank against the certified bracket when every key is split.

    Parameters
    ----------
    matrices : dict
        ``name -> A``.
    split_factors : iterable of int
        Copies per key (:func:`attnrank_lite.engine.examples.split_keys`).
    eps : float

    Returns
    -------
    pandas.DataFrame
        Columns ``matrix, copies per key, keys, spectral numerical rank, lower, upper,
        verified``.
    """
    rows = []
    for c in split_factors:
        for name, A0 in matrices.items():
            A = split_keys(A0, c)
            b = rank_bracket(A, eps)
            rows.append({"matrix": name, "copies per key": c, "keys": A.shape[1],
                         "spectral numerical rank": spectral_numerical_rank(A, eps),
                         "lower": b.lower, "upper": b.upper, "verified": b.verify(A, eps)})
    return pd.DataFrame(rows)
