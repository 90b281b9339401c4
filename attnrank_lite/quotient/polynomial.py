r"""Finite polynomial rank certificates (chapter 4, ``prop-polynomial-certificate``): for visible coordinates in
:math:`\mathbb R^r`, row ``i`` of the attention, :math:`A_{ij} = w_j e^{\ell_{ij} - h_i} / Z_i` with
:math:`\ell_{ij} = \beta\langle q_i, k_j\rangle` and :math:`h_i = \max_j \ell_{ij}`, becomes
:math:`B_{ij} = w_j\, p_i(\ell_{ij}) / Z_i`, :math:`p_i` the degree-``D`` Chebyshev interpolant of
:math:`t \mapsto e^{t-h_i}` on the row's logit range: :math:`\operatorname{rank} B \le \binom{r + D}{D}`."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from math import comb

import numpy as np

from ..engine.attention import logit_rounding_bound, query_key_pair, row_softmax, softmax_attention
from ..engine.certificates import UpperCertificate
from ..engine.checks import UNIT_ROUNDOFF, count_value, eps_value, finite_nonnegative, gamma, parse_stored, real_matrix
from ..engine.checks import log_weights as _check_log_weights
from ..laws.geometry import uniform_ball
from ..laws.spectra import harmonic_count  # re-exported: (degree, d), the one harmonic count

__all__ = ["PolynomialCertificate", "degree_table", "harmonic_count", "monomial_count",
           "polynomial_certificate", "polynomial_matrix", "polynomial_sweep"]

_BLOCK = 256


def monomial_count(r: int, D: int) -> int:
    r"""Number of monomials of degree ``<= D`` in ``r`` variables: :math:`\binom{r+D}{D}`."""
    r, D = int(r), int(D)
    if r < 0 or D < 0:
        raise ValueError(f"need r >= 0 and D >= 0, got r={r}, D={D}")
    return comb(r + D, D)


def _cheb_coefficients(half: np.ndarray, D: int) -> np.ndarray:
    r"""Chebyshev coefficients, shape (n, D+1), of the degree-D interpolant of
    :math:`x \mapsto e^{h (x - 1)}` on [-1, 1] (Chebyshev points of the first kind)."""
    N = D + 1
    k = np.arange(N)
    x = np.cos(np.pi * (k + 0.5) / N)
    with np.errstate(under="ignore"):
        f = np.exp(half[:, None] * (x[None, :] - 1.0))  # (n, N)
    T = np.cos(np.pi * np.outer(k, k + 0.5) / N)  # T[j, k] = T_j(x_k)
    c = (2.0 / N) * f @ T.T
    c[:, 0] /= 2.0
    return c


def _clenshaw(c: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Evaluate per-row Chebyshev series ``sum_k c[i, k] T_k(u[i, j])``."""
    D = c.shape[1] - 1
    b1, b2 = np.zeros_like(u), np.zeros_like(u)
    for k in range(D, 0, -1):
        b1, b2 = c[:, k:k + 1] + 2.0 * u * b1 - b2, b1
    return c[:, :1] + u * b1 - b2


def _prepare(Qv, Kv, beta, log_weights):
    Qv, Kv = query_key_pair(Qv, Kv)
    beta = finite_nonnegative("beta", beta)
    m = Kv.shape[0]
    if log_weights is None:
        lw = np.zeros(m)
    else:
        lw = np.asarray(log_weights, dtype=np.float64).reshape(-1)
        if lw.shape != (m,):
            raise ValueError(f"log_weights has {lw.size} entries for {m} keys")
        if np.isnan(lw).any() or np.isposinf(lw).any() or not np.isfinite(lw).any():
            raise ValueError("log_weights must be < +inf, not NaN, with at least one finite entry")
    return Qv, Kv, beta, lw


