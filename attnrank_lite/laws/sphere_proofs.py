r"""The explicit constants of chapter 2's two proofs of the spherical law, and checks of them.

Upper side (``thm-sphere-upper``): the Chebyshev expansion
:math:`e^{\beta t} = I_0(\beta) + 2\sum_{k\ge1} I_k(\beta)T_k(t)` truncated at degree L, with
:math:`I_k(\beta) \le e^{\beta - k^2/(2\beta+k)}` (``lem-chebyshev-exp``), rescaled by each
row's exact normaliser, gives a matrix of rank at most :math:`N(d,\le L)` whose row errors are
at most the truncation error over the row's *normaliser share*
:math:`\mu_i = \tfrac1n\sum_j e^{-\beta|x_i-x_j|^2/2}`.

Lower side (``thm-sphere-lower``): under two-sided regularity of the point set at scales
:math:`[h, 2]` (constants :math:`\kappa\le K`), a maximal :math:`2R`-separated set of centres,
:math:`R = \sigma/\sqrt\beta`, with the caps of radius R as key groups, is a cluster-mass
certificate (``prop-cluster-mass``) of size at least
:math:`\beta^{(d-1)/2}/(K(2\sigma)^{d-1})`.

All functions work on the scaled kernel :math:`e^{\beta(t-1)}` (no overflow for large beta).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaincc, gammaln, ive

from ..engine.certificates import ClusterMassCertificate

__all__ = [
    "bessel_bound_exponent",
    "bessel_bound_tail",
    "bessel_sum_degree",
    "cap_packing_certificate",
    "cap_radius_factor",
    "chebyshev_construction_errors",
    "chebyshev_exp_coefficients",
    "chebyshev_tail",
    "chebyshev_tail_bound",
    "gaussian_tail_moment",
    "normaliser_shares",
    "price_of_proof",
    "proven_degree",
    "proven_lower_count",
    "regularity_constants",
]


def _beta(beta) -> float:
    beta = float(beta)
    if not np.isfinite(beta) or beta <= 0:
        raise ValueError(f"beta must be a finite number > 0, got {beta!r}")
    return beta


def _degree(name: str, L) -> int:
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {L!r}")
    return int(L)


def _eps(eps) -> float:
    eps = float(eps)
    if not 0 <= eps < 1:
        raise ValueError(f"eps must be in [0, 1), got {eps!r}")
    return eps


def _points(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 2:
        raise ValueError(f"X must have shape (n, d) with d >= 2, got {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X must be finite")
    if np.abs(np.linalg.norm(X, axis=1) - 1).max() > 1e-9:
        raise ValueError("the rows of X must lie on the unit sphere")
    return X


def chebyshev_exp_coefficients(beta: float, L: int) -> np.ndarray:
    r"""Scaled Chebyshev coefficients of :math:`e^{\beta t}` on [-1, 1], degrees 0..L.

    :math:`e^{\beta t} = I_0(\beta) + 2\sum_{k\ge 1} I_k(\beta)\,T_k(t)` (Jacobi–Anger with
    :math:`t = \cos\theta`). Returned times :math:`e^{-\beta}`.

    Returns
    -------
    ndarray, shape (L + 1,)
        :math:`e^{-\beta}(I_0, 2I_1, \dots, 2I_L)`.
    """
    beta, L = _beta(beta), _degree("L", L)
    c = 2.0 * ive(np.arange(L + 1), beta)
    c[0] /= 2.0
    return c


def chebyshev_tail(beta: float, L: int) -> float:
    r""":math:`e^{-\beta}\,2\sum_{k>L} I_k(\beta)`: a bound on the scaled sup error of the
    degree-L Chebyshev truncation of :math:`e^{\beta t}` on [-1, 1] (each :math:`|T_k|\le1`).

    Summed term by term until the terms fall below :math:`10^{-18}` of the sum (they decrease
    faster than geometrically past :math:`k\approx\sqrt\beta`, see :func:`chebyshev_tail_bound`).
    """
    beta, L = _beta(beta), _degree("L", L)
    total, k, chunk = 0.0, L + 1, 64
    while True:
        t = ive(np.arange(k, k + chunk), beta)
        total += float(t.sum())
        if t[-1] <= 1e-18 * total or t[-1] == 0.0:
            return 2.0 * total
        k += chunk


def bessel_bound_exponent(beta: float, k) -> np.ndarray:
    r""":math:`k^2/(2\beta + k)`: ``lem-chebyshev-exp`` states
    :math:`e^{-\beta}I_k(\beta)\le e^{-k^2/(2\beta+k)}`."""
    beta = _beta(beta)
    k = np.asarray(k, dtype=np.float64)
    return k * k / (2.0 * beta + k)


def chebyshev_tail_bound(beta: float, L: int) -> float:
    r"""Closed-form bound :math:`4(1+\beta)\,e^{-(L+1)^2/(2\beta+L+1)}` on
    :func:`chebyshev_tail` (``lem-chebyshev-exp``)."""
    beta, L = _beta(beta), _degree("L", L)
    return 4.0 * (1.0 + beta) * math.exp(-float(bessel_bound_exponent(beta, L + 1)))


def bessel_bound_tail(beta: float, L: int) -> float:
    r""":math:`2\sum_{k>L} e^{-k^2/(2\beta+k)}`: the Bessel inequality of ``lem-chebyshev-exp``
    summed exactly, before the geometric-series step that gives :func:`chebyshev_tail_bound`.

    It lies between the two: :func:`chebyshev_tail` ``<=`` this (term by term,
    :math:`e^{-\beta}I_k(\beta)\le e^{-k^2/(2\beta+k)}`) ``<=`` :func:`chebyshev_tail_bound`
    (the lemma's proof). Summed until the terms fall below :math:`10^{-18}` of the sum (past
    :math:`k = 2\beta` each term is at most :math:`e^{-k/2}`, so the rest is negligible).
    """
    beta, L = _beta(beta), _degree("L", L)
    total, k, chunk = 0.0, L + 1, 256
    while True:
        t = np.exp(-bessel_bound_exponent(beta, np.arange(k, k + chunk)))
        total += float(t.sum())
        if t[-1] <= 1e-18 * total or t[-1] == 0.0:
            return 2.0 * total
        k += chunk


def bessel_sum_degree(beta: float, delta: float) -> int:
    r"""The least L with :func:`bessel_bound_tail` ``<= delta``: the degree the Bessel
    inequality gives when it is summed exactly instead of through the closed form
    :math:`4(1+\beta)e^{-(L+1)^2/(2\beta+L+1)}` of :func:`proven_degree`.

    It never exceeds :func:`proven_degree` and is never below the degree of the exact tail
    (:func:`chebyshev_tail`), so it splits the price of the proof's degree into the Bessel
    inequality (exact tail to this) and the summation step (this to ``proven_degree``).
    """
    beta = _beta(beta)
    delta = float(delta)
    if not np.isfinite(delta) or delta <= 0:
        raise ValueError(f"delta must be a finite number > 0, got {delta!r}")
    hi = proven_degree(beta, delta)  # bessel_bound_tail(hi) <= closed form <= delta
    lo = -1  # bessel_bound_tail is decreasing in L: bisect on (lo, hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if bessel_bound_tail(beta, mid) <= delta else (mid, hi)
    return hi


def proven_degree(beta: float, delta: float) -> int:
    r"""The degree of ``thm-sphere-upper``: the least L with
    :math:`4(1+\beta)e^{-(L+1)^2/(2\beta+L+1)}\le\delta`.

    With :math:`\lambda = \log(4(1+\beta)/\delta)` this is
    :math:`L = \lceil(\lambda + \sqrt{\lambda^2 + 8\beta\lambda})/2\rceil - 1
    \le \lambda + \sqrt{2\beta\lambda}`.

    Parameters
    ----------
    beta : float
        ``> 0``.
    delta : float
        Scaled sup accuracy, ``0 < delta``.
    """
    beta = _beta(beta)
    delta = float(delta)
    if not np.isfinite(delta) or delta <= 0:
        raise ValueError(f"delta must be a finite number > 0, got {delta!r}")
    lam = math.log(4.0 * (1.0 + beta) / delta)
    if lam <= 0:
        return 0
    L = max(0, math.ceil((lam + math.sqrt(lam * lam + 8 * beta * lam)) / 2) - 1)
    while L > 0 and chebyshev_tail_bound(beta, L - 1) <= delta:  # guard rounding of the root
        L -= 1
    while chebyshev_tail_bound(beta, L) > delta:
        L += 1
    return L


def _gram_rows(X: np.ndarray, s: int, e: int) -> np.ndarray:
    return np.clip(X[s:e] @ X.T, -1.0, 1.0)


def normaliser_shares(X, beta: float, block: int = 1024) -> np.ndarray:
    r"""Row normaliser shares :math:`\mu_i = \tfrac1n\sum_j e^{\beta(\langle x_i,x_j\rangle-1)}`.

    :math:`\mu_i = Z_i/(n e^\beta)` with :math:`Z_i` the softmax normaliser of row i; always
    :math:`1/n\le\mu_i\le 1` (the self term is 1).

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Points on the unit sphere.

    Returns
    -------
    ndarray, shape (n,)
    """
    X, beta = _points(X), _beta(beta)
    n = X.shape[0]
    out = np.empty(n)
    for s in range(0, n, block):
        e = min(n, s + block)
        out[s:e] = np.exp(beta * (_gram_rows(X, s, e) - 1.0)).sum(axis=1) / n
    return out


def chebyshev_construction_errors(X, beta: float, L_max: int,
                                  block: int = 512) -> np.ndarray:
    r"""Max-row-l1 errors of the proof's matrices :math:`B_L`, ``L = 0..L_max``.

    :math:`(B_L)_{ij} = p_L(\langle x_i,x_j\rangle)/Z_i` with :math:`p_L` the degree-L Chebyshev
    truncation of :math:`e^{\beta t}` and :math:`Z_i` the exact row normaliser, so
    :math:`\operatorname{rank}B_L\le N(d,\le L)` (``thm-sphere-upper``). Rows are built ``block``
    at a time; the Chebyshev polynomials by their three-term recurrence.

    Returns
    -------
    ndarray, shape (L_max + 1,)
        :math:`\lVert A - B_L\rVert` for each L.
    """
    X, beta, L_max = _points(X), _beta(beta), _degree("L_max", L_max)
    c = chebyshev_exp_coefficients(beta, L_max)
    n = X.shape[0]
    worst = np.zeros(L_max + 1)
    for s in range(0, n, block):
        e = min(n, s + block)
        T = _gram_rows(X, s, e)
        K = np.exp(beta * (T - 1.0))
        Z = K.sum(axis=1)
        t_prev, t_cur = np.ones_like(T), T.copy()
        P = c[0] * t_prev
        for L in range(L_max + 1):
            if L == 1:
                P += c[1] * t_cur
            elif L >= 2:
                t_prev, t_cur = t_cur, 2.0 * T * t_cur - t_prev
                P += c[L] * t_cur
            err = (np.abs(K - P).sum(axis=1) / Z).max()
            worst[L] = max(worst[L], err)
    return worst


def regularity_constants(X, h: float, block: int = 512) -> tuple[float, float]:
    r"""Best constants :math:`\kappa, K` of the regularity assumption at scales [h, 2].

    .. math:: \kappa\, n\, r^{d-1} \le N_i(r) := \#\{j : |x_j - x_i|\le r\}
              \le K\, n\, r^{d-1}\quad\text{for every } i \text{ and every } r\in[h, 2].

    Exact for the computed distances: on each interval between consecutive distances
    :math:`N_i` is constant and :math:`r^{d-1}` increasing, so the infimum is approached just
    below a distance (count of strictly smaller distances) or at r = 2, and the supremum is
    attained at r = h or at a distance in [h, 2] (count of distances ``<=`` it).

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Points on the unit sphere.
    h : float
        Smallest scale, ``0 < h <= 2``.

    Returns
    -------
    (kappa, K) : tuple of float
    """
    X = _points(X)
    h = float(h)
    if not 0 < h <= 2:
        raise ValueError(f"h must be in (0, 2], got {h!r}")
    n, d = X.shape
    p = d - 1
    lo, hi = n / 2.0 ** p, 0.0  # r = 2: N_i = n
    idx = np.arange(n)
    for s in range(0, n, block):
        e = min(n, s + block)
        D = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * (X[s:e] @ X.T)))
        D.sort(axis=1)
        # first index of each run of equal values = count strictly below
        new = np.ones_like(D, dtype=bool)
        new[:, 1:] = D[:, 1:] != D[:, :-1]
        less = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
        # last index of each run + 1 = count <= value
        last = np.ones_like(D, dtype=bool)
        last[:, :-1] = D[:, 1:] != D[:, :-1]
        leq = np.minimum.accumulate(np.where(last, idx, n - 1)[:, ::-1],
                                    axis=1)[:, ::-1] + 1
        inside = (D > h) & (D <= 2.0)
        if inside.any():
            lo = min(lo, float((less[inside] / D[inside] ** p).min()))
        at = (D >= h) & (D <= 2.0)
        if at.any():
            hi = max(hi, float((leq[at] / D[at] ** p).max()))
        Nh = (D <= h).sum(axis=1)
        lo = min(lo, float(Nh.min()) / h ** p)
        hi = max(hi, float(Nh.max()) / h ** p)
    return lo / n, hi / n


def gaussian_tail_moment(sigma: float, d: int) -> float:
    r""":math:`T_d(\sigma) = \int_\sigma^\infty u^d e^{-u^2/2}\,du
    = 2^{(d-1)/2}\,\Gamma(\tfrac{d+1}2, \tfrac{\sigma^2}2)`."""
    a = (d + 1) / 2.0
    return float(np.exp((d - 1) / 2.0 * np.log(2.0) + gammaln(a))
                 * gammaincc(a, sigma * sigma / 2.0))


def cap_radius_factor(d: int, eps: float, ratio: float,
                      tau: float | None = None) -> float:
    r"""The cap factor :math:`\sigma` of ``thm-sphere-lower``.

    The least :math:`\sigma > \tau` (to 1e-9, rounded up) with

    .. math:: \frac{K}{\kappa}\, e^{\tau^2/2}\,\tau^{1-d}\,T_d(\sigma)
              < \frac{1-\varepsilon}{1+\varepsilon}.

    Parameters
    ----------
    d : int
        Points on :math:`S^{d-1}`, ``d >= 2``.
    eps : float
        In [0, 1).
    ratio : float
        :math:`K/\kappa \ge 1`.
    tau : float, optional
        Inner cap factor; default :math:`\sqrt{d-1}` (maximises :math:`\tau^{d-1}e^{-\tau^2/2}`).
    """
    eps = _eps(eps)
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    ratio = float(ratio)
    if not np.isfinite(ratio) or ratio < 1:
        raise ValueError(f"ratio K/kappa must be a finite number >= 1, got {ratio!r}")
    tau = math.sqrt(d - 1) if tau is None else float(tau)
    target = (1 - eps) / (1 + eps)
    pre = ratio * math.exp(tau * tau / 2) * tau ** (1 - d)

    def ok(sig):
        return pre * gaussian_tail_moment(sig, d) < target

    lo, hi = tau, tau + 1.0
    if ok(lo):
        return float(np.nextafter(tau, np.inf))
    while not ok(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1e-9:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def proven_lower_count(beta: float, d: int, K: float, sigma: float) -> int:
    r""":math:`\lceil\beta^{(d-1)/2}/(K(2\sigma)^{d-1})\rceil`, the count of
    ``thm-sphere-lower``."""
    beta = _beta(beta)
    return math.ceil(beta ** ((d - 1) / 2) / (K * (2 * sigma) ** (d - 1))
                     * (1 - 1e-12))


def cap_packing_certificate(X, beta: float, sigma: float) -> ClusterMassCertificate:
    r"""The certificate built in the proof of ``thm-sphere-lower``.

    Centres: a maximal :math:`2R`-separated subset of the points, :math:`R=\sigma/\sqrt\beta`
    (greedy in index order: a point becomes a centre when it lies at distance ``>= 2R`` from
    every earlier centre). Group of a centre: the points at distance ``< R`` from it (pairwise
    disjoint by the triangle inequality).

    Returns
    -------
    ClusterMassCertificate
        Check it with ``.verify(A, eps)`` on :math:`A = \mathrm{rowsoftmax}(\beta XX^\top)`.
    """
    from scipy.spatial import cKDTree

    X, beta = _points(X), _beta(beta)
    R = float(sigma) / math.sqrt(beta)
    tree = cKDTree(X)
    n = X.shape[0]
    free = np.ones(n, dtype=bool)
    rows = []
    for i in range(n):
        if free[i]:
            rows.append(i)
            near = tree.query_ball_point(X[i], 2 * R * (1 - 1e-12))
            free[near] = False
    groups = []
    for i in rows:
        g = np.asarray(tree.query_ball_point(X[i], R * (1 - 1e-12)), dtype=np.int64)
        groups.append(sorted(g.tolist()))
    return ClusterMassCertificate(rows=rows, groups=groups)


def upper_proof_table(X, betas, eps_values, L_max: int | None = None,
                      harmonic: bool = False):
    r"""The degrees of ``thm-sphere-upper`` on a point set, against what is needed.

    Per (beta, eps): the smallest normaliser share :math:`\mu_\min`; the proof's degree in
    closed form (``L_closed``, :func:`proven_degree` with :math:`\delta=\varepsilon\mu_\min`)
    with the Bessel inequality summed exactly (``L_bessel``, :func:`bessel_sum_degree`) and
    with the exact Chebyshev tail (``L_tail``: least L with tail
    :math:`\le\varepsilon\mu_\min`); the least degree at which the proof's matrix
    :math:`B_L` actually has error ``<= eps`` (``L_construction``, -1 if none up to
    ``L_max``); and, with ``harmonic=True``, the degree of the harmonic upper certificate
    found by :func:`attnrank_lite.engine.harmonic.harmonic_upper_bound` on the materialised
    :math:`A` (``L_harmonic``, -1 if none). Each ``N_*`` column is :math:`N(d,\le L)`, and each
    ``bound_*`` column the theorem's rank bound :math:`\min\{n, N(d,\le L)\}`.

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    from .spectra import harmonic_count

    X = _points(X)
    d = X.shape[1]
    if harmonic:
        from ..engine.attention import softmax_attention
        from ..engine.harmonic import HarmonicBasis, harmonic_upper_bound
        basis = HarmonicBasis(X)
    rows = []
    for beta in betas:
        mu = float(normaliser_shares(X, beta).min())
        A = softmax_attention(X, X, beta) if harmonic else None
        Ls = {e: (proven_degree(beta, e * mu),
                  _least(lambda L, e=e, b=beta, m=mu:
                         chebyshev_tail(b, L) <= e * m),
                  bessel_sum_degree(beta, e * mu))
              for e in eps_values}
        top = max(t for _, t, _ in Ls.values()) if L_max is None else L_max
        errs = chebyshev_construction_errors(X, beta, top)
        for e in eps_values:
            ok = np.flatnonzero(errs <= e)
            Lc = int(ok[0]) if ok.size else -1
            row = {"beta": float(beta), "eps": float(e), "n": X.shape[0],
                   "mu_min": mu, "L_closed": Ls[e][0], "L_bessel": Ls[e][2],
                   "L_tail": Ls[e][1], "L_construction": Lc}
            if harmonic:
                cert = harmonic_upper_bound(A, X, e, basis=basis)
                row["L_harmonic"] = -1 if cert is None else int(cert.degree)
            for k in [c for c in row if c.startswith("L_")]:
                row["N" + k[1:]] = harmonic_count(row[k], d) if row[k] >= 0 else -1
            for k in [c for c in row if c.startswith("N_")]:
                row["bound" + k[1:]] = (min(X.shape[0], row[k]) if row[k] >= 0
                                        else -1)
            rows.append(row)
        del A
    return pd.DataFrame(rows)


