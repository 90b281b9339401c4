r"""The explicit constants of chapter 2's proofs of the spherical law (``thm-sphere-upper``,
``thm-sphere-lower``), and checks of them; all on the scaled kernel :math:`e^{\beta(t-1)}`."""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaincc, gammaln, ive

from ..engine.certificates import ClusterMassCertificate
from .geometry import positive

__all__ = ["bessel_bound_exponent", "bessel_bound_tail", "bessel_sum_degree",
           "cap_packing_certificate", "cap_radius_factor", "chebyshev_construction_errors",
           "chebyshev_exp_coefficients", "chebyshev_tail", "chebyshev_tail_bound",
           "gaussian_tail_moment", "normaliser_shares", "price_of_proof", "proven_degree",
           "proven_lower_count", "regularity_constants"]


def _degree(name: str, L) -> int:
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {L!r}")
    return int(L)


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
    r""":math:`e^{-\beta}(I_0, 2I_1, \dots, 2I_L)(\beta)`: the scaled Chebyshev coefficients of
    :math:`e^{\beta t} = I_0(\beta) + 2\sum_{k\ge 1} I_k(\beta)T_k(t)` on [-1, 1] (Jacobi–Anger)."""
    beta, L = positive("beta", beta), _degree("L", L)
    c = 2.0 * ive(np.arange(L + 1), beta)
    c[0] /= 2.0
    return c


def chebyshev_tail(beta: float, L: int) -> float:
    r""":math:`e^{-\beta}\,2\sum_{k>L} I_k(\beta)`, a bound on the scaled sup error of the degree-L
    Chebyshev truncation of :math:`e^{\beta t}` (each :math:`|T_k|\le1`)."""
    beta, L = positive("beta", beta), _degree("L", L)
    return _tail_sum(lambda k: ive(k, beta), L + 1, 64)


def _tail_sum(term, k: int, chunk: int) -> float:
    """``2 * sum(term(j) for j >= k)``, in chunks until a term falls below 1e-18 of the sum."""
    total = 0.0
    while True:
        t = term(np.arange(k, k + chunk))
        total += float(t.sum())
        if t[-1] <= 1e-18 * total or t[-1] == 0.0:
            return 2.0 * total
        k += chunk


def bessel_bound_exponent(beta: float, k) -> np.ndarray:
    r""":math:`k^2/(2\beta + k)`: ``lem-chebyshev-exp``, :math:`e^{-\beta}I_k(\beta)\le e^{-k^2/(2\beta+k)}`."""
    beta = positive("beta", beta)
    k = np.asarray(k, dtype=np.float64)
    return k * k / (2.0 * beta + k)


def chebyshev_tail_bound(beta: float, L: int) -> float:
    r""":math:`4(1+\beta)\,e^{-(L+1)^2/(2\beta+L+1)} \ge` :func:`chebyshev_tail` (``lem-chebyshev-exp``)."""
    beta, L = positive("beta", beta), _degree("L", L)
    return 4.0 * (1.0 + beta) * math.exp(-float(bessel_bound_exponent(beta, L + 1)))


def bessel_bound_tail(beta: float, L: int) -> float:
    r""":math:`2\sum_{k>L} e^{-k^2/(2\beta+k)}`: the lemma's Bessel inequality summed before its
    geometric-series step; :func:`chebyshev_tail` ``<=`` this ``<=`` :func:`chebyshev_tail_bound`."""
    beta, L = positive("beta", beta), _degree("L", L)
    return _tail_sum(lambda k: np.exp(-bessel_bound_exponent(beta, k)), L + 1, 256)


def bessel_sum_degree(beta: float, delta: float) -> int:
    r"""The least L with :func:`bessel_bound_tail` ``<= delta`` (at most :func:`proven_degree`)."""
    beta, delta = positive("beta", beta), positive("delta", delta)
    hi = proven_degree(beta, delta)  # bessel_bound_tail(hi) <= closed form <= delta
    lo = -1  # bessel_bound_tail is decreasing in L: bisect on (lo, hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if bessel_bound_tail(beta, mid) <= delta else (mid, hi)
    return hi