def _rows(Qv, Kv, beta, lw, D, sl):
    """For rows ``sl``: logits, row maxima, half ranges, ``g = w_j / Z_i``, coefficients, values."""
    live = np.isfinite(lw)
    ell = beta * (Qv[sl] @ Kv.T)  # (b, m)
    ell_live = np.where(live[None, :], ell, np.nan)
    hi, lo = np.nanmax(ell_live, axis=1), np.nanmin(ell_live, axis=1)
    half, mid = (hi - lo) / 2.0, (hi + lo) / 2.0
    safe = np.where(half > 0, half, 1.0)
    u = np.where(half[:, None] > 0, (ell - mid[:, None]) / safe[:, None], 0.0)
    u = np.clip(u, -1.0, 1.0)  # dead keys (weight 0) may fall outside; their weight is 0
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        logZ = np.log(np.sum(np.exp(ell - hi[:, None] + (lw - lw[live].max())[None, :]), axis=1))
        g = np.exp((lw - lw[live].max())[None, :] - logZ[:, None])  # w_j / Z_i, shape (b, m)
    c = _cheb_coefficients(half, D)
    with np.errstate(under="ignore"):
        p = _clenshaw(c, u)
    return ell, hi, half, g, c, p


def polynomial_matrix(Qv, Kv, beta: float, degree: int, log_weights=None) -> np.ndarray:
    r"""The degree-``D`` certificate's :math:`B_{ij} = w_j p_i(\beta\langle q_i,k_j\rangle)/Z_i`,
    shape (n, m), rank at most :math:`\binom{r+D}{D}`."""
    Qv, Kv, beta, lw = _prepare(Qv, Kv, beta, log_weights)
    D = int(degree)
    if D < 0:
        raise ValueError(f"degree must be >= 0, got {D}")
    n, m = Qv.shape[0], Kv.shape[0]
    B = np.empty((n, m))
    for s in range(0, n, _BLOCK):
        sl = slice(s, min(n, s + _BLOCK))
        _, _, _, g, _, p = _rows(Qv, Kv, beta, lw, D, sl)
        B[sl] = g * p
    return B


def _row_errors(A, Qv, Kv, beta, lw, D, with_margin: bool):
    """Per-row l1 error of B against A (None: the attention of the data) and rounding margin."""
    n, m = Qv.shape[0], Kv.shape[0]
    r = Qv.shape[1]
    err, margin = np.empty(n), np.zeros(n)
    k2 = np.arange(D + 1, dtype=np.float64) ** 2
    gam_eval, gam_sum = gamma(4 * (D + 1) ** 2 + 2 * r + 16), gamma(m + r + 8)
    for s in range(0, n, _BLOCK):
        sl = slice(s, min(n, s + _BLOCK))
        ell, _, half, g, c, p = _rows(Qv, Kv, beta, lw, D, sl)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            B = g * p
            Ablk = row_softmax(ell + lw[None, :]) if A is None else A[sl]
            E = np.abs(Ablk - B).sum(axis=1)
        err[sl] = np.where(np.isfinite(E), E, np.inf)
        if with_margin:
            margin[sl] = _rounding_margin(Qv[sl], Kv, beta, lw, ell, half, g, c, Ablk, B, k2, gam_eval, gam_sum)
    margin = np.where(np.isfinite(margin), margin, np.inf)
    return err, margin


