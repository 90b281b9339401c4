r"""Finite polynomial rank certificates (``prop-polynomial-certificate``).

For visible coordinates ``q_i, k_j`` in :math:`\mathbb R^r` and logits
:math:`\ell_{ij} = \beta\langle q_i, k_j\rangle` (plus key log-weights :math:`\log w_j`), row ``i``
of the attention is :math:`A_{ij} = w_j e^{\ell_{ij} - h_i} / Z_i` with :math:`h_i = \max_j \ell_{ij}`
and the exact normaliser :math:`Z_i = \sum_j w_j e^{\ell_{ij} - h_i}`. Replace :math:`t \mapsto e^{t-h_i}`
by its degree-``D`` Chebyshev interpolant :math:`p_i` on the row's logit range
:math:`[\min_j \ell_{ij}, \max_j \ell_{ij}]` and keep :math:`Z_i`:

.. math:: B_{ij} = w_j\, p_i(\beta\langle q_i, k_j\rangle) / Z_i .

:math:`k \mapsto p_i(\beta\langle q_i, k\rangle)` is a polynomial of degree ``<= D`` on
:math:`\mathbb R^r`, so every row of ``B`` lies in the span of the ``m``-vectors
:math:`(w_j k_j^\alpha)_j`, :math:`|\alpha| \le D`, and

.. math:: \operatorname{rank} B \le \binom{r + D}{D}.

The *count formula* at a fixed degree ``D`` does not depend on ``n`` or ``m``; the degree
needed to meet ``eps`` does: the row error sums ``m`` pointwise errors, so ``D`` grows like
:math:`\sqrt{\beta\log(m/\varepsilon)}` without weights, and with the range of the key
log-weights when there are weights (:func:`degree_table`). Keys on a sphere :math:`S^{r-1}`
need only the restrictions of those polynomials, the spherical harmonics of degree ``<= D``
(:func:`attnrank_lite.laws.spectra.harmonic_count`, arguments ``(D, r)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from ..engine.attention import (
    logit_rounding_bound,
    query_key_pair,
    row_softmax,
    softmax_attention,
)
from ..engine.certificates import UpperCertificate
from ..engine.checks import (
    UNIT_ROUNDOFF,
    count_value,
    eps_value,
    finite_nonnegative,
    gamma,
    parse_stored,
    real_matrix,
)
from ..engine.checks import log_weights as _check_log_weights
from ..laws.geometry import uniform_ball
from ..laws.spectra import harmonic_count  # re-exported: (degree, d), the one harmonic count

__all__ = [
    "PolynomialCertificate",
    "degree_table",
    "harmonic_count",
    "monomial_count",
    "polynomial_certificate",
    "polynomial_matrix",
    "polynomial_sweep",
]

_BLOCK = 256


def monomial_count(r: int, D: int) -> int:
    r"""Number of monomials of degree ``<= D`` in ``r`` variables: :math:`\binom{r+D}{D}`."""
    r, D = int(r), int(D)
    if r < 0 or D < 0:
        raise ValueError(f"need r >= 0 and D >= 0, got r={r}, D={D}")
    return comb(r + D, D)


def _cheb_coefficients(half: np.ndarray, D: int) -> np.ndarray:
    r"""Chebyshev coefficients (shape (n, D+1)) of the degree-D interpolant of
    :math:`x \mapsto e^{h (x - 1)}` on [-1, 1] at the D+1 Chebyshev points of the first kind."""
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
    b1 = np.zeros_like(u)
    b2 = np.zeros_like(u)
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
    """For rows ``sl``: logits, row weights g = w_j / Z_i, the interpolant values and data for margins."""
    live = np.isfinite(lw)
    ell = beta * (Qv[sl] @ Kv.T)  # (b, m)
    ell_live = np.where(live[None, :], ell, np.nan)
    hi = np.nanmax(ell_live, axis=1)
    lo = np.nanmin(ell_live, axis=1)
    half = (hi - lo) / 2.0
    mid = (hi + lo) / 2.0
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
    r"""The explicit ``B`` of the degree-``D`` polynomial certificate (shape (n, m)).

    :math:`B_{ij} = w_j p_i(\beta\langle q_i,k_j\rangle)/Z_i`; rank at most :math:`\binom{r+D}{D}`.
    """
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
    """Per-row l1 error of B against A (A None: the exact attention of the data), and a rounding margin."""
    n, m = Qv.shape[0], Kv.shape[0]
    r = Qv.shape[1]
    err = np.empty(n)
    margin = np.zeros(n)
    k2 = np.arange(D + 1, dtype=np.float64) ** 2
    gam_eval = gamma(4 * (D + 1) ** 2 + 2 * r + 16)
    gam_sum = gamma(m + r + 8)
    for s in range(0, n, _BLOCK):
        sl = slice(s, min(n, s + _BLOCK))
        ell, _, half, g, c, p = _rows(Qv, Kv, beta, lw, D, sl)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            B = g * p
            if A is None:
                Ablk = row_softmax(ell + lw[None, :])
            else:
                Ablk = A[sl]
            E = np.abs(Ablk - B).sum(axis=1)
        err[sl] = np.where(np.isfinite(E), E, np.inf)
        if with_margin:
            margin[sl] = _rounding_margin(Qv[sl], Kv, beta, lw, ell, half, g, c, Ablk, B,
                                          k2, gam_eval, gam_sum)
    margin = np.where(np.isfinite(margin), margin, np.inf)
    return err, margin


def _rounding_margin(Qs, Kv, beta, lw, ell, half, g, c, Ablk, B, k2, gam_eval, gam_sum):
    r"""Proven bound, per row, on the rounding in the computed error of the polynomial certificate.

    The certificate's matrix is defined from the stored floats with exact arithmetic:
    :math:`B^*_{ij} = e^{a_{ij}} P_i(u^*_{ij})`, where :math:`a_{ij} = \tilde\lambda_j -
    \log\tilde Z_i` uses the *computed* shifted log-weight :math:`\tilde\lambda_j` and log
    normaliser :math:`\log\tilde Z_i` (a column factor times a row factor, so the rank bound
    :math:`\binom{r+D}{D}` holds whatever they are), :math:`P_i` is the Chebyshev series with the
    computed coefficients and :math:`u^*_{ij} = (\beta\langle q_i,k_j\rangle - \mathrm{mid}_i)
    / \mathrm{half}_i` uses the exact logit. The computed entry :math:`g_{ij}p_{ij}` differs by:

    * the exponent argument: :math:`\mathrm{fl}(a_{ij})` is one rounding of a difference, off
      by at most :math:`u|a_{ij}|`, and ``exp`` adds a few ulp, so :math:`g_{ij}` has relative
      error :math:`\eta_{ij} \le \mathrm{expm1}(2u(|\log g_{ij}| + 1)) + 8u` — large
      log-weights or log-normalisers (large :math:`|a_{ij}|`) amplify it; an entry with
      :math:`g_{ij}` below the smallest normal number has absolute error below
      :math:`2^{-1021}`;
    * the polynomial argument: the computed logit is within :math:`\Delta_{ij}`
      (:func:`attnrank_lite.engine.attention.logit_rounding_bound`) of the exact one, the shift by
      :math:`\mathrm{mid}_i` and the division add :math:`u|\ell_{ij} - \mathrm{mid}_i|` and
      :math:`u|u_{ij}|`, so :math:`|u_{ij} - u^*_{ij}| \le \delta_{ij} :=
      (\Delta_{ij} + 2u|\ell_{ij} - \mathrm{mid}_i|)/\mathrm{half}_i + 2u` (clipping to
      [-1, 1] only moves toward :math:`u^*`); on :math:`[-1-\delta, 1+\delta]`,
      :math:`|T_k'| \le k^2 e^{(k-1)\operatorname{arccosh}(1+\delta)} \le k^2
      e^{D\sqrt{2\delta+\delta^2}}`, so :math:`|P_i(u) - P_i(u^*)| \le S'_i\,\delta_{ij}`
      with :math:`S'_i = e^{D\sqrt{2\delta_i+\delta_i^2}}\sum_k k^2|c_{ik}|`;
    * the Clenshaw evaluation: :math:`\gamma_{4(D+1)^2+2r+16}(S_i + 1)` with
      :math:`S_i = \sum_k |c_{ik}| \ge \max_{[-1,1]}|P_i|`; the product :math:`g p`: ``u``;
    * the row sum of :math:`|A - B|`: :math:`\gamma_{m+r+8}(\sum_j|A_{ij}| + \sum_j|B_{ij}|)`.

    Summed over the row, with a relative ``1e-10`` for the evaluation of the bound itself.
    Dead keys (weight zero, :math:`g_{ij} = 0` exactly) contribute nothing.
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
        du = np.where(half[:, None] > 0,
                      (Delta + 2 * u * np.abs(ell - mid[:, None])) / safe[:, None] + 2 * u, 0.0)
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
    r"""Upper certificate :math:`\mathrm{rank}_\varepsilon(A) \le \binom{r+D}{D}` from per-row polynomials.

    Attributes
    ----------
    Qv : ndarray, shape (n, r)
    Kv : ndarray, shape (m, r)
        Visible coordinates (logits ``beta Qv Kv^T``).
    beta : float
    degree : int
        ``D``.
    count : int
        :math:`\binom{r + D}{D}`, the certified rank bound.
    error : float
        Measured max-row-l1 error against the attention of the stored data.
    log_weights : ndarray, shape (m,), or None
    """

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

    def verify(self, A, eps: float) -> bool:
        """Recompute ``B`` from the stored data and check ``||A - B|| <= eps`` with the proven
        rounding margin of :func:`_rounding_margin`, and that ``count`` is the monomial count of
        ``(dim, degree)``.

        ``A`` must be a finite real matrix and ``eps`` a finite real ``>= 0`` (else
        ``TypeError`` / ``ValueError``); malformed stored data (complex or non-finite
        coordinates, 2-D log-weights, a non-integer or boolean degree or count, shapes that do not
        fit ``A``) give ``False``.
        """
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
        if parsed is None:
            return False
        Qv, Kv, beta, lw, D = parsed
        if A.shape != (Qv.shape[0], Kv.shape[0]):
            return False
        if A.shape[0] == 0:
            return True
        err, margin = _row_errors(A, Qv, Kv, beta, lw, D, with_margin=True)
        return bool(np.all((err + margin) * (1 + 4 * UNIT_ROUNDOFF) <= eps))

    def certified_rank(self, A, eps: float) -> int | None:
        """``count`` when :meth:`verify` holds (it checks ``count`` against the parsed data)."""
        return int(self.count) if self.verify(A, eps) else None

    def as_dict(self) -> dict:
        return {"dim": self.dim, "degree": int(self.degree), "count": int(self.count), "error": float(self.error)}

    def __repr__(self) -> str:
        return (f"PolynomialCertificate(r={self.dim}, D={self.degree}, count={self.count}, "
                f"error={self.error:.3g})")


