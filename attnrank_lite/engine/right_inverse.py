r"""Right-inverse lower certificates, optimised by a linear program (``SPEC.md``, "Lower:
right-inverse certificate"; generalises the Neumann certificate of :mod:`attnrank_lite.engine.neumann`).

Statement. For rows :math:`S` of ``A`` (:math:`|S| = p`, the block :math:`A_S`, ``p x m``) and
any matrix :math:`X` (``m x p``) with

.. math:: \|I_p - A_S X\|_\infty + \varepsilon \|X\|_\infty < 1

(:math:`\|\cdot\|_\infty` the max row-l1 norm, the inf->inf operator norm),
:math:`\operatorname{rank}_\varepsilon(A) \ge p`. Proof: for :math:`\|A - B\|_\infty \le
\varepsilon`, :math:`B_S X = I - (R + (A_S - B_S) X)` with :math:`R = I - A_S X`, and
:math:`\|R + (A_S - B_S)X\| \le \|R\| + \varepsilon \|X\| < 1`, so :math:`B_S X` is invertible and
:math:`\operatorname{rank} B \ge p`. Neumann's certificate is the point :math:`X = G M^{-1}`;
:func:`right_inverse_lower` looks for a better ``X`` by the linear program
:math:`\min_X \max_j \|X_{j,:}\|_1` subject to :math:`A_S X = I`, with column ``b`` of ``X``
supported on the keys of the Voronoi cells most tied to centre ``b`` (HiGHS, through
``scipy.optimize.linprog``).

:func:`projected_right_inverse` reaches such an ``X`` without a solver, by alternating
projections between the affine set :math:`A_S X = I` (on the same supports) and the ball
:math:`\max_j \|X_{j,:}\|_1 \le (1 - \delta)/\varepsilon`; :func:`right_inverse_search` runs it on
any row source (the bracket's ``right_inverse`` family, off unless ``CostLimits.right_inverse``
allows it). The certificate stores ``rows`` and ``X``; its ``certified_rank`` recomputes both
norms with proven rounding bounds (Higham's :math:`\gamma_k`). Neither search runs in the default
bracket: each costs seconds to minutes (``benchmarks/README.md``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .certificates import LowerCertificate, _arguments, _plain, advertised_rank
from .checks import UNIT_ROUNDOFF, count_value, eps_value, gamma, index_array, parse_stored, real_array, real_matrix
from .neumann import _voronoi_labels, attention_farthest_order, farthest_point_order, neumann_lower_bound

__all__ = ["RightInverseCertificate", "right_inverse_norms", "right_inverse_left", "column_supports",
           "lp_right_inverse", "projected_right_inverse", "right_inverse_search", "right_inverse_lower"]

_ETA = float(np.finfo(np.float64).smallest_subnormal)
#: rounds of projections per ``p``; the best left side must fall by PROJECTION_PROGRESS per WINDOW
PROJECTION_ROUNDS = 400
PROJECTION_WINDOW = 40
PROJECTION_PROGRESS = 2e-3
#: the ball's radius is ``(1 - PROJECTION_SLACK) / eps``: the residual ``||I - A_S X||`` gets the rest
PROJECTION_SLACK = 0.05
#: the projected search's column supports hold at least this many times ``p`` keys
SUPPORT_FACTOR = 2
#: rows of ``A_S`` with at most this fraction of the largest norm on a support leave its equations
EQUATION_FLOOR = 1e-6


@dataclass
class RightInverseCertificate(LowerCertificate):
    r"""``rank_eps(A) >= p`` from rows ``S`` and ``X`` with
    :math:`\|I - A_S X\|_\infty + \varepsilon\|X\|_\infty < 1` (module docstring).

    Attributes
    ----------
    rows : sequence of int, length p (distinct, in range)
    X : ndarray, shape (m, p), finite real
    rank : int
        The advertised ``p``.
    """

    rows: list = field(default_factory=list)
    X: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    rank: int = 0
    kind: ClassVar[str] = "right-inverse"

    def _parse(self, n: int, m: int):
        rows = index_array("rows", _plain(self.rows), n)
        X = real_array("X", _plain(self.X), ndim=2)
        if X.shape != (m, rows.size):
            raise ValueError(f"X has shape {X.shape}; rows and A need {(m, rows.size)}")
        count_value("rank", self.rank)
        return rows, X

    def certified_rank(self, A, eps: float) -> int | None:
        """``p`` when the proven bound on the left side is below 1; ``None`` otherwise."""
        A, eps = _arguments(A, eps)
        parsed = parse_stored(self._parse, *A.shape)
        if parsed is None:
            return None
        rows, X = parsed
        if rows.size == 0:
            return 0
        return int(rows.size) if right_inverse_left(A[rows], X, eps) < 1.0 else None

    def verify(self, A, eps: float) -> bool:
        """``True`` iff the stored rows and ``X`` prove the advertised rank on ``A`` at ``eps``."""
        A, eps = _arguments(A, eps)
        rank = self.certified_rank(A, eps)
        return rank is not None and advertised_rank(self) == rank


def right_inverse_norms(P: np.ndarray, X: np.ndarray) -> tuple[float, float]:
    r"""Proven upper bounds on :math:`\|I - PX\|_\infty` and :math:`\|X\|_\infty` (``P``: p x m).

    With :math:`C = \mathrm{fl}(PX)`, :math:`|C - PX| \le \gamma_m |P||X|` entrywise, and
    :math:`F = \mathrm{fl}(|P||X|) \ge (1-\gamma_m)|P||X|` (non-negative terms); the entry
    :math:`|I - PX|_{ab} \le |\mathrm{fl}(I - C)|_{ab}/(1-u) + \gamma_m F_{ab}/(1-\gamma_m)`.
    Row sums of ``p`` non-negative terms are at most :math:`\mathrm{fl}(\cdot)/(1-\gamma_p)`;
    the final factor :math:`1+\gamma_{p+8}` covers these divisions and the evaluation of the
    bound itself. An absolute :math:`(m + p)\eta` (smallest subnormal) covers underflow.
    """
    p, m = P.shape
    C = P @ X
    R = np.eye(p) - C
    F = np.abs(P) @ np.abs(X)
    g = gamma(m)
    entry = np.abs(R) / (1.0 - UNIT_ROUNDOFF) + (g / (1.0 - g)) * F
    slack = (1.0 + gamma(p + 8)) / (1.0 - gamma(p))
    r_bound = float(entry.sum(axis=1).max()) * slack + (m + p) * _ETA
    x_bound = float(np.abs(X).sum(axis=1).max()) * slack + p * _ETA
    return r_bound, x_bound


def right_inverse_left(P: np.ndarray, X: np.ndarray, eps: float) -> float:
    r"""A proven upper bound on :math:`\|I - PX\|_\infty + \varepsilon\|X\|_\infty` (``P`` the rows
    :math:`A_S`): :func:`right_inverse_norms`, the sum rounded upward. Below 1 it proves
    :math:`\operatorname{rank}_\varepsilon(A) \ge p` (the certificate's check and the search's)."""
    r_bound, x_bound = right_inverse_norms(P, X)
    return (r_bound + eps * x_bound) * (1.0 + gamma(4)) + _ETA


def column_supports(rows_of, S: np.ndarray, m: int, cells: int, least: int = 0) -> tuple[np.ndarray, list]:
    """``(P, supports)``: the rows ``P = A_S`` (``rows_of(S)``) and, per centre ``b``, the keys of the
    ``cells`` Voronoi cells (key ``j`` in the cell of the centre attending to it most) most tied to
    ``b`` by attention mass (:math:`M + M^\top`, :math:`M = A_S G`; empty cells allowed), more cells
    in the same order while the support holds fewer than ``least`` keys."""
    P = rows_of(S)
    labels = _voronoi_labels(rows_of, S, m)
    M = np.stack([P[:, labels == b].sum(axis=1) for b in range(S.size)], axis=1)
    score, sizes = M + M.T, np.bincount(labels, minlength=S.size)
    supports = []
    for b in range(S.size):
        ranked = np.argsort(-score[b])
        take = max(cells, int(np.searchsorted(np.cumsum(sizes[ranked]), least)) + 1)
        supports.append(np.flatnonzero(np.isin(labels, ranked[:take])))
    return P, supports


def _l1_ball_rows(X: np.ndarray, radius: float) -> np.ndarray:
    """Each row of ``X`` projected onto the l1 ball of ``radius`` (sort-based, Duchi et al. 2008)."""
    a = np.abs(X)
    over = a.sum(axis=1) > radius
    if not over.any():
        return X
    u = -np.sort(-a[over], axis=1)
    css = np.cumsum(u, axis=1) - radius
    ok = u - css / np.arange(1, u.shape[1] + 1) > 0
    rho = ok.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1)  # last index where ok holds
    theta = css[np.arange(u.shape[0]), rho] / (rho + 1)
    out = X.copy()
    out[over] = np.sign(X[over]) * np.maximum(a[over] - theta[:, None], 0.0)
    return out


def projected_right_inverse(P: np.ndarray, supports: list, eps: float, rounds: int = PROJECTION_ROUNDS,
                            slack: float = PROJECTION_SLACK) -> tuple[np.ndarray | None, float]:
    r"""``(X, left)``: an ``X`` (m x p) for the right-inverse certificate by alternating projections,
    and its computed left side :math:`\|I - PX\|_\infty + \varepsilon\|X\|_\infty` (not a proof:
    :func:`right_inverse_left` is).

    The two convex sets are the affine :math:`\{X: PX = I,\ X_{jb} = 0 \text{ for } j \notin
    \text{supports}[b]\}`, whose projection acts column by column (:math:`x_b \leftarrow x_b -
    P_b^\top (P_b P_b^\top)^{-1}(P_b x_b - e_b)`, :math:`P_b` the columns ``supports[b]`` of ``P``),
    and the ball :math:`\{\max_j \|X_{j,:}\|_1 \le (1 - \text{slack})/\varepsilon\}`, row by row.
    Rows nearly zero on a support (norm at most :data:`EQUATION_FLOOR` of the largest) leave that
    column's equations (the certificate's check counts their residual). The best ball iterate is
    returned, at once when below 1; the rounds stop after ``rounds`` or when the best left side
    falls by less than :data:`PROJECTION_PROGRESS` over :data:`PROJECTION_WINDOW` rounds.
    ``(None, inf)`` when a kept :math:`P_b P_b^\top` is singular or a column's own row is left out."""
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    p, m = P.shape
    eye = np.eye(p)
    columns = []  # per column b: its support, P_b on the kept rows, P_b^T G^-1 and e_b on them
    for b, s in enumerate(supports):
        Pb = P[:, s]
        norms = np.sqrt((Pb * Pb).sum(axis=1))
        keep = np.flatnonzero(norms > EQUATION_FLOOR * norms.max()) if norms.size and norms.max() > 0 else []
        if b not in keep:
            return None, float("inf")
        Pk = Pb[keep]
        try:
            W = cho_solve(cho_factor(Pk @ Pk.T), Pk).T
        except LinAlgError:
            return None, float("inf")
        columns.append((s, Pk, W, eye[keep, b]))

    def affine(Y):
        X = np.zeros((m, p))
        for b, (s, Pk, W, e) in enumerate(columns):
            y = Y[s, b]
            X[s, b] = y - W @ (Pk @ y - e)
        return X

    X, radius = affine(np.zeros((m, p))), (1.0 - slack) / eps
    best, history = (None, float("inf")), []
    for _ in range(rounds):
        Y = _l1_ball_rows(X, radius)
        left = float(np.abs(eye - P @ Y).sum(axis=1).max() + eps * np.abs(Y).sum(axis=1).max())
        if left < best[1]:
            best = (Y, left)
        history.append(best[1])
        if best[1] < 1.0 or (len(history) > PROJECTION_WINDOW
                             and best[1] > history[-PROJECTION_WINDOW - 1] * (1 - PROJECTION_PROGRESS)):
            break
        X = affine(Y)
    return best


