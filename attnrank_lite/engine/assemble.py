r"""The one bracket assembler: the best-of rule over a :class:`~attnrank_lite.engine.row_source.RowSource`.

:func:`rank_brackets <attnrank_lite.engine.bracket.rank_brackets>` (a stored matrix),
:func:`point_brackets <attnrank_lite.engine.streaming.point_brackets>` (queries, keys, ``beta``,
log-weights streamed through ``softmax_attention``) and every sweep of
:mod:`attnrank_lite.laws.sweeps` call :func:`assemble_brackets`. Its :func:`best_of` is the one
place that says which certificate families are tried, in what order and under which cost
limits (:class:`CostLimits`); the brackets it returns are frozen and never modified afterwards.

**Lower families**, in this order (a later family replaces the current lower end only when it
certifies a strictly larger rank): greedy cluster-mass (:ref:`prop-cluster-mass`; needs the
stored matrix, or a temporary copy within ``CostLimits.materialise`` entries), Frobenius tail
(:ref:`prop-frobenius-tail`; the exact spectrum of a dense-path matrix, else of evenly spaced
rows, on a streamed source within ``CostLimits.frobenius`` entries), the norm certificate, and
the Neumann search (:ref:`prop-neumann-lower`; when the queries are known as points).

**Upper families**, in the order of :data:`UPPER_FAMILIES` (a later family replaces the current
upper end only when strictly smaller): ``B = 0`` first (it settles the level alone), then the
SVD family of a stored matrix (dense SVD up to ``CostLimits.dense`` = ``min(n, m)``, else the
randomized range finder with doubling sketches), the harmonic family (keys on the sphere), the
streamed SVD family (one sketch sized by the harmonic rank, within ``CostLimits.streamed_svd``
entries), the l1-fitted family over those SVD and harmonic subspaces (:mod:`attnrank_lite.engine.l1fit`:
the same subspaces with every row's coefficients fitted in l1, searched below the current upper
end, within ``CostLimits.l1`` = ``n * m * upper``), and the identity factorisation when nothing
else met eps.

**Extension point.** An upper family is a function ``family(plan, eps_values, lowers, uppers)``
returning one certificate (or ``None``) per level; append it to :data:`UPPER_FAMILIES` (or pass
``upper_families=`` to :func:`assemble_brackets`). Its certificates must be
:class:`~attnrank_lite.engine.certificates.UpperCertificate` objects that verify on ``A``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .certificates import NormCertificate, SubspaceCertificate, frobenius_budget, frobenius_tail_bounds, search_target
from .certified_bracket import RankBracket
from .checks import gamma
from .harmonic import HarmonicBasis, harmonic_search
from .l1fit import l1_improve
from .lower import cluster_mass_lower_bound, frobenius_tail_lower_bound
from .nested import nested_family_search
from .neumann import farthest_point_order, neumann_search
from .range_finder import randomized_range_finder
from .row_source import RowSource, evenly_spaced_rows
from .upper import identity_certificate, nested_certificate, randomized_family, svd_upper_bound

__all__ = ["CostLimits", "DENSE_LIMIT", "FROBENIUS_LIMIT", "FROBENIUS_ROWS", "L1_LIMIT", "MATERIALISE_LIMIT",
           "Plan", "STREAMED_SVD_LIMIT", "UPPER_FAMILIES", "assemble_brackets", "best_of"]


#: a stored matrix with ``min(n, m)`` up to this gets one dense SVD (exact spectrum for the
#: Frobenius tail, SVD family); larger ones the randomized range finder
DENSE_LIMIT = 1024
#: a streamed source with ``n * m`` up to this is copied once into a temporary matrix for the
#: greedy cluster-mass search (``8 * MATERIALISE_LIMIT`` bytes)
MATERIALISE_LIMIT = 1024 * 1024
#: a streamed source with ``n * m`` up to this gets the Frobenius-tail certificate of evenly
#: spaced rows (one SVD of that submatrix)
FROBENIUS_LIMIT = 1024 * 1024
#: rows of that submatrix (stored matrices on the randomized path use it as well)
FROBENIUS_ROWS = 1024
#: a streamed source with ``n * m`` up to this gets the streamed SVD family next to the harmonic
#: one (``svd="auto"``; ``svd=True`` lifts the limit). Its four float32 range-finder passes and
#: one float64 search pass cost about 6x the time to form ``A`` on 3,000 points of S^3
#: (``benchmarks/README.md``)
STREAMED_SVD_LIMIT = 4096 * 4096
#: the l1-fitted family runs on a level when ``n * m * upper`` (the work of one verification at
#: the current upper end) is at most this. On 3,000 points of S^3 at beta = 16 (``n * m *
#: upper`` = 3.4e9) it costs 15-25 s CPU on one core, 0.7x a dense SVD family and 15x the
#: harmonic family (``benchmarks/README.md``, ``bench_l1fit.py``); at beta = 32 (1.1e10, left
#: out) 130 s.
L1_LIMIT = 4 * 10**9


@dataclass(frozen=True)
class CostLimits:
    """The cost limits of the best-of rule, defaults from the module constants (entries are
    ``n * m``; see :data:`DENSE_LIMIT` and the constants after it)."""

    dense: int = DENSE_LIMIT
    materialise: int = MATERIALISE_LIMIT
    frobenius: int = FROBENIUS_LIMIT
    frobenius_rows: int = FROBENIUS_ROWS
    streamed_svd: int = STREAMED_SVD_LIMIT
    l1: int = L1_LIMIT  # n * m * upper, not n * m (see L1_LIMIT)


@dataclass
class Plan:
    """What one call of :func:`assemble_brackets` works with, and the work shared between levels.

    Attributes
    ----------
    source : RowSource
    points : ndarray or None
        The queries as points (farthest-point centres of the Neumann search).
    basis : HarmonicBasis or None
        Basis of the keys on the sphere (harmonic family), when they are known.
    method : {"dense", "randomized", "streamed"}
    svd : bool
        Whether the streamed SVD family runs.
    seed : int
    limits : CostLimits
    shared : dict
        Factorisations computed once and reused across levels.
    """

    source: RowSource
    points: np.ndarray | None
    basis: HarmonicBasis | None
    method: str
    svd: bool
    seed: int
    limits: CostLimits
    shared: dict = field(default_factory=dict)

    @property
    def stored(self) -> np.ndarray | None:
        return self.source.matrix


# ---------------------------------------------------------------- lower families

def _masses(plan: Plan, eps_max: float) -> np.ndarray:
    """Computed row masses (row 0 alone when it exceeds every level: softmax rows have mass ~1)."""
    if "mass" not in plan.shared:
        src = plan.source
        mass = np.abs(src.rows(slice(0, 1))).sum(axis=1) if src.n else np.zeros(0)
        if src.n == 0 or float(mass[0]) * (1 - gamma(src.m + 1)) <= eps_max:
            mass = src.row_masses()
        plan.shared["mass"] = mass
    return plan.shared["mass"]


def _dense_copy(plan: Plan) -> np.ndarray | None:
    """The matrix for the greedy cluster-mass search: stored, or a temporary copy if small."""
    if plan.stored is not None:
        return plan.stored
    if plan.source.n * plan.source.m > plan.limits.materialise:
        return None
    if "copy" not in plan.shared:
        plan.shared["copy"] = plan.source.dense()
    return plan.shared["copy"]


def _cluster_mass(plan: Plan, eps: float):
    A = _dense_copy(plan)
    return None if A is None else cluster_mass_lower_bound(A, eps)


def _frobenius(plan: Plan, eps: float):
    src, lim = plan.source, plan.limits
    if plan.method == "dense":
        A = plan.stored
        if "svd" not in plan.shared:
            plan.shared["svd"] = np.linalg.svd(A, full_matrices=False)
            plan.shared["tails"] = frobenius_tail_bounds(A, svd=plan.shared["svd"])
        return frobenius_tail_lower_bound(A, eps, tails=plan.shared["tails"])
    if plan.stored is None and src.n * src.m > lim.frobenius:
        return None
    if "frob_rows" not in plan.shared:
        rows = evenly_spaced_rows(src.n, lim.frobenius_rows)
        plan.shared["frob_rows"] = None if rows.size == src.n else rows
        plan.shared["frob_S"] = src.rows(rows if rows.size < src.n else slice(0, src.n))
        plan.shared["frob_tails"] = None
    S, rows = plan.shared["frob_S"], plan.shared["frob_rows"]
    if plan.shared["frob_tails"] is None and float(np.einsum("ij,ij->", S, S)) > frobenius_budget(S.shape[0], eps):
        # the Frobenius mass exceeds the budget: the exact spectrum of S is needed (kept for the
        # larger eps that follow). A full SVD of S, never a randomized approximation.
        plan.shared["frob_tails"] = frobenius_tail_bounds(S, svd=np.linalg.svd(S, full_matrices=False))
    cert = frobenius_tail_lower_bound(S, eps, tails=plan.shared["frob_tails"])
    if cert.rank:  # indices of S are rows of A
        cert = type(cert)(rank=cert.rank, rows=rows, cols=None)
    return cert


def _norm(plan: Plan, eps: float):
    mass = _masses(plan, eps)
    if mass.size == 0:
        return NormCertificate(rank=0)
    i = int(np.argmax(mass))
    cert = NormCertificate(rank=1, row=i)
    if plan.stored is not None:
        return cert if cert.verify(plan.stored, eps) else NormCertificate(rank=0)
    return cert if mass[i] * (1 - gamma(plan.source.m + 1)) > eps else NormCertificate(rank=0)


def _neumann(plan: Plan, eps: float):
    if plan.points is None:
        return None
    src = plan.source
    if plan.stored is not None and (plan.stored < 0).any():
        return None
    if "order" not in plan.shared:
        plan.shared["order"] = _LazyOrder(plan.points, min(src.n, src.m))
    return neumann_search(src.rows, src.n, src.m, eps, plan.shared["order"])


#: the lower families, in order (ties keep the earlier one)
LOWER_FAMILIES = (_cluster_mass, _frobenius, _norm, _neumann)


class _LazyOrder:
    """Farthest-point ordering of the query points, extended on demand (prefixes are stable)."""

    def __init__(self, P, size: int):
        self.P, self.size = P, size
        self.order = np.zeros(0, dtype=np.int64)

    def __getitem__(self, sl):
        if sl.stop > self.order.size:
            self.order = farthest_point_order(self.P, min(self.size, max(sl.stop, 2 * self.order.size)))
        return self.order[sl]


# ---------------------------------------------------------------- upper families

def _svd_family(plan: Plan, eps_values, lowers, uppers):
    """Stored matrix: dense SVD (``min(n, m) <= dense``) or randomized range finder, doubling."""
    A = plan.stored
    if A is None:
        return [None] * len(eps_values)
    out = []
    harmonics = _harmonic(plan, eps_values, lowers) if plan.method == "randomized" else [None] * len(eps_values)
    for eps, lower, harmonic in zip(eps_values, lowers, harmonics):
        if plan.method == "dense":
            if "svd" not in plan.shared:
                plan.shared["svd"] = np.linalg.svd(A, full_matrices=False)
            out.append(svd_upper_bound(A, eps, svd=plan.shared["svd"], lo=lower.rank - 1))
            continue
        start = max(32, 2 * lower.rank)
        if harmonic is not None and not _svd_affordable(harmonic.rank, start, min(A.shape)):
            out.append(None)  # high rank: the harmonic family alone (no dense-SVD fallback)
            continue
        cert = None
        family = plan.shared.get("family")
        if family is not None:
            cert = nested_certificate(A, family[0], eps, lo=lower.rank - 1, source=family[1])
        if cert is None:
            cert, fam = randomized_family(A, eps, start=start, seed=plan.seed, lo=lower.rank - 1)
            if fam is not None:
                plan.shared["family"] = fam
        out.append(cert)
    return out


def _svd_affordable(k: int, start: int, full: int) -> bool:
    r"""Whether the randomized family can run without its dense-SVD fallback: its sketch doubles
    from ``start + 10`` and falls back to a dense SVD at ``full // 2`` columns; with the harmonic
    rank ``k`` as a guide (a sketch may need about twice that), only when
    ``4 * max(start + 10, k) < full // 2``."""
    return 4 * max(start + 10, k) < full // 2