def polynomial_certificate(Qv, Kv, beta: float, eps: float, max_degree: int = 64, log_weights=None,
                           start: int | None = None):
    r"""Smallest-degree polynomial certificate meeting ``eps`` (or ``None``).

    Two stages. The *screen* at degree ``D`` is the computed row error alone,
    :math:`\max_i \|A_i - B_i\|_1 \le \varepsilon` without the rounding margin; a degree the
    screen refuses is refused by the certified check too (the margin is ``>= 0``). The least
    screened degree ``D_s`` is searched by galloping from ``start`` (doubling ``D = 0, 1, 2,
    4, ...`` when ``start`` is None, as before; from a hint, e.g. the degree of a neighbouring
    sequence, steps of 1, 2, 4, ... up or down) and then bisection. Only then is the certified
    check (error plus the proven margin of :func:`_rounding_margin`, the check ``verify`` makes)
    run, at ``D_s`` and, should the margin tip it over, at ``D_s + 1, D_s + 2, D_s + 4, ...``
    with bisection, up to ``max_degree``. The error is essentially (not provably) monotone in
    ``D``, so the degree found is the smallest passing one in all cases we checked; the
    certificate is valid regardless (it carries its measured error and passed the certified
    check at its degree).

    Parameters
    ----------
    Qv : array_like, shape (n, r)
    Kv : array_like, shape (m, r)
        Visible coordinates (e.g. from :func:`attnrank_lite.quotient.interaction.visible_coordinates`).
    beta : float
    eps : float
        Target max-row-l1 error (``> 0``).
    max_degree : int
    log_weights : array_like, shape (m,), optional
    start : int, optional
        First degree tried (a hint; clipped to ``[0, max_degree]``). It changes the number of
        checks, not the degree found when the error is monotone in ``D``.

    Returns
    -------
    PolynomialCertificate or None
    """
    Qv, Kv, beta, lw = _prepare(Qv, Kv, beta, log_weights)
    eps = finite_nonnegative("eps", eps)
    max_degree = int(max_degree)
    if max_degree < 0:
        raise ValueError(f"max_degree must be >= 0, got {max_degree}")
    stored_lw = None if log_weights is None else lw.copy()
    if Qv.shape[0] == 0:
        return PolynomialCertificate(Qv, Kv, beta, 0, 1, 0.0, stored_lw)
    errors: dict[int, float] = {}

    def screen(D):
        err, _ = _row_errors(None, Qv, Kv, beta, lw, D, with_margin=False)
        errors[D] = float(err.max())
        return bool(np.all(err <= eps))

    def certified(D):
        err, margin = _row_errors(None, Qv, Kv, beta, lw, D, with_margin=True)
        errors[D] = float(err.max())
        return bool(np.all(err + margin <= eps))

    D = _least_passing(screen, 0, max_degree, start)
    if D is None:
        return None
    if not certified(D):
        D = _least_passing(certified, D + 1, max_degree, None)
        if D is None:
            return None
    return PolynomialCertificate(Qv.copy(), Kv.copy(), beta, D, monomial_count(Qv.shape[1], D),
                                 errors[D], stored_lw)


