r"""The one nested-family search: the smallest member of :math:`B_k = (A V_k) V_k^\top`, :math:`V_k`
the first ``k`` columns of ``V`` (m, K), for ``k`` in a list of *cuts*, that meets eps; it serves
every upper family on stored and streamed matrices.

Every cut's row-l1 error on a sample of rows is computed incrementally; a cut failing on the
sample fails on ``A``, so the first cut passing there is the smallest that can pass. One pass
over ``A`` then checks it with the proven margin
:math:`\gamma_{k+m+2}(\sum_j|A_{ij}| + (|L_k||V_k^\top|\mathbf 1)_i)` (in float32, with its own
proven margin, when ``n m k >= FAST_CHECK_MIN``; rows it leaves in doubt are rechecked in
float64, ``_Family.full_check``); a failing candidate adds
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
#: a full check of at least this many ``n * m * width`` runs in float32 first (rows that miss
#: a threshold there are checked again in float64); smaller ones run in float64 only
FAST_CHECK_MIN = 2**28
#: columns per float32 product of a fast full check (the inner length in its rounding bound)
FAST_CHUNK = 256
#: rows per float64 recheck of a fast full check (worst first)
RECHECK_ROWS = 64
#: float32 unit roundoff
_U32 = 2.0**-24
#: the smallest normal float32
_TINY32 = np.float32(2.0**-126)


def _gamma32(k: int) -> float:
    r"""Higham's :math:`\gamma_k` in float32 (:math:`u = 2^{-24}`), rounded up by ``1e-6``."""
    ku = k * _U32
    return ku / (1.0 - ku) * (1.0 + 1e-6) if ku < 0.5 else float("inf")