def _harmonic(plan: Plan, eps_values, lowers) -> list:
    """Harmonic certificates (keys on the sphere) of all levels below 1, in shared passes;
    computed once per plan (the randomized SVD family reads them to size its sketch)."""
    if "harmonic" not in plan.shared:
        out = [None] * len(eps_values)
        # below about 1e-14 the search target is <= 0, which no floating residual meets: the
        # degree would grow past what the keys span (duplicate keys run out first). Those levels
        # are left to the SVD and identity families.
        live = [i for i, e in enumerate(eps_values) if e < 1 and search_target(e) > 0]
        if plan.basis is not None and live:
            lo = max(0, min(lowers[i].rank for i in live) - 1)
            found = harmonic_search(plan.source, plan.basis, [eps_values[i] for i in live], lo=lo)
            for i, c in zip(live, found):
                out[i] = c
        plan.shared["harmonic"] = out
    return plan.shared["harmonic"]


def _harmonic_family(plan: Plan, eps_values, lowers, uppers):
    """The harmonic family (:ref:`thm-sphere-upper`), when the keys' basis is known."""
    return _harmonic(plan, eps_values, lowers)


def _streamed_svd_family(plan: Plan, eps_values, lowers, uppers):
    """Streamed source: one range-finder sketch of the harmonic rank plus 10, shared by all levels."""
    src = plan.source
    if plan.stored is not None or not plan.svd:
        return [None] * len(eps_values)
    k_h = max([u.rank for u in uppers if u is not None] or [min(src.n, src.m)])
    size = min(src.n, src.m, k_h + 10)
    V = randomized_range_finder(src, size, seed=plan.seed).V
    source = f"streamed randomized SVD (l={size})"
    plan.shared["streamed_svd"] = (V, source)  # the l1 family fits rows in the same subspaces
    lo = max(0, min(lower.rank for lower in lowers) - 1)
    found = nested_family_search(src, V, range(1, size + 1), eps_values, lo=lo)
    return [None if f is None else
            SubspaceCertificate(f[1], np.ascontiguousarray(V[:, :f[0]].T), source=source)
            for f in found]