def right_inverse_search(rows_of, m: int, eps: float, order, lo: int = 0, cells: int = 13,
                         max_seconds: float = 60.0, max_programs: int | None = None):
    """The largest ``p`` above ``lo`` found by :func:`_secant_search` whose first ``p`` centres of
    ``order`` (an array or a lazily extended order, with ``size``) certify with
    :func:`projected_right_inverse`; the :class:`RightInverseCertificate`, its left side proven by
    :func:`right_inverse_left` on the rows ``rows_of(S)``, or None. ``rows_of`` may be a row source's
    ``rows``: no other entry of ``A`` is read. No program starts after ``max_seconds`` or
    ``max_programs`` programs (a count does not depend on the machine's load)."""
    t0, started = time.perf_counter(), []

    def attempt(p: int):
        started.append(p)
        S = np.asarray(order[:p], dtype=np.int64)
        # P_b P_b^T is singular when a support has fewer keys than the p equations: more cells then
        P, supports = column_supports(rows_of, S, m, cells, least=SUPPORT_FACTOR * p)
        X, _ = projected_right_inverse(P, supports, eps)
        if X is None:
            return None, float("inf")
        left = right_inverse_left(P, X, eps)
        return (RightInverseCertificate(rows=S.tolist(), X=X, rank=int(p)) if left < 1.0 else None), left

    if not 0 < eps < 1 or order.size <= lo:
        return None
    return _secant_search(attempt, lo, order.size, lambda: time.perf_counter() - t0 > max_seconds
                          or max_programs is not None and len(started) >= max_programs)