def _rounding_margin(Qs, Kv, beta, lw, ell, half, g, c, Ablk, B, k2, gam_eval, gam_sum):
    r"""Proven bound, per row, on the rounding in the computed error of the certificate.

    The certificate's matrix is :math:`B^*_{ij} = e^{a_{ij}} P_i(u^*_{ij})` in exact arithmetic from the stored
    floats: :math:`a_{ij}` from the *computed* log-weights and log normaliser (a column times a row factor, so the
    rank bound holds whatever they are), :math:`P_i` the series with the computed coefficients, :math:`u^*_{ij}`
    from the exact logit. The computed :math:`g_{ij}p_{ij}` differs by:

    * :math:`g_{ij}`: relative :math:`\eta_{ij} \le \mathrm{expm1}(2u(|\log g_{ij}| + 1)) + 8u`
      (absolute below :math:`2^{-1021}` under the smallest normal number);
    * the argument: :math:`|u_{ij} - u^*_{ij}| \le \delta_{ij} := (\Delta_{ij} +
      2u|\ell_{ij} - \mathrm{mid}_i|)/\mathrm{half}_i + 2u` (:math:`\Delta_{ij}` of
      :func:`attnrank_lite.engine.attention.logit_rounding_bound`), so
      :math:`|P_i(u) - P_i(u^*)| \le S'_i\delta_{ij}`,
      :math:`S'_i = e^{D\sqrt{2\delta_i+\delta_i^2}}\sum_k k^2|c_{ik}|`;
    * Clenshaw: :math:`\gamma_{4(D+1)^2+2r+16}(S_i + 1)`, :math:`S_i = \sum_k |c_{ik}|`; the
      product: ``u``; the row sum of :math:`|A - B|`:
      :math:`\gamma_{m+r+8}(\sum_j|A_{ij}| + \sum_j|B_{ij}|)`.

    Summed over the row, times :math:`1 + 10^{-10}`; dead keys (:math:`g_{ij} = 0`) add nothing.
    """
    u = UNIT_ROUNDOFF
    D = c.shape[1] - 1
    live = np.isfinite(lw)
    tiny = float(np.finfo(np.float64).tiny)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        S = np.abs(c).sum(axis=1)  # bound on |P_i| on [-1, 1]
        S1 = (np.abs(c) * k2[None, :]).sum(axis=1)  # bound on |P_i'| on [-1, 1]
        ell_live = np.where(live[None, :], ell, np.nan)
        mid = (np.nanmax(ell_live, axis=1) + np.nanmin(ell_live, axis=1)) / 2.0
        Delta = logit_rounding_bound(Qs, Kv, beta)
        safe = np.where(half > 0, half, 1.0)
        du = np.where(half[:, None] > 0, (Delta + 2 * u * np.abs(ell - mid[:, None])) / safe[:, None] + 2 * u, 0.0)
        du = np.where(live[None, :], du, 0.0)
        dmax = du.max(axis=1)
        S1x = S1 * np.exp(D * np.sqrt(2 * dmax + dmax * dmax))
        normal = g >= tiny
        eta = np.where(normal, np.expm1(2 * u * (np.abs(np.log(np.where(normal, g, 1.0))) + 1.0)) + 8 * u, 0.0)
        gb = np.where(normal, g * (1 + eta), 2 * tiny)  # upper bound on the exact e^{a_ij}
        per_entry = (gb * (gam_eval * (S[:, None] + 1.0) + S1x[:, None] * du)
                     + (g * (eta + u) + np.where(normal, 0.0, 2 * tiny)) * S[:, None])
        margin = (per_entry.sum(axis=1)
                  + gam_sum * (np.abs(Ablk).sum(axis=1) + np.abs(B).sum(axis=1))) * (1 + 1e-10)
    return margin