def _least_passing(check, low: int, high: int, start: int | None):
    """Least ``D`` in ``[low, high]`` with ``check(D)`` (None if ``check(high)`` fails), for a
    monotone ``check``: gallop from ``start`` (default: ``low``, then ``low + 1, low + 2,
    low + 4, ...``) to a failing and a passing degree, then bisect; each degree checked once."""
    if low > high:
        return None
    cache: dict[int, bool] = {}

    def ok(D):
        if D not in cache:
            cache[D] = check(D)
        return cache[D]

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


def polynomial_sweep(Qv, Kv, betas, eps: float, max_degree: int = 64,
                     log_weights=None, key_offsets=None, attention=None) -> list:
    r"""Polynomial certificates of ``rowsoftmax(beta Qv Kv^T + log w(beta))``.

    Key log-weights :math:`\log w_j(\beta) = \text{log\_weights}_j +
    \beta\,\text{key\_offsets}_j` (the offsets returned by
    :func:`attnrank_lite.quotient.interaction.visible_coordinates`).

    Parameters
    ----------
    Qv : array_like, shape (n, r)
    Kv : array_like, shape (m, r)
    betas : sequence of float
    eps : float
    max_degree : int
    log_weights, key_offsets : array_like, shape (m,), optional
    attention : callable, optional
        ``beta -> A`` (shape (n, m)), the matrix each certificate is verified
        against (e.g. the attention of the original queries and keys).
        Default: the attention of the visible coordinates.

    Returns
    -------
    list of dict
        ``beta``, ``dim``, ``degree``, ``count``, ``error``, ``verified``
        (``None`` entries when no degree up to ``max_degree`` meets ``eps``).
    """
    m = np.atleast_2d(Kv).shape[0]
    base = np.zeros(m) if log_weights is None else np.asarray(log_weights, dtype=np.float64)
    off = np.zeros(m) if key_offsets is None else np.asarray(key_offsets, dtype=np.float64)
    weighted = log_weights is not None or key_offsets is not None
    rows = []
    for beta in betas:
        lw = base + float(beta) * off if weighted else None
        cert = polynomial_certificate(Qv, Kv, beta, eps, max_degree=max_degree,
                                      log_weights=lw)
        if attention is None:
            A = softmax_attention(Qv, Kv, beta, log_weights=lw)
        else:
            A = attention(beta)
        rows.append({"beta": float(beta), "dim": int(np.atleast_2d(Qv).shape[1]),
                     "degree": None if cert is None else cert.degree,
                     "count": None if cert is None else cert.count,
                     "error": None if cert is None else cert.error,
                     "verified": False if cert is None else cert.verify(A, eps)})
    return rows


