r"""The one nested-family search: the smallest member of :math:`B_k = (A V_k) V_k^\top`, :math:`V_k`
the first ``k`` columns of ``V`` (m, K), for ``k`` in a list of *cuts*, that meets eps; it serves
every upper family on stored and streamed matrices.

Every cut's row-l1 error on a sample of rows is computed incrementally; a cut failing on the
sample fails on ``A``, so the first cut passing there is the smallest that can pass. One pass
over ``A`` then checks it with the proven margin
:math:`\gamma_{k+m+2}(\sum_j|A_{ij}| + (|L_k||V_k^\top|\mathbf 1)_i)`; a failing candidate adds
its worst rows to the sample, and when the rounds run out bisection between a failing and a
passing cut finishes. The error is not monotone in ``k`` (chapter 1,
:ref:`Certificates <sec-bracket-certificates>`): the bisection returns a valid member whose next
smaller cut fails, not always the least."""
from __future__ import annotations

import numpy as np

from .certificates import search_target
from .checks import gamma
from .row_source import RowSource, evenly_spaced_rows

__all__ = ["nested_family_search"]

#: sample rows of the first round (evenly spaced)
SAMPLE_ROWS = 256
#: worst rows added to the sample after a candidate fails on the full matrix
ADDED_ROWS = 32
#: sample rounds before the bisection fallback
MAX_ROUNDS = 6
#: with more than twice this many cuts, sample errors are computed at every CHUNK-th cut first
CHUNK = 16


class _Family:
    """The family ``B_k = (A V_k) V_k^T`` of one search: errors on a sample, full checks."""

    def __init__(self, source: RowSource, V: np.ndarray, cuts: list[int]):
        self.source, self.V, self.cuts = source, V, cuts
        self._abs_R_rows = None  # (|V^T| 1)_k: row sums of |R| for R = V^T, rounded upward

    def sample_errors(self, rows: np.ndarray, wanted=None) -> list[float]:
        """Largest row error of each cut on the sample ``rows`` (computed, no margin). With more than
        ``2 * CHUNK`` cuts, errors are first computed at every ``CHUNK``-th cut and, per ``(target,
        floor)`` in ``wanted``, the chunk holding the first passing end at or after ``floor`` is refined;
        the other cuts get ``inf`` (skipped as candidates: the search stays valid)."""
        cuts, V = self.cuts, self.V
        A_s = self.source.rows(rows)
        left = A_s @ V[:, : cuts[-1]]
        if not rows.size:
            return [0.0] * len(cuts)
        if len(cuts) <= 2 * CHUNK or wanted is None:
            return self._errors_from(A_s.copy(), left, 0, range(len(cuts)))
        ends = list(range(CHUNK - 1, len(cuts), CHUNK))
        if ends[-1] != len(cuts) - 1:
            ends.append(len(cuts) - 1)
        errors = [float("inf")] * len(cuts)
        for i, e in zip(ends, self._errors_from(A_s.copy(), left, 0, ends)):
            errors[i] = e
        for target, floor in wanted:
            first = next((j for j, i in enumerate(ends) if i >= floor and errors[i] <= target), None)
            if first is None:
                continue
            start = max(floor, ends[first - 1] + 1 if first else 0)
            done = cuts[start - 1] if start else 0
            residual = A_s - left[:, :done] @ V[:, :done].T
            for i, e in zip(range(start, ends[first]), self._errors_from(residual, left, done,
                                                                      range(start, ends[first]))):
                errors[i] = e
        return errors

    def _errors_from(self, residual: np.ndarray, left: np.ndarray, done: int, indices) -> list[float]:
        """Errors at the cut indices (increasing), updating ``residual`` (at ``done`` columns) in place."""
        out = []
        for i in indices:
            cut = self.cuts[i]
            residual -= left[:, done:cut] @ self.V[:, done:cut].T
            done = cut
            out.append(float(np.abs(residual).sum(axis=1).max()))
        return out

    def full_check(self, checked: list[int]):
        """One pass over ``A``: ``L = A V_top`` and, per cut index checked, each row's error plus margin."""
        source, V, cuts = self.source, self.V, self.cuts
        n, m = source.n, source.m
        top = cuts[max(checked)]
        if self._abs_R_rows is None or self._abs_R_rows.shape[0] < top:
            # |R| 1 = column sums of |V|, 256 columns at a time, rounded upward
            self._abs_R_rows = np.concatenate(
                [np.abs(V[:, j:min(top, j + 256)]).sum(axis=0) for j in range(0, top, 256)]
                or [np.zeros(0)]) * (1 + gamma(m + 2))
        abs_R_rows = self._abs_R_rows
        left = np.empty((n, top))
        bounds = {i: np.empty(n) for i in checked}
        gam = gamma(top + m + 2)
        first = cuts[min(checked)]
        for sl, A_b in source.blocks():
            P = A_b @ V[:, :top]
            left[sl] = P
            mass = np.abs(A_b).sum(axis=1)
            residual = A_b - P[:, :first] @ V[:, :first].T
            done = first
            abs_P = np.abs(P)
            for i in sorted(checked):
                cut = cuts[i]
                if cut > done:
                    residual -= P[:, done:cut] @ V[:, done:cut].T
                    done = cut
                margin = gam * (mass + abs_P[:, :cut] @ abs_R_rows[:cut]) * (1 + 4 * gamma(m + 2))
                bounds[i][sl] = np.abs(residual).sum(axis=1) + margin
        return left, bounds