@dataclass
class PolynomialCertificate(UpperCertificate):
    r"""Upper certificate :math:`\mathrm{rank}_\varepsilon(A) \le` ``count`` :math:`=\binom{r+D}{D}` from the
    visible coordinates ``Qv`` (n, r), ``Kv`` (m, r), ``beta``, ``degree`` ``D`` and optional ``log_weights`` (m,);
    ``error`` is the measured max-row-l1 error against the attention of the stored data."""

    Qv: np.ndarray
    Kv: np.ndarray
    beta: float
    degree: int
    count: int
    error: float
    log_weights: np.ndarray | None = None
    kind: str = "polynomial"

    @property
    def dim(self) -> int:
        """Visible dimension ``r`` (columns of ``Qv``)."""
        return int(np.atleast_2d(self.Qv).shape[1])

    @property
    def rank(self) -> int:
        """The certified upper bound (``count``)."""
        return int(self.count)

    def matrix(self) -> np.ndarray:
        """Build ``B`` explicitly, shape (n, m) (for small cases)."""
        return polynomial_matrix(self.Qv, self.Kv, self.beta, self.degree, self.log_weights)

    def certified_rank(self, A, eps: float) -> int | None:
        """``count`` when ``||A - B|| <= eps`` with ``B`` rebuilt from the stored data, with the margin of
        :func:`_rounding_margin`, and ``count`` the monomial count of ``(dim, degree)``; a bad ``A`` or ``eps`` raises,
        malformed stored data give ``None``."""
        A = real_matrix("A", A)
        eps = eps_value(eps)

        def parse():
            if self.log_weights is not None:
                _check_log_weights(self.log_weights, np.shape(self.Kv)[0])
            parsed = _prepare(self.Qv, self.Kv, self.beta, self.log_weights)
            D = count_value("degree", self.degree)
            if count_value("count", self.count) != monomial_count(parsed[0].shape[1], D):
                raise ValueError("count is not the monomial count of (dim, degree)")
            return (*parsed, D)

        parsed = parse_stored(parse)
        if parsed is None or A.shape != (parsed[0].shape[0], parsed[1].shape[0]):
            return None
        Qv, Kv, beta, lw, D = parsed
        if A.shape[0]:
            err, margin = _row_errors(A, Qv, Kv, beta, lw, D, with_margin=True)
            if not np.all((err + margin) * (1 + 4 * UNIT_ROUNDOFF) <= eps):
                return None
        return int(self.count)

    def __repr__(self) -> str:
        return (f"PolynomialCertificate(r={self.dim}, D={self.degree}, count={self.count}, error={self.error:.3g})")


def polynomial_certificate(Qv, Kv, beta: float, eps: float, max_degree: int = 64, log_weights=None,
                           start: int | None = None):
    r"""Smallest-degree polynomial certificate of ``rowsoftmax(beta Qv Kv^T + log_weights)`` meeting ``eps``, up to
    ``max_degree``, or ``None``. A *screen* (the computed row error alone: a degree it refuses, the certified check
    refuses too) finds the least degree by galloping from ``start`` (a hint; default 0, 1, 2, 4, ...) and bisection;
    the certified check (error plus the margin of :func:`_rounding_margin`, as ``verify``) then runs there and, if
    the margin tips it over, above. The error is essentially, not provably, monotone in ``D``; the certificate is
    valid either way."""
    Qv, Kv, beta, lw = _prepare(Qv, Kv, beta, log_weights)
    eps = finite_nonnegative("eps", eps)
    max_degree = int(max_degree)
    if max_degree < 0:
        raise ValueError(f"max_degree must be >= 0, got {max_degree}")
    stored_lw = None if log_weights is None else lw.copy()
    if Qv.shape[0] == 0:
        return PolynomialCertificate(Qv, Kv, beta, 0, 1, 0.0, stored_lw)
    errors: dict[int, float] = {}

    def passes(D, certified):  # the screen (no margin; zeros) or the certified check
        err, margin = _row_errors(None, Qv, Kv, beta, lw, D, with_margin=certified)
        errors[D] = float(err.max())
        return bool(np.all(err + margin <= eps))

    D = _least_passing(lambda D: passes(D, False), 0, max_degree, start)
    if D is None:
        return None
    if not passes(D, True):
        D = _least_passing(lambda D: passes(D, True), D + 1, max_degree, None)
        if D is None:
            return None
    return PolynomialCertificate(Qv.copy(), Kv.copy(), beta, D, monomial_count(Qv.shape[1], D),
                                 errors[D], stored_lw)