def lp_right_inverse(A: np.ndarray, S: np.ndarray, cells: int = 7, drop: float = 1e-3,
                     method: str = "highs-ipm") -> np.ndarray | None:
    r"""``X`` (m x p) minimising :math:`\max_j \|X_{j,:}\|_1` subject to :math:`A_S X = I` on local
    supports, or ``None`` when HiGHS finds no solution.

    Column ``b`` may use the keys of the ``cells`` Voronoi cells (key ``j`` in the cell of the
    centre attending to it most) most tied to centre ``b`` by attention mass (:math:`M + M^\top`,
    :math:`M = A_S G`). In each row of :math:`A_S` the smallest coefficients of total at most
    ``drop`` are left out of the equality constraints (they shrink the program; their effect is
    in the residual :math:`I - A_S X` that the certificate measures). ``method`` is
    ``linprog``'s: the interior-point ``highs-ipm`` solved ``p = 37`` on 512 Fibonacci points in
    1.9 CPU s, the dual simplex ``highs-ds`` in 9.0 s (``benchmarks/README.md``).
    """
    import scipy.sparse as sp
    from scipy.optimize import linprog

    p, m = S.size, A.shape[1]
    P, supports = column_supports(lambda idx: A[idx], S, m, cells)
    sizes = np.array([s.size for s in supports])
    N = int(sizes.sum())
    keys, colb = np.concatenate(supports), np.repeat(np.arange(p), sizes)
    coef = P[:, keys]  # coefficient of variable (j, b) in equality (a, b)
    srt = np.sort(coef, axis=1)
    cum = np.cumsum(srt, axis=1)
    cut = np.array([srt[a, np.searchsorted(cum[a], drop, side="right") - 1] if cum[a, 0] <= drop else -1.0
                    for a in range(p)])
    a_idx, v_idx = np.nonzero(coef > cut[:, None])
    uniq, r_idx = np.unique(a_idx * p + colb[v_idx], return_inverse=True)
    b_eq = (uniq // p == uniq % p).astype(float)
    vals = coef[a_idx, v_idx]
    A_eq = sp.csr_array((np.concatenate([vals, -vals]), (np.concatenate([r_idx, r_idx]),
                        np.concatenate([v_idx, v_idx + N]))), shape=(uniq.size, 2 * N + 1))
    A_ub = sp.csr_array((np.concatenate([np.ones(2 * N), -np.ones(m)]),
                         (np.concatenate([keys, keys, np.arange(m)]),
                          np.concatenate([np.arange(2 * N), np.full(m, 2 * N)]))), shape=(m, 2 * N + 1))
    c = np.zeros(2 * N + 1)
    c[-1] = 1.0
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method=method)
    if res.status != 0:
        return None
    X = np.zeros((m, p))
    X[keys, colb] = res.x[:N] - res.x[N:2 * N]
    return X