def proven_degree(beta: float, delta: float) -> int:
    r"""The degree of ``thm-sphere-upper``: the least L with
    :math:`4(1+\beta)e^{-(L+1)^2/(2\beta+L+1)}\le\delta`, i.e. with
    :math:`\lambda = \log(4(1+\beta)/\delta)`, :math:`L = \lceil(\lambda +
    \sqrt{\lambda^2 + 8\beta\lambda})/2\rceil - 1 \le \lambda + \sqrt{2\beta\lambda}`."""
    beta, delta = positive("beta", beta), positive("delta", delta)
    lam = math.log(4.0 * (1.0 + beta) / delta)
    if lam <= 0:
        return 0
    L = max(0, math.ceil((lam + math.sqrt(lam * lam + 8 * beta * lam)) / 2) - 1)
    while L > 0 and chebyshev_tail_bound(beta, L - 1) <= delta:  # guard rounding of the root
        L -= 1
    while chebyshev_tail_bound(beta, L) > delta:
        L += 1
    return L


def normaliser_shares(X, beta: float, block: int = 1024) -> np.ndarray:
    r"""Row normaliser shares :math:`\mu_i = \tfrac1n\sum_j e^{\beta(\langle x_i,x_j\rangle-1)} =
    Z_i/(n e^\beta) \in [1/n, 1]` of unit rows ``X``, shape (n,)."""
    X, beta = _points(X), positive("beta", beta)
    n = X.shape[0]
    out = np.empty(n)
    for s in range(0, n, block):
        out[s:s + block] = np.exp(beta * (np.clip(X[s:s + block] @ X.T, -1.0, 1.0) - 1.0)).sum(axis=1) / n
    return out


def chebyshev_construction_errors(X, beta: float, L_max: int, block: int = 512) -> np.ndarray:
    r"""Max-row-l1 errors :math:`\lVert A - B_L\rVert`, ``L = 0..L_max``, of the proof's
    :math:`(B_L)_{ij} = p_L(\langle x_i,x_j\rangle)/Z_i` (:math:`p_L` the degree-L Chebyshev
    truncation of :math:`e^{\beta t}`, :math:`Z_i` the exact normaliser)."""
    X, beta, L_max = _points(X), positive("beta", beta), _degree("L_max", L_max)
    c = chebyshev_exp_coefficients(beta, L_max)
    n = X.shape[0]
    worst = np.zeros(L_max + 1)
    for s in range(0, n, block):
        T = np.clip(X[s:s + block] @ X.T, -1.0, 1.0)
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
    r"""Best ``(kappa, K)`` with :math:`\kappa n r^{d-1} \le N_i(r) := \#\{j : |x_j - x_i|\le r\}
    \le K n r^{d-1}` for every i and :math:`r\in[h, 2]`, exact for the computed distances (the
    infimum is approached just below a distance or at r = 2, the supremum at r = h or a distance)."""
    X = _points(X)
    h = float(h)
    if not 0 < h <= 2:
        raise ValueError(f"h must be in (0, 2], got {h!r}")
    n, d = X.shape
    p = d - 1
    lo, hi = n / 2.0 ** p, 0.0  # r = 2: N_i = n
    idx = np.arange(n)
    for s in range(0, n, block):
        D = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * (X[s:s + block] @ X.T)))
        D.sort(axis=1)
        # first index of each run of equal values = count strictly below
        new = np.ones_like(D, dtype=bool)
        new[:, 1:] = D[:, 1:] != D[:, :-1]
        less = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
        # last index of each run + 1 = count <= value
        last = np.ones_like(D, dtype=bool)
        last[:, :-1] = D[:, 1:] != D[:, :-1]
        leq = np.minimum.accumulate(np.where(last, idx, n - 1)[:, ::-1], axis=1)[:, ::-1] + 1
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
    r""":math:`T_d(\sigma)=\int_\sigma^\infty u^d e^{-u^2/2}du=2^{(d-1)/2}\Gamma(\tfrac{d+1}2, \tfrac{\sigma^2}2)`."""
    a = (d + 1) / 2.0
    return float(np.exp((d - 1) / 2.0 * np.log(2.0) + gammaln(a))
                 * gammaincc(a, sigma * sigma / 2.0))