def nested_family_search(source: RowSource, V: np.ndarray, cuts, eps_values, *, lo: int = 0,
                         sample: int = SAMPLE_ROWS, max_rounds: int = MAX_ROUNDS, sample_errors=None):
    """Smallest member ``B_k = (A V_k) V_k^T`` of a nested family meeting each eps: per eps ``(k, L)``,
    ``k`` a cut and ``L = A V_k`` (n, k) with every row error plus margin ``<= eps``, or ``None``.

    Parameters
    ----------
    source : RowSource
    V : ndarray, shape (m, K)
    cuts : sequence of int
        Allowed ranks, increasing, the last ``<= K``; those ``<= lo`` (a rank known to fail) skipped.
    eps_values : sequence of float
    sample, max_rounds : int
        Rows of the first sample; sample rounds before the bisection fallback.
    sample_errors : dict, optional
        ``{cut: max row error on the default sample}`` already computed."""
    cuts = [int(c) for c in cuts if c > lo]
    eps_list = [float(e) for e in eps_values]
    if not cuts:
        return [None] * len(eps_list)
    family = _Family(source, V, cuts)
    rows = evenly_spaced_rows(source.n, sample)
    found: list = [None] * len(eps_list)
    floor = [0] * len(eps_list)  # index into cuts: smaller cuts are known to fail
    passing = [None] * len(eps_list)  # (index, L) of a cut known to pass (for the fallback)
    # the top cut (the fallback's passing member) is checked only once a candidate has failed:
    # most searches accept their first candidate
    failed = [False] * len(eps_list)
    top = len(cuts) - 1
    for round_ in range(max_rounds):
        todo = [e for e in range(len(eps_list)) if found[e] is None and floor[e] < len(cuts)]
        if not todo:
            break
        if round_ == 0 and sample_errors is not None and all(c in sample_errors for c in cuts):
            errors = [sample_errors[c] for c in cuts]
        else:
            errors = family.sample_errors(rows, [(search_target(eps_list[e]), floor[e]) for e in todo])
        candidate = {}
        for e in todo:
            target = search_target(eps_list[e])
            ok = [i for i in range(floor[e], len(cuts)) if errors[i] <= target]
            if ok:
                candidate[e] = ok[0]
            else:
                floor[e] = len(cuts)
        if not candidate:
            break
        need_top = any(failed[e] and passing[e] is None for e in range(len(eps_list)))
        checked = sorted(set(candidate.values()) | ({top} if need_top else set()))
        left, bounds = family.full_check(checked)
        _note_top(bounds, left, top, eps_list, failed, passing, found)
        for e, i in candidate.items():
            if bool(np.all(bounds[i] <= eps_list[e])):
                found[e] = (cuts[i], left[:, : cuts[i]])
                continue
            floor[e] = i + 1
            rows = np.union1d(rows, np.argsort(-bounds[i])[:ADDED_ROWS])
            failed[e] = True
            _note_top(bounds, left, top, eps_list, failed, passing, found)
    if any(failed[e] and found[e] is None and passing[e] is None for e in range(len(eps_list))):
        left, bounds = family.full_check([top])
        _note_top(bounds, left, top, eps_list, failed, passing, found)
    for e in range(len(eps_list)):
        if found[e] is None and passing[e] is not None:
            found[e] = _bisect(family, eps_list[e], floor[e] - 1, *passing[e])
    return found


def _note_top(bounds, left, top, eps_list, failed, passing, found) -> None:
    """Record the top cut, when checked, as the passing member of the failed levels it meets."""
    if top not in bounds:
        return
    for e, eps in enumerate(eps_list):
        if failed[e] and found[e] is None and passing[e] is None and bool(np.all(bounds[top] <= eps)):
            passing[e] = (top, left)


def _bisect(family: _Family, eps: float, failing: int, passing: int, left: np.ndarray):
    """Bisection between a failing and a passing cut index, one full pass per step; keeps
    ``err(passing) <= eps < err(failing)`` (a valid member, not always the least)."""
    cuts = family.cuts
    while passing - failing > 1:
        mid = (failing + passing) // 2
        mid_left, bounds = family.full_check([mid])
        if bool(np.all(bounds[mid] <= eps)):
            passing, left = mid, mid_left
        else:
            failing = mid
    return cuts[passing], left[:, : cuts[passing]]