def right_inverse_lower(A, eps: float, points=None, p_values=None, cells: int = 7,
                        max_seconds: float = 60.0, method: str = "lp") -> LowerCertificate:
    """The best of Neumann's certificate and LP (or projected) right inverses for a stored matrix.

    Parameters
    ----------
    A : ndarray, shape (n, m)
    eps : float
    points : array_like, shape (n, d), optional
        The queries as points (farthest-point centres); without them a square ``A`` uses
        :func:`~attnrank_lite.engine.neumann.attention_farthest_order`.
    p_values : iterable of int, optional
        The row counts tried, in order, until two consecutive failures. Default: the secant
        search of :func:`_secant_search` above Neumann's ``p`` (the certified ``p`` is not
        monotone in the program's data; every certificate is verified).
    cells : int
        Voronoi cells per column support (7 on S^2, 13 on S^3 in the prototype); larger supports
        certify more at a higher cost (``benchmarks/bench_right_inverse.py``).
    max_seconds : float
        No new program is started after this many seconds.
    method : {"lp", "projection"}
        HiGHS's linear program (:func:`lp_right_inverse`) or alternating projections
        (:func:`projected_right_inverse`, through :func:`right_inverse_search`; ``p_values`` unused).

    Returns
    -------
    NeumannCertificate or RightInverseCertificate
        Verified on ``A``; the LP's only when it certifies more rows than Neumann's.
    """
    A = real_matrix("A", A)
    eps = eps_value(eps)
    if not (isinstance(cells, (int, np.integer)) and cells >= 1):
        raise ValueError(f"cells must be a positive whole number, got {cells!r}")
    if method not in ("lp", "projection"):
        raise ValueError(f"method must be 'lp' or 'projection', got {method!r}")
    best = neumann_lower_bound(A, eps, points=points)
    n, m = A.shape
    if eps >= 1 or (A < 0).any() or (points is None and n != m):
        return best
    order = (farthest_point_order(real_matrix("points", points), min(n, m)) if points is not None
             else attention_farthest_order(lambda idx: A[idx], n, min(n, m)))
    if method == "projection":
        found = right_inverse_search(lambda idx: A[idx], m, eps, order, best.rank, cells, max_seconds)
        return best if found is None else found  # proven by right_inverse_left, the certificate's own check
    t0 = time.perf_counter()

    def attempt(p: int):
        """The verified certificate of the LP at ``p`` (or None) and the LP's left side."""
        X = lp_right_inverse(A, order[:p], cells=cells)
        if X is None:
            return None, float("inf")
        r_bound, x_bound = right_inverse_norms(A[order[:p]], X)
        cert = RightInverseCertificate(rows=order[:p].tolist(), X=X, rank=int(p))
        return (cert if cert.verify(A, eps) else None), r_bound + eps * x_bound

    if p_values is None:
        found = _secant_search(attempt, best.rank, order.size, lambda: time.perf_counter() - t0 > max_seconds)
        return found if found is not None and found.rank > best.rank else best
    misses = 0
    for p in p_values:
        if time.perf_counter() - t0 > max_seconds or misses >= 2 or not 1 <= p <= order.size:
            break
        cert = attempt(p)[0]
        if cert is not None:
            misses = 0
            if cert.rank > best.rank:
                best = cert
        else:
            misses += 1
    return best