class _Family:
    """The family ``B_k = (A V_k) V_k^T`` of one search: errors on a sample, full checks."""

    def __init__(self, source: RowSource, V: np.ndarray, cuts: list[int]):
        self.source, self.V, self.cuts = source, V, cuts
        self._abs_R_rows = None  # (|V^T| 1)_k: row sums of |R| for R = V^T, rounded upward
        self._V32 = None  # V rounded to float32 (fast full checks)

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

    def full_check(self, checked: list[int], thresholds: dict | None = None):
        """One pass over ``A``: ``L = A V_top`` and, per cut index in ``checked``, each row's
        error plus its proven rounding margin.

        With ``thresholds`` (cut index -> the smallest eps its bounds will be compared with) and
        ``n * m * width >= FAST_CHECK_MIN``, the pass runs in float32 (:meth:`_fast_block`, its
        own proven margin), rows it leaves in doubt rechecked in float64. Every bound is proven
        for the returned ``L``, and a row meets every threshold whenever the all-float64
        computation of that row does: acceptance is never worse than the float64 pass.
        """
        source, V, cuts = self.source, self.V, self.cuts
        n, m = source.n, source.m
        top = cuts[max(checked)]
        if self._abs_R_rows is None or self._abs_R_rows.shape[0] < top:
            # |R| 1 = column sums of |V|, 256 columns at a time, rounded upward
            self._abs_R_rows = np.concatenate(
                [np.abs(V[:, j:min(top, j + 256)]).sum(axis=0) for j in range(0, top, 256)]
                or [np.zeros(0)]) * (1 + gamma(m + 2))
        left = np.empty((n, top))
        bounds = {i: np.empty(n) for i in checked}
        fast = thresholds is not None and n * m * top >= FAST_CHECK_MIN
        failed: set = set()  # cuts that fail in float64 (fast checks: no more rechecks)
        for sl, A_b in source.blocks():
            if fast:
                self._fast_block(sl, A_b, top, checked, thresholds, left, bounds, failed)
                continue
            P = A_b @ V[:, :top]
            left[sl] = P
            for i, b in self._bounds64(A_b, P, checked).items():
                bounds[i][sl] = b
        return left, bounds

    def _bounds64(self, A_b: np.ndarray, P: np.ndarray, checked) -> dict:
        r"""Row error bounds of ``B = P V_cut^T`` on the rows ``A_b`` for each checked cut, in
        float64: the computed row-l1 residual plus
        :math:`\gamma_{k+m+2}(\sum_j|A_{ij}| + (|P||V^\top|\mathbf 1)_i)`, rounded upward."""
        V, cuts, m = self.V, self.cuts, self.source.m
        abs_R_rows = self._abs_R_rows
        gam = gamma(cuts[max(checked)] + m + 2)
        first = cuts[min(checked)]
        mass = np.abs(A_b).sum(axis=1)
        residual = A_b - P[:, :first] @ V[:, :first].T
        done = first
        abs_P = np.abs(P)
        out = {}
        for i in sorted(checked):
            cut = cuts[i]
            if cut > done:
                residual -= P[:, done:cut] @ V[:, done:cut].T
                done = cut
            margin = gam * (mass + abs_P[:, :cut] @ abs_R_rows[:cut]) * (1 + 4 * gamma(m + 2))
            out[i] = np.abs(residual).sum(axis=1) + margin
        return out

    def _v32(self, top: int) -> np.ndarray:
        """``V[:, :top]`` rounded to float32 (kept for the next checks)."""
        if self._V32 is None or self._V32.shape[1] < top:
            self._V32 = np.asfortranarray(self.V[:, :top], dtype=np.float32)
        return self._V32

    def _fast_block(self, sl: slice, A_b: np.ndarray, top: int, checked, thresholds: dict, left, bounds,
                    failed: set) -> None:
        r"""One row block of :meth:`full_check` in float32, with float64 rechecks of the rows
        whose float32 bound misses a threshold.

        The coefficients are ``P = fl32(A32 V32)`` (any ``P`` is a valid left factor; it is
        stored in float64, exactly). The residual :math:`A - P V^\top` is computed in float32
        from ``A32 = fl32(A)`` (subnormal entries set to zero: an error of at most
        :math:`u|A| + 2^{-126}`) and ``V32 = fl32(V)``, subtracting the products of at most
        :data:`FAST_CHUNK` columns one after the other (``J`` subtractions in all). With
        :math:`u = 2^{-24}` and :math:`S = |P||V|^\top`, every entry's error is at most
        :math:`u|A| + uS` (rounding ``A``, ``V``) :math:`+ \gamma_{w}S` (a product of inner
        length ``w <= FAST_CHUNK``, any summation order: Higham (3.5)) :math:`+ Ju(1 +
        \gamma)(|A| + S)` (the subtractions), so at most :math:`\gamma_{w + J + 4}(|A| + S)`,
        plus an absolute ``2^-125`` per operation for underflow (flush-to-zero included).
        Summed over the row (in float64, rounded upward), this is the float32 bound; it adds
        :math:`6\gamma_{k+m+4}(|A| + S)`, so that a row it accepts also passes ``verify``'s float64
        check (computed error plus twice its margin :math:`2\gamma_{k+m+4}(|A| + S)`) without the
        exact-arithmetic fallback.

        Rows missing ``search_target`` of a threshold are rechecked in float64, worst first,
        :data:`RECHECK_ROWS` at a time, with the same coefficients, then with float64 ones (the
        all-float64 computation, :meth:`_bounds64`); a cut failing that joins ``failed`` and
        its rows keep their (valid, failing) float32 bounds.
        """
        V, cuts, m = self.V, self.cuts, self.source.m
        V32 = self._v32(top)
        A32 = A_b.astype(np.float32)
        # subnormal entries flushed to zero: within the bound's absolute 2^-125 for the rounding of
        # A; products with subnormal operands take 13x longer on some CPUs (beta = 128, 4,096 points)
        A32[np.abs(A32) < _TINY32] = 0
        P32 = A32 @ V32[:, :top]
        P = P32.astype(np.float64)
        left[sl] = P
        mass = np.abs(A_b).sum(axis=1)
        abs_P = np.abs(P)
        abs_R_rows = self._abs_R_rows
        ends = sorted(set(list(range(FAST_CHUNK, top, FAST_CHUNK)) + [cuts[i] for i in checked]))
        c32 = _gamma32(FAST_CHUNK + len(ends) + 4) * (1 + 1e-5)
        floor = m * (top + len(ends) + 4) * 2.0 ** -125
        up = 1 + 4 * gamma(m + 2)
        c32 += 6 * gamma(top + m + 4)  # room for verify's float64 check (norms.row_l1_blockwise)
        residual = A32
        done = 0
        want = {cuts[i]: i for i in checked}
        for end in ends:
            residual -= P32[:, done:end] @ V32[:, done:end].T
            done = end
            if end in want:
                i = want[end]
                mag = mass + abs_P[:, :end] @ abs_R_rows[:end]
                bounds[i][sl] = (np.abs(residual).sum(axis=1, dtype=np.float64) + c32 * mag + floor) * up
        del residual, A32
        rows = np.arange(sl.start, sl.stop)
        targets = {i: search_target(thresholds[i]) for i in checked}

        def excess(local):  # by how much the worst open cut misses its target, per local row
            open_ = [i for i in checked if i not in failed]
            if not open_:
                return np.full(local.size, -np.inf)
            return np.max([bounds[i][rows[local]] - targets[i] for i in open_], axis=0)

        todo = np.arange(A_b.shape[0])
        ex = excess(todo)
        todo = todo[~(ex <= 0)]
        todo = todo[np.argsort(-np.nan_to_num(ex[~(ex <= 0)], nan=np.inf), kind="stable")]
        for s in range(0, todo.size, RECHECK_ROWS):
            idx = todo[s:s + RECHECK_ROWS]
            idx = idx[~(excess(idx) <= 0)]
            if not idx.size:
                continue
            again = self._bounds64(A_b[idx], P[idx], checked)  # same coefficients, float64
            for i in checked:
                bounds[i][rows[idx]] = np.minimum(bounds[i][rows[idx]], again[i])
            idx = idx[~(excess(idx) <= 0)]
            if not idx.size:
                continue
            A_r = A_b[idx]  # float64 coefficients: the all-float64 computation of these rows
            P64 = A_r @ V[:, :top]
            left[rows[idx]] = P64
            for i, b in self._bounds64(A_r, P64, checked).items():
                bounds[i][rows[idx]] = b
                if not bool(np.all(b <= thresholds[i])):
                    failed.add(i)


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
        # each cut's bounds are compared with the eps of the levels it is the candidate of; the
        # top cut's with every open level's (_note_top)
        open_eps = min(eps_list[e] for e in range(len(eps_list)) if found[e] is None)
        thresholds = {i: min([eps_list[e] for e, c in candidate.items() if c == i]
                             + ([open_eps] if i == top else [])) for i in checked}
        left, bounds = family.full_check(checked, thresholds)
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
        open_eps = min(eps_list[e] for e in range(len(eps_list)) if found[e] is None)
        left, bounds = family.full_check([top], {top: open_eps})
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
        mid_left, bounds = family.full_check([mid], {mid: eps})
        if bool(np.all(bounds[mid] <= eps)):
            passing, left = mid, mid_left
        else:
            failing = mid
    return cuts[passing], left[:, : cuts[passing]]
