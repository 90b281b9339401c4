r"""Softmax-visible interaction geometry of a head (``prop-quotient``, ``def-visible-dimension``,
``prop-head-visible``, ``prop-truncation-residual``, ``def-tolerance-dimension``, ``thm-interaction-subspaces``;
SPEC.md section 3, chapters 4 and 5)."""
from __future__ import annotations

import numpy as np

from ..engine.attention import query_key_pair, row_softmax, softmax_attention
from ..engine.bracket import rank_bracket
from ..engine.checks import finite_nonnegative
from ..engine.norms import row_l1
from ..engine.perturbation import oscillation, oscillation_bound
from .polynomial import polynomial_certificate

__all__ = ["double_centre", "head_visible_dimension", "residual_bounds", "row_scalar_quotient", "tolerance_dimension",
           "truncate_interaction", "truncation_tradeoff", "visible_coordinates", "visible_dimension"]


_U = np.finfo(np.float64).eps


def _numerical_rank(sigma: np.ndarray, rtol: float, floor: float = 0.0) -> int:
    """Number of singular values above ``rtol * sigma_max`` and above ``floor`` (the rounding noise of the centring:
    a quotient that is zero in exact arithmetic has dimension 0)."""
    sigma = np.asarray(sigma, dtype=np.float64)
    top = float(sigma.max()) if sigma.size else 0.0
    if not top > 0:
        return 0
    return int(np.count_nonzero((sigma > rtol * top) & (sigma > floor)))


def _floor(size: int, scale: float) -> float:
    """Rounding level of centring/multiplying data of size ``scale``."""
    return 16.0 * _U * max(size, 1) * scale


def _check_rtol(rtol: float) -> float:
    rtol = float(rtol)
    if not (np.isfinite(rtol) and 0 <= rtol < 1):
        raise ValueError(f"rtol must be a number in [0, 1), got {rtol}")
    return rtol


def _logits(L) -> np.ndarray:
    L = np.asarray(L)
    if np.iscomplexobj(L):
        raise ValueError("logits must be real, got a complex array")
    L = L.astype(np.float64)
    if L.ndim != 2:
        raise ValueError(f"logits must be a 2-D array, got shape {L.shape}")
    if not np.isfinite(L).all():
        raise ValueError("logits must be finite")
    return L


def row_scalar_quotient(L) -> np.ndarray:
    r"""Row-scalar quotient :math:`L (I - \mathbf 1\mathbf 1^\top/m)` of finite logits (n, m), each row minus its
    mean: two logit matrices have the same row-softmax iff their quotients agree (``prop-quotient``)."""
    L = _logits(L)
    return L.copy() if L.shape[1] == 0 else L - L.mean(axis=1, keepdims=True)


def double_centre(L) -> np.ndarray:
    r"""Doubly centred logits :math:`P_n L P_m` (row and column means removed), shape (n, m): :math:`L P_m = P_n L
    P_m + \mathbf 1 c^\top`, so ``rowsoftmax(L)`` is the attention of ``P_n L P_m`` with key log-weights ``c``."""
    C = row_scalar_quotient(L)
    return C if C.shape[0] == 0 else C - C.mean(axis=0, keepdims=True)


def visible_dimension(L, rtol: float = 1e-10) -> int:
    r"""Visible dimension (``def-visible-dimension``) of finite real logits ``L`` (n, m): the number of singular
    values of :math:`P_nLP_m` above ``rtol * sigma_max`` and ``16 u max(n, m) ||L||_F``."""
    rtol = _check_rtol(rtol)
    L = _logits(L)
    C = double_centre(L)
    if C.size == 0:
        return 0
    return _numerical_rank(np.linalg.svd(C, compute_uv=False), rtol, _floor(max(C.shape), float(np.linalg.norm(L))))