def _l1_bases(plan: Plan, hi: int) -> list:
    """The nested subspaces the other upper families built, as ``(V, source)`` (orthonormal V),
    for l1 searches of ranks ``<= hi``."""
    bases = []
    if "svd" in plan.shared:
        bases.append((plan.shared["svd"][2].T, "dense SVD"))
    if "family" in plan.shared:
        bases.append(plan.shared["family"])
    if "streamed_svd" in plan.shared:
        bases.append(plan.shared["streamed_svd"])
    L = _l1_harmonic_degree(plan, hi)
    if L:
        bases.append((plan.basis.columns(L), f"harmonic degree {L}"))
    return bases


def _l1_harmonic_degree(plan: Plan, hi: int) -> int | None:
    """Degree of the harmonic basis the l1 family fits in: the smallest ``L`` with
    ``N(d, <= L) >= hi``, at most the highest degree of this plan's harmonic certificates
    (``None`` when it has none).

    Fixed by this task alone, never by how far a basis shared between tasks (one per process in
    a sweep) has already grown: the same task gives the same bracket and source in any process."""
    certs = [c for c in plan.shared.get("harmonic", ()) if c is not None]
    if plan.basis is None or not certs:
        return None
    top = max(c.degree for c in certs)
    L = 0
    while L < top and plan.basis.dimension(L) < hi:
        L += 1
    return L