def _least_passing(check, low: int, high: int, start: int | None):
    """Least ``D`` in ``[low, high]`` with ``check(D)`` (None if ``check(high)`` fails), for a
    monotone ``check``: gallop from ``start`` (default ``low``), then bisect; each ``D`` once."""
    if low > high:
        return None
    ok = cache(check)  # each D checked once
    D = low if start is None else min(high, max(low, int(start)))
    step = 1
    if ok(D):  # gallop down to a failing degree (or low)
        hi, lo = D, low - 1
        while hi > low:
            D = max(low, hi - step)
            if ok(D):
                hi = D
                step *= 2
            else:
                lo = D
                break
    else:  # gallop up to a passing degree
        lo, hi = D, None
        while hi is None:
            if lo >= high:
                return None
            D = min(high, lo + step if start is not None or lo > low else lo + 1)
            step = step * 2 if start is not None else max(1, D - low)
            if ok(D):
                hi = D
            else:
                lo = D
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _found(cert) -> dict:
    """``degree``, ``count``, ``error`` of a certificate (``None`` each without one)."""
    return {k: None if cert is None else getattr(cert, k) for k in ("degree", "count", "error")}


def polynomial_sweep(Qv, Kv, betas, eps: float, max_degree: int = 64,
                     log_weights=None, key_offsets=None, attention=None) -> list:
    r"""Polynomial certificates of ``rowsoftmax(beta Qv Kv^T + log w(beta))`` for each of ``betas``,
    :math:`\log w_j(\beta) = \text{log\_weights}_j + \beta\,\text{key\_offsets}_j`, each verified against
    ``attention(beta)`` (default: the attention of the coordinates). Rows: ``beta``, ``dim``, ``degree``, ``count``,
    ``error``, ``verified`` (``None`` entries when no degree up to ``max_degree`` meets ``eps``)."""
    m = np.atleast_2d(Kv).shape[0]
    base = np.zeros(m) if log_weights is None else np.asarray(log_weights, dtype=np.float64)
    off = np.zeros(m) if key_offsets is None else np.asarray(key_offsets, dtype=np.float64)
    weighted = log_weights is not None or key_offsets is not None
    rows = []
    for beta in betas:
        lw = base + float(beta) * off if weighted else None
        cert = polynomial_certificate(Qv, Kv, beta, eps, max_degree=max_degree, log_weights=lw)
        A = softmax_attention(Qv, Kv, beta, log_weights=lw) if attention is None else attention(beta)
        rows.append({"beta": float(beta), "dim": int(np.atleast_2d(Qv).shape[1]), **_found(cert),
                     "verified": False if cert is None else cert.verify(A, eps)})
    return rows


def degree_table(r: int, beta: float, eps: float, ms, n_queries: int = 50,
                 seed: int = 0, max_degree: int = 256) -> list:
    r"""Least certified degree against the number of keys ``m`` at fixed ``beta``, for ``n_queries`` queries and ``m``
    keys uniform in the unit ``r``-ball. The count at a fixed ``D`` does not depend on ``m``, but the row error sums
    ``m`` pointwise errors, so ``D`` grows with ``m`` (heuristically like :math:`\sqrt{\beta\log(m/\varepsilon)}`,
    reported beside it). Rows: ``m``, ``degree`` (``None``: none up to ``max_degree``), ``count``, ``error``,
    ``verified``, ``sqrt(beta log(m/eps))``."""
    eps = finite_nonnegative("eps", eps)
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    Y = uniform_ball(n_queries, r, seed=seed)
    rows = []
    for m in ms:
        X = uniform_ball(int(m), r, seed=seed + 1)
        cert = polynomial_certificate(Y, X, beta, eps, max_degree=max_degree)
        ok = cert is not None and cert.verify(softmax_attention(Y, X, beta), eps)
        rows.append({"m": int(m), **_found(cert), "verified": bool(ok),
                     "sqrt(beta log(m/eps))": float(np.sqrt(beta * np.log(m / eps)))})
    return rows
