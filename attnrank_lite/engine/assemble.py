"""The one bracket assembler: the best-of rule over a :class:`~attnrank_lite.engine.row_source.RowSource`
(SPEC section 2; chapter 1, :ref:`Certificates <sec-bracket-certificates>`).

:func:`best_of` is the one place that says which certificate families run (:data:`LOWER_FAMILIES`;
``B = 0``, :data:`UPPER_FAMILIES`, the identity when nothing else met eps), in what order and under
which :class:`CostLimits`. A later family replaces an end only when strictly better (ties keep the
earlier one); every certificate verifies on ``A``; the brackets returned are frozen.

**Effort** (:data:`EFFORTS`). ``"max"`` runs every family within the limits; ``"auto"`` runs the
streamed SVD and l1 families only where their :class:`Estimate` promises :data:`AUTO_RATE` of the
upper end per form-A of cost, and one rank. The right-inverse family runs under neither unless
``CostLimits.right_inverse`` admits ``n * m`` (its cost is seconds to minutes).

**Extension points.** A lower family is ``family(plan, eps) -> LowerCertificate | None`` (levels in
increasing order), an upper family ``family(plan, eps_values, lowers, uppers) -> list`` of one
``UpperCertificate`` or ``None`` per level (all levels at once: passes over ``A`` are shared)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .certificates import NormCertificate, SubspaceCertificate, frobenius_budget, frobenius_tail_bounds, search_target
from .certified_bracket import RankBracket
from .checks import gamma
from .harmonic import HarmonicBasis, harmonic_search
from .l1fit import l1_fit_rows, l1_improve
from .lower import cluster_mass_lower_bound, frobenius_tail_lower_bound
from .nested import nested_family_search
from .neumann import attention_farthest_order, farthest_point_order, neumann_search
from .progress import progress
from .range_finder import randomized_range_finder
from .right_inverse import right_inverse_search
from .row_source import RowSource, evenly_spaced_rows
from .upper import identity_certificate, nested_certificate, randomized_family, svd_upper_bound

__all__ = ["AUTO_RATE", "CostLimits", "DENSE_LIMIT", "EFFORTS", "Estimate", "FORM_A_FLOPS", "FROBENIUS_LIMIT",
           "FROBENIUS_ROWS", "L1_LIMIT", "LOWER_FAMILIES", "MATERIALISE_LIMIT", "Plan", "RIGHT_INVERSE_LIMIT",
           "STREAMED_SVD_LIMIT", "UPPER_FAMILIES", "assemble_brackets", "best_of", "check_effort"]


#: a stored matrix with ``min(n, m)`` up to this gets one dense SVD, larger ones the range finder
DENSE_LIMIT = 1024
#: a streamed source with ``n * m`` up to this is copied once for the greedy cluster-mass search
MATERIALISE_LIMIT = 1024 * 1024
#: a streamed source with ``n * m`` up to this gets the Frobenius tail of ``FROBENIUS_ROWS``
#: evenly spaced rows (stored matrices on the randomized path too)
FROBENIUS_LIMIT = 1024 * 1024
FROBENIUS_ROWS = 1024
#: a streamed source with ``n * m`` up to this gets the streamed SVD family (``svd=True`` lifts it)
STREAMED_SVD_LIMIT = 4096 * 4096
#: ``Plan.svd`` with ``effort="max"`` beyond that limit: the streamed SVD family runs only on
#: levels no other upper family certified below ``min(n, m)``
WHERE_CAPPED = "where capped"
#: the l1-fitted family runs on a level when ``n * m * upper`` (one verification's work) is at most this
L1_LIMIT = 4 * 10**9
#: the right-inverse family runs when ``n * m`` is at most this (0, the default: off; the sweep sets it)
RIGHT_INVERSE_LIMIT = 0

#: the values of ``effort`` (the module docstring)
EFFORTS = ("auto", "max")
#: the cost of forming one entry of ``A``, in flops of a float64 matrix product
FORM_A_FLOPS = 400.0
#: ``effort="auto"``: a family costing ``c`` form-A's must be expected to lower the upper end by
#: ``AUTO_RATE * c`` of it, and by one rank
AUTO_RATE = 0.01
#: ADMM steps of one full l1 fit, for its cost estimate
L1_STEPS_ESTIMATE = 30
#: sample rows and steps of the l1 family's probe (``effort="auto"``)
L1_PROBE_ROWS = 32
L1_PROBE_STEPS = 100
#: seconds before a bracket's progress bars (naming the running family) are drawn
PROGRESS_DELAY = 2.0
#: rows of the streamed SVD family's probe, and its step in columns of the rotated top block
SVD_PROBE_ROWS = 256
SVD_PROBE_CHUNK = 4


def check_effort(effort) -> str:
    """``effort`` after checking it is one of :data:`EFFORTS` (``ValueError`` naming them)."""
    if not isinstance(effort, str) or effort not in EFFORTS:
        raise ValueError(f"effort must be one of {', '.join(repr(e) for e in EFFORTS)}, got {effort!r}")
    return effort


@dataclass(frozen=True)
class Estimate:
    """What an expensive upper family is expected to cost and gain on one level: ``cost`` in units of
    forming ``A`` once (a pass counts 1, a float64 product of width ``w`` ``2 w / FORM_A_FLOPS``),
    ``gain`` in ranks (0: nothing expected), ``upper`` the current upper end."""

    cost: float
    gain: float
    upper: int

    @property
    def worth(self) -> bool:
        """``gain >= max(1, AUTO_RATE * cost * upper)``: one percent of the upper end per form-A."""
        return self.gain >= max(1.0, AUTO_RATE * self.cost * self.upper)

    @property
    def least_gain(self) -> int:
        """The smallest gain (ranks) that makes the family worth its cost."""
        return int(np.ceil(max(1.0, AUTO_RATE * self.cost * self.upper)))


@dataclass(frozen=True)
class CostLimits:
    """The cost limits of the best-of rule (defaults: :data:`DENSE_LIMIT` and the constants after it)."""

    dense: int = DENSE_LIMIT
    materialise: int = MATERIALISE_LIMIT
    frobenius: int = FROBENIUS_LIMIT
    frobenius_rows: int = FROBENIUS_ROWS
    streamed_svd: int = STREAMED_SVD_LIMIT
    l1: int = L1_LIMIT  # n * m * upper, not n * m (see L1_LIMIT)
    right_inverse: int = RIGHT_INVERSE_LIMIT


@dataclass
class Plan:
    """What one call of :func:`assemble_brackets` works with (the arguments, ``method`` one of "dense",
    "randomized", "streamed"); the fields after ``effort`` hold the work shared between levels,
    computed once (``None`` until then)."""

    source: RowSource
    points: np.ndarray | None
    basis: HarmonicBasis | None
    method: str
    svd: bool | str  # True, False or WHERE_CAPPED
    seed: int
    limits: CostLimits
    effort: str = "auto"
    mass: np.ndarray | None = None
    copy: np.ndarray | None = None
    dense_svd: tuple | None = None
    tails: np.ndarray | None = None
    frobenius: tuple | None = None
    frobenius_tails: np.ndarray | None = None
    order: _LazyOrder | None = None
    centre_rows: Callable | None = None
    neumann: dict = field(default_factory=dict)  # eps -> the Neumann family's rank
    family: tuple | None = None
    harmonic: list | None = None
    streamed_svd: tuple | None = None

    @property
    def stored(self) -> np.ndarray | None:
        return self.source.matrix


def _masses(plan: Plan, eps_max: float) -> np.ndarray:
    """Computed row masses (row 0 alone when it exceeds every level: softmax rows have mass ~1)."""
    if plan.mass is None:
        src = plan.source
        mass = np.abs(src.rows(slice(0, 1))).sum(axis=1) if src.n else np.zeros(0)
        if src.n == 0 or float(mass[0]) * (1 - gamma(src.m + 1)) <= eps_max:
            mass = src.row_masses()
        plan.mass = mass
    return plan.mass


def _cluster_mass(plan: Plan, eps: float):
    """Greedy cluster-mass on the stored matrix, or on a temporary copy within ``limits.materialise``."""
    if plan.stored is None and plan.copy is None:
        if plan.source.n * plan.source.m > plan.limits.materialise:
            return None
        plan.copy = plan.source.dense()
    return cluster_mass_lower_bound(plan.stored if plan.stored is not None else plan.copy, eps)


def _dense_svd(plan: Plan) -> tuple:
    if plan.dense_svd is None:
        plan.dense_svd = np.linalg.svd(plan.stored, full_matrices=False)
    return plan.dense_svd


def _frobenius(plan: Plan, eps: float):
    src, lim = plan.source, plan.limits
    if plan.method == "dense":
        if plan.tails is None:
            plan.tails = frobenius_tail_bounds(plan.stored, svd=_dense_svd(plan))
        return frobenius_tail_lower_bound(plan.stored, eps, tails=plan.tails)
    if plan.stored is None and src.n * src.m > lim.frobenius:
        return None
    if plan.frobenius is None:
        rows = evenly_spaced_rows(src.n, lim.frobenius_rows)
        plan.frobenius = (None if rows.size == src.n else rows,
                          src.rows(rows if rows.size < src.n else slice(0, src.n)))
    rows, S = plan.frobenius
    if plan.frobenius_tails is None and float(np.einsum("ij,ij->", S, S)) > frobenius_budget(S.shape[0], eps):
        # the mass exceeds the budget: the exact spectrum of S (a full SVD, kept for larger eps)
        plan.frobenius_tails = frobenius_tail_bounds(S, svd=np.linalg.svd(S, full_matrices=False))
    cert = frobenius_tail_lower_bound(S, eps, tails=plan.frobenius_tails)
    if cert.rank:  # indices of S are rows of A
        cert = type(cert)(rank=cert.rank, rows=rows, cols=None)
    return cert


def _norm(plan: Plan, eps: float):
    mass = _masses(plan, eps)
    if mass.size == 0:
        return NormCertificate(rank=0)
    i = int(np.argmax(mass))
    cert = NormCertificate(rank=1, row=i)
    stored = plan.stored
    holds = cert.verify(stored, eps) if stored is not None else mass[i] * (1 - gamma(plan.source.m + 1)) > eps
    return cert if holds else NormCertificate(rank=0)


def _neumann(plan: Plan, eps: float):
    """Centres in farthest-point order of the query points, or, for a stored square matrix without
    points, of the attention itself (:func:`attention_farthest_order`)."""
    src = plan.source
    if plan.points is None and (plan.stored is None or src.n != src.m):
        return None
    if plan.stored is not None and (plan.stored < 0).any():
        return None
    if plan.order is None:
        plan.order = (_LazyOrder(plan.points, min(src.n, src.m)) if plan.points is not None
                      else attention_farthest_order(src.rows, src.n, src.n))
        plan.centre_rows = src.rows if plan.stored is not None else _RowCache(src)
    cert = neumann_search(plan.centre_rows, src.n, src.m, eps, plan.order)
    plan.neumann[eps] = cert.rank
    return cert


def _right_inverse(plan: Plan, eps: float):
    """The projected right-inverse search above the Neumann family's rank, on its centres, when
    ``n * m <= limits.right_inverse`` (:func:`~attnrank_lite.engine.right_inverse.right_inverse_search`)."""
    src = plan.source
    if plan.order is None or eps not in plan.neumann or src.n * src.m > plan.limits.right_inverse:
        return None
    return right_inverse_search(plan.centre_rows, src.m, eps, plan.order, lo=plan.neumann[eps],
                                max_seconds=float("inf"), max_programs=RIGHT_INVERSE_PROGRAMS)


#: the Neumann search keeps the rows of its centres while they hold at most this many entries
#: (64 MiB); beyond, rows are generated again on each try
CENTRE_ROWS_LIMIT = 2**23


class _RowCache:
    """``rows(idx)`` of a row source, keeping the rows generated, up to :data:`CENTRE_ROWS_LIMIT` entries."""

    def __init__(self, source: RowSource):
        self.source, self.kept = source, {}

    def __call__(self, idx) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64).tolist()
        new = np.unique([i for i in idx if i not in self.kept]).astype(np.int64)
        if new.size:
            if (len(self.kept) + new.size) * self.source.m > CENTRE_ROWS_LIMIT:
                return self.source.rows(np.asarray(idx, dtype=np.int64))
            self.kept.update(zip(new.tolist(), self.source.rows(new)))
        return np.array([self.kept[i] for i in idx]).reshape(len(idx), self.source.m)


#: the lower families, in order (ties keep the earlier one). The extension point: a new family
#: ``family(plan, eps) -> LowerCertificate | None`` is appended here.
LOWER_FAMILIES = (_cluster_mass, _frobenius, _norm, _neumann, _right_inverse)
RIGHT_INVERSE_PROGRAMS = 24  # programs of one right-inverse search: a count, so rows never depend on load


class _LazyOrder:
    """Farthest-point ordering of the query points, extended on demand (prefixes are stable)."""

    def __init__(self, P, size: int):
        self.P, self.size = P, size
        self.order = np.zeros(0, dtype=np.int64)

    def __getitem__(self, sl):
        if sl.stop > self.order.size:
            self.order = farthest_point_order(self.P, min(self.size, max(sl.stop, 2 * self.order.size)))
        return self.order[sl]


def _svd_family(plan: Plan, eps_values, lowers, uppers):
    """Stored matrix: dense SVD (``min(n, m) <= dense``) or randomized range finder, doubling."""
    A = plan.stored
    if A is None:
        return [None] * len(eps_values)
    out = []
    randomized = plan.method == "randomized"
    harmonics = _harmonic_family(plan, eps_values, lowers) if randomized else [None] * len(eps_values)
    for eps, lower, harmonic in zip(eps_values, lowers, harmonics):
        if not randomized:
            out.append(svd_upper_bound(A, eps, svd=_dense_svd(plan), lo=lower.rank - 1))
            continue
        start = max(32, 2 * lower.rank)
        # sketches double from start + 10 and may need twice the harmonic rank: unaffordable when that
        # reaches half of min(n, m) columns (the harmonic family alone then)
        if harmonic is not None and not 4 * max(start + 10, harmonic.rank) < min(A.shape) // 2:
            out.append(None)
            continue
        cert = None
        family = plan.family
        if family is not None:
            cert = nested_certificate(A, family[0], eps, lo=lower.rank - 1, source=family[1])
        if cert is None:
            cert, fam = randomized_family(A, eps, start=start, seed=plan.seed, lo=lower.rank - 1)
            if fam is not None:
                plan.family = fam
        out.append(cert)
    return out


def _harmonic_family(plan: Plan, eps_values, lowers, uppers=None) -> list:
    """Harmonic certificates (:ref:`thm-sphere-upper`) of all levels below 1, once per plan."""
    if plan.harmonic is None:
        out = [None] * len(eps_values)
        # below about 1e-14 the search target is <= 0, which no floating residual meets: those
        # levels are left to the SVD and identity families
        live = [i for i, e in enumerate(eps_values) if e < 1 and search_target(e) > 0]
        if plan.basis is not None and live:
            lo = max(0, min(lowers[i].rank for i in live) - 1)
            found = harmonic_search(plan.source, plan.basis, [eps_values[i] for i in live], lo=lo)
            for i, c in zip(live, found):
                out[i] = c
        plan.harmonic = out
    return plan.harmonic


def _streamed_svd_cost(size: int, power_iters: int = 2) -> float:
    """Cost of the streamed SVD family with ``size`` columns, in form-A units: ``2 + power_iters``
    range-finder passes of float32 products (at half cost) and one search pass of two products."""
    passes = 3 + power_iters
    return passes + passes * 2 * size / FORM_A_FLOPS


def _plateau_gain(plan: Plan, eps: float, cert) -> int:
    """Expected gain of an SVD family over the harmonic certificate ``cert`` (degree ``L``): the top
    degree's block of ``L = A V`` rotated to its principal directions, the cuts
    ``N(d, <= L-1) + j`` evaluated on sample rows; ``N(d, <= L)`` minus the first that meets the
    target (0 on a plateau the SVD cannot beat). An estimate, not a bound."""
    basis, src = plan.basis, plan.source
    L = getattr(cert, "degree", None)
    if basis is None or L is None or L == 0:
        return 0
    k_h, k_prev = cert.rank, basis.dimension(L - 1)
    if k_h - k_prev < 2 or cert.L.shape[0] != src.n:
        return 0
    V = basis.columns(L)
    _, _, Ut = np.linalg.svd(cert.L[:, k_prev:k_h], full_matrices=False)
    W = V[:, k_prev:k_h] @ Ut.T
    rows = evenly_spaced_rows(src.n, SVD_PROBE_ROWS)
    As = src.rows(rows)
    R = As - cert.L[rows, :k_prev] @ V[:, :k_prev].T
    T = cert.L[rows, k_prev:k_h] @ Ut.T  # = As @ W
    target = search_target(eps)
    for j in range(0, k_h - k_prev - 1, SVD_PROBE_CHUNK):
        j1 = min(j + SVD_PROBE_CHUNK, k_h - k_prev - 1)
        R -= T[:, j:j1] @ W[:, j:j1].T
        if float(np.abs(R).sum(axis=1).max()) <= target:
            return k_h - (k_prev + j1)
    return 0


def _streamed_svd_estimates(plan: Plan, eps_values, lowers, uppers, size: int) -> list:
    """:class:`Estimate` of the streamed SVD family on each level (``effort="auto"``)."""
    cost = _streamed_svd_cost(size)
    out = []
    for eps, lower, upper in zip(eps_values, lowers, uppers):
        if upper is None:  # nothing to beat: the identity (rank min(n, m)) is the alternative
            full = min(plan.source.n, plan.source.m)
            out.append(Estimate(cost, full - lower.rank, full))
            continue
        est = Estimate(cost, 0, upper.rank)
        L = getattr(upper, "degree", None)  # the top degree's block of a harmonic certificate
        block = upper.rank - plan.basis.dimension(L - 1) if plan.basis is not None and L else 0
        # the probe's gain is at most that block less one column: probe only if that is worth it
        if min(upper.rank - lower.rank, block - 1) >= est.least_gain:
            est = Estimate(cost, _plateau_gain(plan, eps, upper), upper.rank)
        out.append(est)
    return out


def _streamed_svd_family(plan: Plan, eps_values, lowers, uppers):
    """One range-finder sketch of the harmonic rank plus 10, shared by all levels: on a streamed source,
    and on a stored matrix whose doubling randomized family was unaffordable (so that the l1 family gets
    an SVD subspace); with ``effort="auto"`` only where :func:`_streamed_svd_estimates` finds it worth it."""
    src = plan.source
    if not plan.svd or (plan.stored is not None and (plan.method != "randomized" or plan.family is not None)):
        return [None] * len(eps_values)
    if plan.svd == WHERE_CAPPED and all(u is not None and u.rank < min(src.n, src.m) for u in uppers):
        return [None] * len(eps_values)
    k_h = max([u.rank for u in uppers if u is not None] or [min(src.n, src.m)])
    size = min(src.n, src.m, k_h + 10)
    if plan.effort == "auto" and not any(
            e.worth for e in _streamed_svd_estimates(plan, eps_values, lowers, uppers, size)):
        return [None] * len(eps_values)
    V = randomized_range_finder(src, size, seed=plan.seed).V
    source = f"{'streamed ' if plan.stored is None else 'one-sketch '}randomized SVD (l={size})"
    plan.streamed_svd = (V, source)  # the l1 family fits rows in the same subspaces
    lo = max(0, min(lower.rank for lower in lowers) - 1)
    found = nested_family_search(src, V, range(1, size + 1), eps_values, lo=lo)
    return [None if f is None else
            SubspaceCertificate(f[1], np.ascontiguousarray(V[:, :f[0]].T), source=source)
            for f in found]


def _l1_bases(plan: Plan, hi: int) -> list:
    """The nested subspaces the other upper families built, as ``(V, source)``, for ranks ``<= hi``."""
    bases = []
    if plan.dense_svd is not None:
        bases.append((plan.dense_svd[2].T, "dense SVD"))
    if plan.family is not None:
        bases.append(plan.family)
    if plan.streamed_svd is not None:
        bases.append(plan.streamed_svd)
    L = _l1_harmonic_degree(plan, hi)
    if L:
        # named by the degree that holds the certificate's k columns, not the searched range
        bases.append((plan.basis.columns(L), lambda k: f"harmonic degree {_l1_harmonic_degree(plan, k)}"))
    return bases


def _l1_harmonic_degree(plan: Plan, hi: int) -> int | None:
    """Degree of the harmonic basis the l1 family fits in: the smallest ``L`` with ``N(d, <= L) >=
    hi``, at most this plan's highest harmonic degree (``None`` without one); fixed by this task
    alone, never by how far a shared basis has grown, so a task gives the same bracket anywhere."""
    certs = [c for c in (plan.harmonic or ()) if c is not None]
    if plan.basis is None or not certs:
        return None
    top = max(c.degree for c in certs)
    return next((L for L in range(top) if plan.basis.dimension(L) >= hi), top)


def _l1_block(src: RowSource) -> int:
    """Rows per ADMM block: about six block x m arrays live at once, each kept to 2^22 entries."""
    return max(1, min(src.block, 512, 2**22 // max(src.m, 1)))


def _l1_family(plan: Plan, eps_values, lowers, uppers):
    """l1-fitted rows in the SVD and harmonic subspaces below the current upper end
    (:func:`~attnrank_lite.engine.l1fit.l1_improve`) where ``n * m * upper <= limits.l1``; accepted
    with proven margins over every row, and verified on a stored matrix."""
    src = plan.source
    out = [None] * len(eps_values)
    live = [j for j, (lower, upper) in enumerate(zip(lowers, uppers))
            if upper is not None and upper.rank > lower.rank
            and src.n * src.m * upper.rank <= plan.limits.l1]
    if not live:
        return out
    bases = _l1_bases(plan, max([uppers[j].rank - 1 for j in live], default=0))
    if not bases:
        return out
    for j in live:
        eps, lower, upper = eps_values[j], lowers[j], uppers[j]
        level_bases = bases if plan.effort == "max" else _l1_worth(plan, eps, lower, upper, bases)
        if not level_bases:
            continue
        cert = l1_improve(src.rows, src.n, eps, level_bases, lo=lower.rank - 1, hi=upper.rank - 1,
                          block=_l1_block(src))
        if cert is not None and (plan.stored is None or cert.verify(plan.stored, eps)):
            out[j] = cert
    return out


def _l1_cost(k: int) -> float:
    """Expected cost of one full l1 fit at rank ``k``, in form-A units: one pass over the row
    blocks and :data:`L1_STEPS_ESTIMATE` ADMM steps of two products, plus the final check."""
    return 1 + (2 * L1_STEPS_ESTIMATE + 2) * 2 * k / FORM_A_FLOPS


def _l1_worth(plan: Plan, eps: float, lower, upper, bases) -> list:
    """The bases in which the l1 family is worth running on one level (``effort="auto"``): none when
    the least worthwhile gain ``g`` (:attr:`Estimate.least_gain` of :func:`_l1_cost`) exceeds
    ``upper - lower``; else those where a fit of :data:`L1_PROBE_ROWS` sample rows at rank
    ``upper - g`` is not refuted by its dual bound (the exact l1 family being monotone in ``k``)."""
    k = upper.rank
    est = Estimate(_l1_cost(k), k - lower.rank, k)
    g = est.least_gain
    if not est.worth or k - g <= max(lower.rank, 0):
        return []
    src = plan.source
    rows = evenly_spaced_rows(src.n, L1_PROBE_ROWS)
    As = src.rows(rows)
    keep = []
    for V, name in bases:
        r = min(k - g, V.shape[1])  # a narrower basis: its whole span (ranks <= r < k - g)
        if r == 0:
            continue
        fit = l1_fit_rows(lambda idx: As[idx], As.shape[0], V[:, :r], steps=L1_PROBE_STEPS, gap=None,
                          target=search_target(eps), stop_on_fail=True, block=As.shape[0])
        if fit.status != "fail":
            keep.append((V, name))
    return keep


#: the upper families, in order (ties keep the earlier one). The extension point: a new family
#: ``family(plan, eps_values, lowers, uppers) -> list`` is appended here.
UPPER_FAMILIES = (_svd_family, _harmonic_family, _streamed_svd_family, _l1_family)


def best_of(plan: Plan, eps_values, upper_families=None, lower_families=None) -> list[RankBracket]:
    """The best-of rule: every family in order, the largest lower and smallest upper end kept (the
    family lists may be replaced); levels met by ``B = 0`` get ``[0, 0]`` at once; families see the
    levels in increasing order. Returns the brackets in the order of ``eps_values``."""
    src = plan.source
    n, m = src.n, src.m
    eps_list = [float(e) for e in eps_values]
    out: list = [None] * len(eps_list)
    zero = SubspaceCertificate(np.zeros((n, 0)), np.zeros((0, m)), source="B = 0")
    mass = _masses(plan, max(eps_list, default=0.0)) if n * m else np.zeros(0)
    need = []
    for i in sorted(range(len(eps_list)), key=lambda i: eps_list[i]):
        eps = eps_list[i]
        if n * m == 0 or _zero_meets(plan, zero, mass, eps):
            out[i] = RankBracket(eps, _norm(plan, eps) if n * m else NormCertificate(rank=0), zero)
        else:
            need.append(i)
    lowers = [None] * len(need)
    steps = [(j, family) for j in range(len(need))
             for family in (LOWER_FAMILIES if lower_families is None else lower_families)]
    bar = progress(steps, desc="bracket: lower families", delay=PROGRESS_DELAY)
    for j, family in bar:
        _label(bar, family)
        cert = family(plan, eps_list[need[j]])
        if cert is not None and (lowers[j] is None or cert.rank > lowers[j].rank):
            lowers[j] = cert
    plan.copy = None  # free the temporary copy before the upper families
    uppers = [None] * len(need)
    levels = [eps_list[i] for i in need]
    families = list(UPPER_FAMILIES if upper_families is None else upper_families) if need else []
    bar = progress(families, desc="bracket: upper families", delay=PROGRESS_DELAY)
    for family in bar:
        _label(bar, family)
        for j, cert in enumerate(family(plan, levels, lowers, uppers)):
            if cert is not None and (uppers[j] is None or cert.rank < uppers[j].rank):
                uppers[j] = cert
    for j, i in enumerate(need):
        up = uppers[j] if uppers[j] is not None else identity_certificate(src.rows, n, m, src.block)
        out[i] = RankBracket(eps_list[i], lowers[j], up)
    return out


def _label(bar, family) -> None:
    """Name the running family on a progress bar (nothing when bars are off)."""
    if hasattr(bar, "set_postfix_str"):  # a tqdm bar; drawn now only once its delay has passed
        bar.set_postfix_str(getattr(family, "__name__", "family").strip("_").replace("_", " "), refresh=False)
        if time.time() - getattr(bar, "start_t", 0.0) >= getattr(bar, "delay", 0.0):
            bar.refresh()


def _zero_meets(plan: Plan, zero, mass, eps: float) -> bool:
    """Whether ``B = 0`` meets ``eps``: exactly on a stored matrix, by the rounded-up masses else."""
    if plan.stored is not None:
        return zero.verify(plan.stored, eps)
    return float((mass * (1 + gamma(plan.source.m + 1))).max()) <= eps


def assemble_brackets(source: RowSource, eps_values, *, points=None, basis: HarmonicBasis | None = None,
                      method: str = "auto", svd="auto", seed: int = 0, limits: CostLimits | None = None,
                      upper_families=None, effort: str = "auto", lower_families=None) -> list[RankBracket]:
    """Certified brackets of the matrix of ``source`` at every level of ``eps_values`` (the best-of
    rule), with the queries as ``points`` and the keys' harmonic ``basis`` when known. ``method``
    (stored matrix): ``auto`` is ``dense`` when ``min(n, m) <= limits.dense``; ``svd``: the streamed
    SVD family, ``auto`` within ``limits.streamed_svd`` (beyond it :data:`WHERE_CAPPED` with
    ``effort="max"``); the family lists replace :data:`UPPER_FAMILIES` / :data:`LOWER_FAMILIES`."""
    effort = check_effort(effort)
    limits = CostLimits() if limits is None else limits
    n, m = source.n, source.m
    if source.matrix is None:
        method = "streamed"
    elif method == "auto":
        method = "dense" if min(n, m) <= limits.dense else "randomized"
    if svd is True or (svd == "auto" and n * m <= limits.streamed_svd):
        use_svd = True
    else:  # effort "max" beyond the limit: only where no other family certified below min(n, m)
        use_svd = WHERE_CAPPED if svd == "auto" and effort == "max" else False
    plan = Plan(source, points, basis, method, use_svd, seed, limits, effort)
    return best_of(plan, eps_values, upper_families, lower_families)