def _l1_block(src: RowSource) -> int:
    """Rows per ADMM block: about six block x m arrays live at once, kept to 2^22 entries each
    (32 MiB), so the family adds at most about 200 MiB besides its coefficients (n x upper)."""
    return max(1, min(src.block, 512, 2**22 // max(src.m, 1)))


def _l1_family(plan: Plan, eps_values, lowers, uppers):
    """l1-fitted rows in the subspaces of the SVD and harmonic families, below the current upper
    end (:func:`~attnrank_lite.engine.l1fit.l1_improve`), where ``n * m * upper <= limits.l1``.

    A rank is accepted only with proven rounding margins over every row; on a stored matrix the
    certificate is verified as well."""
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
        cert = l1_improve(src.rows, src.n, eps, bases, lo=lower.rank - 1, hi=upper.rank - 1,
                          block=_l1_block(src))
        if cert is not None and cert.source.startswith("l1 fit in harmonic degree"):
            # name the degree that holds the certificate's k basis columns, not the searched range
            cert.source = f"l1 fit in harmonic degree {_l1_harmonic_degree(plan, cert.rank)}"
        if cert is not None and (plan.stored is None or cert.verify(plan.stored, eps)):
            out[j] = cert
    return out


#: the upper families, in order (ties keep the earlier one). The extension point: a new family
#: ``family(plan, eps_values, lowers, uppers) -> list`` is appended here.
UPPER_FAMILIES = (_svd_family, _harmonic_family, _streamed_svd_family, _l1_family)


# ---------------------------------------------------------------- the rule

def best_of(plan: Plan, eps_values, upper_families=None) -> list[RankBracket]:
    """The best-of rule: every family in order, the largest lower and smallest upper end kept.

    Levels met by ``B = 0`` get ``[0, 0]`` at once. Families see the levels in increasing order
    (a factorisation built for the smallest eps serves the larger ones). Returns the brackets
    in the order of ``eps_values``.
    """
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
    lowers = []
    for i in need:
        best = None
        for family in LOWER_FAMILIES:
            cert = family(plan, eps_list[i])
            if cert is not None and (best is None or cert.rank > best.rank):
                best = cert
        lowers.append(best)
    plan.shared.pop("copy", None)  # free the temporary copy before the upper families
    uppers = [None] * len(need)
    levels = [eps_list[i] for i in need]
    for family in (UPPER_FAMILIES if upper_families is None else upper_families):
        if not need:
            break
        for j, cert in enumerate(family(plan, levels, lowers, uppers)):
            if cert is not None and (uppers[j] is None or cert.rank < uppers[j].rank):
                uppers[j] = cert
    for j, i in enumerate(need):
        up = uppers[j] if uppers[j] is not None else identity_certificate(src.rows, n, m, src.block)
        out[i] = RankBracket(eps_list[i], lowers[j], up)
    return out


def _zero_meets(plan: Plan, zero, mass, eps: float) -> bool:
    """Whether ``B = 0`` meets ``eps``: exactly on a stored matrix, by the rounded-up masses else."""
    if plan.stored is not None:
        return zero.verify(plan.stored, eps)
    return float((mass * (1 + gamma(plan.source.m + 1))).max()) <= eps


def assemble_brackets(source: RowSource, eps_values, *, points=None, basis: HarmonicBasis | None = None,
                      method: str = "auto", svd="auto", seed: int = 0, limits: CostLimits | None = None,
                      upper_families=None) -> list[RankBracket]:
    """Certified brackets of the matrix described by ``source`` at every level (the best-of rule).

    Parameters
    ----------
    source : RowSource
    eps_values : sequence of float
        Checked levels (``>= 0``).
    points : ndarray, shape (n, d), optional
        The queries as points (Neumann centres).
    basis : HarmonicBasis, optional
        The keys' harmonic basis (harmonic family).
    method : {"auto", "dense", "randomized"}
        For a stored matrix: ``auto`` is ``dense`` when ``min(n, m) <= limits.dense``.
    svd : {"auto", True, False}
        For a streamed source: the streamed SVD family (``auto``: within ``limits.streamed_svd``).
    seed : int
        Seed of the randomized range finder.
    limits : CostLimits, optional
    upper_families : sequence, optional
        Replaces :data:`UPPER_FAMILIES` (for a family under test).
    """
    limits = CostLimits() if limits is None else limits
    n, m = source.n, source.m
    if source.matrix is None:
        method = "streamed"
    elif method == "auto":
        method = "dense" if min(n, m) <= limits.dense else "randomized"
    use_svd = svd is True or (svd == "auto" and n * m <= limits.streamed_svd)
    plan = Plan(source, points, basis, method, use_svd, seed, limits)
    return best_of(plan, eps_values, upper_families)