def visible_coordinates(Q, K, rtol: float = 1e-10):
    r"""Visible coordinates ``(Qv, Kv, a)`` of queries (n, d) and keys (m, d). With centred :math:`Q_c, K_c`,
    :math:`QK^\top P_m = Q_cK_c^\top + \mathbf 1 (K_c\bar q)^\top`. The SVD of :math:`Q_cK_c^\top` (from the
    factors), truncated at ``rtol``, gives :math:`K_v = V_r\Sigma_r^{1/2}` (columns of mean zero); the column term
    :math:`K_c\bar q = K_v t + a` is split by least squares, :math:`Q_v = U_r\Sigma_r^{1/2} + \mathbf 1 t^\top`, and
    ``a`` (m,) is the key offset per unit ``beta``, orthogonal to ``Kv``:

    .. math:: \mathrm{rowsoftmax}(\beta QK^\top)
              = \mathrm{rowsoftmax}(\beta Q_vK_v^\top + \mathbf 1(\beta a)^\top)

    up to the truncated singular values; ``r = visible_dimension(Q @ K.T, rtol)`` up to rounding.
    """
    rtol = _check_rtol(rtol)
    Q, K = query_key_pair(Q, K)
    n, m = Q.shape[0], K.shape[0]
    qbar = Q.mean(axis=0) if n else np.zeros(Q.shape[1])
    Qc, Kc = Q - qbar[None, :], (K - K.mean(axis=0, keepdims=True) if m else K.copy())
    Ua, sa, Vat = np.linalg.svd(Qc, full_matrices=False)
    Ub, sb, Vbt = np.linalg.svd(Kc, full_matrices=False)
    core = (sa[:, None] * Vat) @ (Vbt.T * sb[None, :])  # Qc Kc^T = Ua core Ub^T
    W, s, Zt = np.linalg.svd(core, full_matrices=False)
    scale = float(np.linalg.norm(Q) * np.linalg.norm(K))
    r = _numerical_rank(s, rtol, _floor(max(n, m, Q.shape[1]), scale))
    root = np.sqrt(s[:r])
    Qv = ((Ua @ W[:, :r]) * root[None, :]).reshape(n, r)
    Kv = ((Ub @ Zt[:r].T) * root[None, :]).reshape(m, r)
    a = Kc @ qbar
    if r and m:
        t = np.linalg.lstsq(Kv, a, rcond=None)[0]
        Qv = Qv + t[None, :]
        a = a - Kv @ t
    return Qv, Kv, a


def _centred(H, dm: int, name: str) -> np.ndarray:
    H = np.atleast_2d(np.asarray(H, dtype=np.float64))
    if H.ndim != 2 or H.shape[1] != dm:
        raise ValueError(f"{name} must have shape (N, {dm}), got {H.shape}")
    if not np.isfinite(H).all():
        raise ValueError(f"{name} must be finite")
    return H - H.mean(axis=0, keepdims=True)


def head_visible_dimension(W_Q, b_Q, W_K, b_K, key_states=None, rtol: float = 1e-10, query_states=None) -> int:
    r"""Visible dimension of a head, :math:`\operatorname{rank}(H_{q,c} W_Q^\top W_K H_{k,c}^\top)`
    (``prop-head-visible``; ``W`` of shape (d_head, d_model)): ``b_K`` is row-scalar and ``b_Q`` column-scalar, so
    neither counts (only their shapes are checked); ``key_states``, ``query_states`` (N, d_model): the states keys
    and queries range over, centred (``None``: all of R^d_model). Singular values below the rounding level of the
    product are zero."""
    rtol = _check_rtol(rtol)
    W_Q, W_K = (np.atleast_2d(np.asarray(W, dtype=np.float64)) for W in (W_Q, W_K))
    dh, dm = W_Q.shape
    if W_K.shape != (dh, dm):
        raise ValueError(f"W_K has shape {W_K.shape}, expected {W_Q.shape} like W_Q")
    for name, b in (("b_Q", b_Q), ("b_K", b_K)):
        if b is not None and np.asarray(b).reshape(-1).shape != (dh,):
            raise ValueError(f"{name} must have shape ({dh},), got {np.asarray(b).shape}")
    if not (np.isfinite(W_Q).all() and np.isfinite(W_K).all()):
        raise ValueError("head weights must be finite")
    scale, size = float(np.linalg.norm(W_Q) * np.linalg.norm(W_K)), dm
    left, right = W_Q.T, W_K  # left: (d_model or n, d_head)
    if query_states is not None:
        left = _centred(query_states, dm, "query_states") @ W_Q.T
    if key_states is not None:
        right = W_K @ _centred(key_states, dm, "key_states").T
    for H in (query_states, key_states):
        if H is not None:
            H = np.atleast_2d(np.asarray(H, dtype=np.float64))
            scale *= float(np.linalg.norm(H))
            size = max(size, H.shape[0])
    _, R = np.linalg.qr(left)
    return _numerical_rank(np.linalg.svd(R @ right, compute_uv=False), rtol, _floor(size, scale))