def cap_radius_factor(d: int, eps: float, ratio: float, tau: float | None = None) -> float:
    r"""The cap factor of ``thm-sphere-lower``: the least :math:`\sigma > \tau` (to 1e-9, rounded
    up) with :math:`\frac{K}{\kappa} e^{\tau^2/2}\tau^{1-d}T_d(\sigma) < \frac{1-\varepsilon}{1+\varepsilon}`,
    ``ratio`` :math:`= K/\kappa \ge 1`, ``tau`` default :math:`\sqrt{d-1}` (maximises
    :math:`\tau^{d-1}e^{-\tau^2/2}`)."""
    eps = float(eps)
    if not 0 <= eps < 1:
        raise ValueError(f"eps must be in [0, 1), got {eps!r}")
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
    r""":math:`\lceil\beta^{(d-1)/2}/(K(2\sigma)^{d-1})\rceil`, the count of ``thm-sphere-lower``."""
    beta = positive("beta", beta)
    return math.ceil(beta ** ((d - 1) / 2) / (K * (2 * sigma) ** (d - 1))
                     * (1 - 1e-12))


def cap_packing_certificate(X, beta: float, sigma: float) -> ClusterMassCertificate:
    r"""The cluster-mass certificate of the proof of ``thm-sphere-lower``: centres a maximal
    :math:`2R`-separated subset, :math:`R=\sigma/\sqrt\beta` (greedy in index order), each
    centre's group the points at distance ``< R`` (disjoint by the triangle inequality)."""
    from scipy.spatial import cKDTree

    X, beta = _points(X), positive("beta", beta)
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


def upper_proof_table(X, betas, eps_values, harmonic: bool = False):
    r"""The degrees of ``thm-sphere-upper`` per (beta, eps): ``L_closed`` (:func:`proven_degree` at
    :math:`\delta=\varepsilon\mu_\min`), ``L_bessel``, ``L_tail``, ``L_construction`` (least L with
    error ``<= eps``), ``L_harmonic`` (``harmonic=True``); -1 where none. ``N_*``:
    :math:`N(d,\le L)`; ``bound_*``: :math:`\min\{n, N(d,\le L)\}`."""
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
        errs = chebyshev_construction_errors(X, beta, max(t for _, t, _ in Ls.values()))
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
                row["bound" + k[1:]] = min(X.shape[0], row[k]) if row[k] >= 0 else -1
            rows.append(row)
        del A
    return pd.DataFrame(rows)


def price_of_proof(up) -> dict[str, str]:
    r"""Where the degree of ``thm-sphere-upper`` goes (``"a to b"`` over the rows of an
    :func:`upper_proof_table` with ``harmonic=True``): the differences of consecutive degrees,
    ``ratio`` (``bound_closed / N_harmonic``) and ``at_n`` (rows where ``bound_closed`` is n)."""
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
        "at_n": (f"{len(at_n)} of {len(up)} rows ({where})" if len(at_n) else f"none of the {len(up)} rows"),
    }


def _least(pred, start: int = 0, limit: int = 100_000) -> int:
    L = start
    while not pred(L):
        L += 1
        if L > limit:
            raise ValueError(f"no degree up to {limit} satisfies the condition")
    return L


def lower_proof_table(X, betas, eps_values):
    r"""``thm-sphere-lower`` per (beta, eps), :math:`h=\sqrt{d-1}/\sqrt\beta`: ``kappa``, ``K`` on
    [h, 2], ``sigma``, ``proven``, the cap packing's size, whether it verifies and its
    smallest diagonal mass."""
    import pandas as pd

    from ..engine.attention import softmax_attention

    X = _points(X)
    n, d = X.shape
    tau = math.sqrt(d - 1)
    rows = []
    for beta in betas:
        h = min(2.0, tau / math.sqrt(beta))
        kappa, K = regularity_constants(X, h)
        A = softmax_attention(X, X, beta)
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