def degree_table(r: int, beta: float, eps: float, ms, n_queries: int = 50,
                 seed: int = 0, max_degree: int = 256) -> list:
    r"""Least certified degree against the number of keys ``m`` at fixed ``beta``.

    Queries: ``n_queries`` uniform points of the unit ``r``-ball; keys: ``m``
    uniform points of the unit ``r``-ball (no weights). The count
    :math:`\binom{r+D}{D}` at fixed ``D`` does not depend on ``m``, but the
    row error sums ``m`` pointwise errors, so the least ``D`` meeting ``eps``
    grows with ``m`` (heuristically like :math:`\sqrt{\beta\log(m/\varepsilon)}`,
    reported beside it as ``sqrt(beta log(m/eps))``).

    Parameters
    ----------
    r : int
        Dimension, ``>= 1``.
    beta, eps : float
    ms : sequence of int
        Key counts.
    n_queries, seed, max_degree : int

    Returns
    -------
    list of dict
        ``m``, ``degree`` (``None``: none up to ``max_degree``), ``count``,
        ``error``, ``verified`` (the certificate's ``verify`` against the
        attention at ``eps``), ``sqrt(beta log(m/eps))``.
    """
    eps = finite_nonnegative("eps", eps)
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    Y = uniform_ball(n_queries, r, seed=seed)
    rows = []
    for m in ms:
        X = uniform_ball(int(m), r, seed=seed + 1)
        cert = polynomial_certificate(Y, X, beta, eps, max_degree=max_degree)
        ok = cert is not None and cert.verify(softmax_attention(Y, X, beta), eps)
        rows.append({"m": int(m),
                     "degree": None if cert is None else cert.degree,
                     "count": None if cert is None else cert.count,
                     "error": None if cert is None else cert.error,
                     "verified": bool(ok),
                     "sqrt(beta log(m/eps))": float(np.sqrt(beta * np.log(m / eps)))})
    return rows