def _truncation_rank(s) -> int:
    s = int(s)
    if s < 0:
        raise ValueError(f"s must be >= 0, got {s}")
    return s


def truncate_interaction(M, s: int) -> np.ndarray:
    r"""Rank-``s`` SVD truncation :math:`M_s = \sum_{l \le s} \sigma_l u_l v_l^\top` (``M`` itself when ``s >=
    min(a, b)``), shape (a, b)."""
    M = np.atleast_2d(np.asarray(M, dtype=np.float64))
    s = _truncation_rank(s)
    if s >= min(M.shape):
        return M.copy()
    U, S, Vt = np.linalg.svd(M, full_matrices=False)
    return (U[:, :s] * S[:s]) @ Vt[:s]


def residual_bounds(Q, K, M, s: int, beta: float, key_centre=None, log_weights=None) -> dict:
    r"""Measured error of an interaction truncation and its three bounds (``prop-truncation-residual``).

    With :math:`A = \mathrm{rowsoftmax}(\beta Q M K^\top + \mathbf 1\log w^\top)`, ``A_s`` the same with :math:`M_s`
    and :math:`\mathrm{osc}_i = \mathrm{osc}_j(\beta q_i^\top (M - M_s) k_j)`:

    .. math:: \|A - A_s\| \le \max_i 2\tanh(\mathrm{osc}_i/4)
              \le \max_i \mathrm{osc}_i/2 \le \beta\,\sigma_{s+1}(M)\, R_q R_k,

    :math:`R_q = \max_i |q_i|`, :math:`R_k = \max_j |k_j - c|` (``key_centre``, default the key mean).
    ``log_weights`` enter ``A`` and ``A_s`` alike.

    Returns
    -------
    dict
        ``measured``, ``tanh``, ``osc``, ``sigma`` (the chain), ``sigma_next`` (:math:`\sigma_{s+1}(M)`, 0 beyond
        the rank), ``R_q``, ``R_k``.
    """
    Q, K, M = (np.atleast_2d(np.asarray(X, dtype=np.float64)) for X in (Q, K, M))
    if M.shape != (Q.shape[1], K.shape[1]):
        raise ValueError(f"M must have shape ({Q.shape[1]}, {K.shape[1]}), got {M.shape}")
    beta, s = finite_nonnegative("beta", beta), _truncation_rank(s)
    c = K.mean(axis=0) if key_centre is None else np.asarray(key_centre, dtype=np.float64).reshape(-1)
    if c.shape != (K.shape[1],):
        raise ValueError(f"key_centre must have shape ({K.shape[1]},), got {c.shape}")
    sigma = np.linalg.svd(M, compute_uv=False)
    sigma_next = float(sigma[s]) if s < sigma.size else 0.0
    Ms = truncate_interaction(M, s)
    w = 0.0 if log_weights is None else np.asarray(log_weights, dtype=np.float64).reshape(1, -1)
    L, Ls = beta * (Q @ M @ K.T) + w, beta * (Q @ Ms @ K.T) + w
    measured = row_l1(row_softmax(L) - row_softmax(Ls))
    osc = oscillation(beta * (Q @ (M - Ms) @ K.T))
    R_q = float(np.linalg.norm(Q, axis=1).max()) if Q.size else 0.0
    R_k = float(np.linalg.norm(K - c[None, :], axis=1).max()) if K.size else 0.0
    return {"measured": measured, "tanh": float(oscillation_bound(osc).max()), "osc": float((osc / 2.0).max()),
            "sigma": beta * sigma_next * R_q * R_k, "sigma_next": sigma_next, "R_q": R_q, "R_k": R_k}