def _secant_search(attempt, lo: int, top: int, out_of_time):
    r"""Largest ``p`` in ``(lo, top]`` found certified by ``attempt(p) -> (certificate or None,
    left side)``, by a secant search on the left side :math:`\ell(p) = \|I - A_S X\| +
    \varepsilon\|X\|`, about proportional to ``p``. Keeps the largest certified ``p`` (``lo``) and
    the smallest failed one above it (``hi``); the next ``p`` is where the line through the last two
    finite values of :math:`\ell` (through the origin after one) reaches 1, rounded down, at most
    twice the last ``p``, inside ``(lo, hi)``. Stops when ``hi = lo + 1`` or ``out_of_time()``."""
    best, hi, seen, p = None, top + 1, [], lo + 1
    while lo + 1 < hi and not out_of_time():
        cert, left = attempt(p)
        if cert is not None:
            best, lo = cert, p
        else:
            hi = p
        if np.isfinite(left):
            seen.append((p, left))
        if len(seen) >= 2 and seen[-1][1] != seen[-2][1]:
            (p0, l0), (p1, l1) = seen[-2:]
            guess = p1 + (1.0 - l1) * (p1 - p0) / (l1 - l0)
        elif seen and seen[-1][1] > 0:
            guess = seen[-1][0] / seen[-1][1]
        else:
            guess = 2 * p
        p = int(min(max(np.floor(guess), lo + 1), hi - 1, 2 * p))
    return best