def price_of_proof(up) -> dict[str, str]:
    r"""Where the degree of ``thm-sphere-upper`` goes, from :func:`upper_proof_table` (with
    ``harmonic=True``), as strings for the page.

    Keys: ``closed_bessel`` (``L_closed - L_bessel``: the geometric-series step and its
    :math:`4(1+\beta)`), ``bessel_tail`` (``L_bessel - L_tail``: the Bessel inequality),
    ``tail_construction`` (``L_tail - L_construction``: the accuracy
    :math:`\varepsilon\mu_\min e^\beta` asked uniformly in :math:`t\in[-1,1]` and with the
    worst row's share :math:`\mu_\min` for every row; the two losses are not separated),
    ``construction_harmonic`` (``L_construction - L_harmonic``),
    each ``"a to b"`` over the rows (``"a"`` when constant); ``ratio``: the theorem's rank bound
    ``bound_closed`` over the harmonic certificate's rank ``N_harmonic``, ``"x to y"``;
    ``at_n``: the rows where ``bound_closed`` is the trivial bound ``n``.
    """
    def span(v) -> str:
        lo, hi = int(v.min()), int(v.max())
        return f"{lo}" if lo == hi else f"{lo} to {hi}"

    ok = up[up["L_harmonic"] >= 0]
    ratio = (ok["bound_closed"] / ok["N_harmonic"]) if len(ok) else None
    at_n = up[up["bound_closed"] >= up["n"]]
    where = "(β, ε) = " + ", ".join(f"({r.beta:g}, {r.eps:g})" for r in at_n.itertuples())
    return {
        "closed_bessel": span(up["L_closed"] - up["L_bessel"]),
        "bessel_tail": span(up["L_bessel"] - up["L_tail"]),
        "tail_construction": span(up["L_tail"] - up["L_construction"]),
        "construction_harmonic": span(ok["L_construction"] - ok["L_harmonic"])
        if len(ok) else "n/a",
        "ratio": f"{ratio.min():.2f} to {ratio.max():.2f}" if ratio is not None else "n/a",
        "at_n": (f"{len(at_n)} of {len(up)} rows ({where})" if len(at_n)
                 else f"none of the {len(up)} rows"),
    }