def tolerance_dimension(sigma, tau, scale: float = 1.0):
    r"""Tolerance-indexed SVD dimension :math:`r(\tau) = \min\{s : \text{scale}\cdot\sigma_{s+1} \le \tau\}`
    (``def-tolerance-dimension``; singular values in any order, ``sigma_{s+1} = 0`` beyond them; ``tau >= 0`` a
    number or an array, giving an int or an int array of its shape). With ``scale = beta R_q R_k``: the least
    truncation rank with guaranteed error ``<= tau``."""
    sig = np.sort(np.abs(np.asarray(sigma, dtype=np.float64).reshape(-1)))[::-1]
    scale = finite_nonnegative("scale", scale)
    t = np.asarray(tau, dtype=np.float64)
    if np.isnan(t).any() or (t < 0).any():
        raise ValueError("tau must be >= 0")
    # min{s : scale*sig[s] <= tau} = #{s : scale*sig[s] > tau} (sig decreasing)
    out = np.count_nonzero((scale * sig)[None, :] > t.reshape(-1, 1), axis=1)
    return int(out[0]) if t.ndim == 0 else out.reshape(t.shape)


def truncation_tradeoff(Q, K, M, beta: float, eps: float, s_values=None, max_degree: int = 64) -> list:
    r"""Total certificates for ``A = rowsoftmax(beta Q M K^T)`` through the truncations ``M_s`` (``s_values``,
    default ``0..min(a, b)``): the residual :math:`\tau_s` (``tanh`` of :func:`residual_bounds`) leaves the budget
    :math:`\varepsilon - \tau_s` for ``A_s``, :math:`\mathrm{rank}_\varepsilon(A) \le
    \mathrm{rank}_{\varepsilon-\tau_s}(A_s)`. The bracket's SVD upper side and the polynomial certificate of ``A_s``
    at that budget are each re-verified against ``A`` at ``eps``, so neither rests on the float value of
    :math:`\tau_s`.

    Returns
    -------
    list of dict
        ``s``, ``tau_measured``, ``tau_tanh``, ``tau_sigma``, ``budget``, ``upper``, ``verified_on_A``, ``poly_dim``,
        ``poly_degree``, ``poly_count``, ``poly_verified_on_A`` (``None`` / ``False`` without budget or certificate).
    """
    Q, K, M = (np.atleast_2d(np.asarray(X, dtype=np.float64)) for X in (Q, K, M))
    eps = finite_nonnegative("eps", eps)
    A = softmax_attention(Q @ M, K, beta)
    if s_values is None:
        s_values = range(min(M.shape) + 1)
    rows = []
    for s in s_values:
        b = residual_bounds(Q, K, M, s, beta)
        budget = eps - b["tanh"]
        row = {"s": int(s), "tau_measured": b["measured"], "tau_tanh": b["tanh"], "tau_sigma": b["sigma"],
               "budget": budget, "upper": None, "verified_on_A": False, "poly_dim": None,
               "poly_degree": None, "poly_count": None, "poly_verified_on_A": False}
        if budget > 0:
            QMs = Q @ truncate_interaction(M, s)
            As = softmax_attention(QMs, K, beta)
            br = rank_bracket(As, budget, effort="max")  # every family, as the chapter's tables
            row["upper"] = br.upper
            row["verified_on_A"] = bool(br.upper_certificate.verify(A, eps))
            Qv, Kv, a = visible_coordinates(QMs, K)
            cert = polynomial_certificate(Qv, Kv, beta, budget, max_degree=max_degree, log_weights=beta * a)
            if cert is not None:
                row.update(poly_dim=cert.dim, poly_degree=cert.degree, poly_count=cert.count,
                           poly_verified_on_A=bool(cert.verify(A, eps)))
        rows.append(row)
    return rows