def _least(pred, start: int = 0, limit: int = 100_000) -> int:
    L = start
    while not pred(L):
        L += 1
        if L > limit:
            raise ValueError(f"no degree up to {limit} satisfies the condition")
    return L


def lower_proof_table(X, betas, eps_values, A_of=None):
    r"""``thm-sphere-lower`` on a point set: its constants, its count and its certificate.

    Per (beta, eps), with :math:`\tau=\sqrt{d-1}` and the largest admissible scale
    :math:`h=\tau/\sqrt\beta`: the measured regularity constants :math:`\kappa, K` on
    :math:`[h, 2]`, the cap factor :math:`\sigma`, the proven count
    :math:`\lceil\beta^{(d-1)/2}/(K(2\sigma)^{d-1})\rceil`, the size of the proof's
    cap-packing certificate and whether it verifies on :math:`A` (``A_of(beta)``, default
    the dense spherical attention matrix), with its smallest diagonal mass.

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    from ..engine.attention import softmax_attention

    X = _points(X)
    n, d = X.shape
    tau = math.sqrt(d - 1)
    rows = []
    for beta in betas:
        h = min(2.0, tau / math.sqrt(beta))
        kappa, K = regularity_constants(X, h)
        A = softmax_attention(X, X, beta) if A_of is None else A_of(beta)
        for e in eps_values:
            sigma = cap_radius_factor(d, e, K / kappa, tau)
            cert = cap_packing_certificate(X, beta, sigma)
            M = np.diag(cert.mass_matrix(A))
            rows.append({"beta": float(beta), "eps": float(e), "n": n, "h": h,
                         "kappa": kappa, "K": K, "sigma": sigma,
                         "proven": proven_lower_count(beta, d, K, sigma),
                         "construction": cert.rank,
                         "min_diag_mass": float(M.min()) if M.size else np.nan,
                         "verified": bool(cert.verify(A, e))})
    return pd.DataFrame(rows)
