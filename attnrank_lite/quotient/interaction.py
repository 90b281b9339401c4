r"""Softmax-visible interaction geometry of a head (``prop-quotient``,
``def-visible-dimension``, ``prop-head-visible``, ``lem-softmax-perturbation``,
``prop-truncation-residual``, ``def-tolerance-dimension``).

Row-softmax is blind to row-scalar logit shifts: ``rowsoftmax(L + c 1^T) = rowsoftmax(L)``
(``prop-quotient``). A *column-scalar* term ``1 c^T`` (the same for every query) is a key
log-weight ``log w_j = c_j``; key weights are free by ``prop-multiplicity`` (a key of weight
``w`` acts as ``w`` identical keys). So the softmax-visible part of the logits is the doubly
centred matrix

.. math:: P_n L P_m, \qquad P_k = I_k - \tfrac1k \mathbf 1\mathbf 1^\top,

and the *visible dimension* ``r`` of an instance is its numerical rank. For a head
``q = W_Q h + b_Q``, ``k = W_K h' + b_K`` the key bias is row-scalar and the query-bias term
``b_Q^T W_K h'_j`` is column-scalar, so neither bias ever changes ``r``.

Approximate interaction subspaces: truncating the visible interaction ``M`` to rank ``s``
moves row ``i``'s logits by ``delta_ij = beta q_i^T (M - M_s) k_j`` and, by
``lem-softmax-perturbation``, moves the attention row by at most ``2 tanh(osc_i / 4)`` in
l1, where ``osc_i = max_j delta_ij - min_j delta_ij`` (:func:`oscillation_bound`).
"""
from __future__ import annotations

import numpy as np

from ..engine.attention import query_key_pair, row_softmax
from ..engine.checks import finite_nonnegative
from ..engine.norms import row_l1
from ..engine.perturbation import oscillation, oscillation_bound

__all__ = [
    "double_centre",
    "head_interaction_singular_values",
    "head_visible_dimension",
    "residual_bounds",
    "row_scalar_quotient",
    "tolerance_dimension",
    "truncate_interaction",
    "visible_coordinates",
    "visible_dimension",
]


_U = np.finfo(np.float64).eps


def _numerical_rank(sigma: np.ndarray, rtol: float, floor: float = 0.0) -> int:
    """Number of singular values above ``rtol * sigma_max`` and above ``floor``.

    ``floor`` is the size of rounding noise left by the centring (relative to
    the *uncentred* data): a quotient that is zero in exact arithmetic has
    dimension 0 (e.g. identical keys).
    """
    sigma = np.asarray(sigma, dtype=np.float64)
    if sigma.size == 0:
        return 0
    top = float(sigma.max())
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
    r"""Row-scalar quotient of a logit matrix: :math:`L (I - \mathbf 1\mathbf 1^\top/m)`.

    Subtracts each row's mean. Two logit matrices have the same row-softmax iff
    their quotients agree (for finite logits; ``prop-quotient``).

    Parameters
    ----------
    L : array_like, shape (n, m)
        Finite logits.

    Returns
    -------
    ndarray, shape (n, m)
        Rows with mean zero.
    """
    L = _logits(L)
    if L.shape[1] == 0:
        return L.copy()
    return L - L.mean(axis=1, keepdims=True)


def double_centre(L) -> np.ndarray:
    r"""Doubly centred logits :math:`P_n L P_m` (row and column means removed).

    :math:`L P_m = P_n L P_m + \mathbf 1 c^\top` with :math:`c` the column means
    of :math:`L P_m`: the second term is column-scalar, a key log-weight. So
    ``rowsoftmax(L)`` is the attention of the logits ``P_n L P_m`` with key
    log-weights ``c`` (``def-visible-dimension``).

    Parameters
    ----------
    L : array_like, shape (n, m)
        Finite logits.

    Returns
    -------
    ndarray, shape (n, m)
        Every row and every column has mean zero.
    """
    C = row_scalar_quotient(L)
    if C.shape[0] == 0:
        return C
    return C - C.mean(axis=0, keepdims=True)


def visible_dimension(L, rtol: float = 1e-10) -> int:
    r"""Visible dimension of an instance: the numerical rank of :math:`P_nLP_m`.

    ``def-visible-dimension``: row-scalar logit terms drop out of the row
    softmax (``prop-quotient``) and column-scalar terms are key log-weights,
    free by ``prop-multiplicity``; what is left is the doubly centred matrix
    :func:`double_centre`.

    Parameters
    ----------
    L : array_like, shape (n, m)
        Logits (finite, real).
    rtol : float
        Singular values above ``rtol * sigma_max`` count; a zero matrix has
        dimension 0. Singular values below the rounding level of the centring,
        ``16 u max(n, m) ||L||_F`` (``u`` = float64 machine epsilon), never
        count.

    Returns
    -------
    int
    """
    rtol = _check_rtol(rtol)
    L = _logits(L)
    C = double_centre(L)
    if C.size == 0:
        return 0
    floor = _floor(max(C.shape), float(np.linalg.norm(L)))
    sigma = np.linalg.svd(C, compute_uv=False)
    return _numerical_rank(sigma, rtol, floor)


def visible_coordinates(Q, K, rtol: float = 1e-10):
    r"""Visible coordinates of an instance: rank-``r`` factors and key offsets.

    With centred queries and keys :math:`Q_c = Q - \mathbf 1\bar q^\top`,
    :math:`K_c = K - \mathbf 1\bar k^\top`, the row-scalar quotient of
    :math:`QK^\top` is

    .. math:: QK^\top P_m = QK_c^\top = Q_cK_c^\top + \mathbf 1 (K_c\bar q)^\top .

    The SVD :math:`U\Sigma V^\top` of the doubly centred :math:`Q_cK_c^\top`,
    truncated at ``rtol * sigma_max``, gives :math:`K_v = V_r\Sigma_r^{1/2}`
    and :math:`U_r\Sigma_r^{1/2}`. The column-scalar part
    :math:`K_c\bar q = K_v t + a` is split by least squares into a part in the
    span of :math:`K_v` (absorbed into the queries,
    :math:`Q_v = U_r\Sigma_r^{1/2} + \mathbf 1 t^\top`) and a remainder ``a``
    orthogonal to it, the *key offsets*. Then for every ``beta``

    .. math:: \mathrm{rowsoftmax}(\beta QK^\top)
              = \mathrm{rowsoftmax}(\beta Q_vK_v^\top + \mathbf 1(\beta a)^\top),

    i.e. ``softmax_attention(Qv, Kv, beta, log_weights=beta * a)``, up to the
    truncated singular values: ``r`` coordinates, and key log-weights
    ``beta * a`` (``prop-multiplicity``) that are as small as the instance
    allows (zero, up to rounding, when the queries' mean acts inside the
    span of the query differences). The SVD is computed from the factors
    (cost ``O((n + m) d^2)``), not from the ``n x m`` product.

    Parameters
    ----------
    Q : array_like, shape (n, d)
    K : array_like, shape (m, d)
    rtol : float

    Returns
    -------
    Qv : ndarray, shape (n, r)
    Kv : ndarray, shape (m, r)
        ``Kv`` has columns with mean zero; ``r = visible_dimension(Q @ K.T,
        rtol)`` (up to rounding at the threshold).
    a : ndarray, shape (m,)
        Key offsets per unit ``beta`` (log-weights ``beta * a``), mean zero
        and orthogonal to the columns of ``Kv``.
    """
    rtol = _check_rtol(rtol)
    Q, K = query_key_pair(Q, K)
    n, m = Q.shape[0], K.shape[0]
    qbar = Q.mean(axis=0) if n else np.zeros(Q.shape[1])
    Qc = Q - qbar[None, :]
    Kc = K - K.mean(axis=0, keepdims=True) if m else K.copy()
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


def head_interaction_singular_values(W_Q, b_Q, W_K, b_K=None, key_states=None,
                                     query_states=None):
    r"""Singular values of a head's visible bilinear form (``prop-head-visible``).

    For ``q = W_Q h + b_Q`` and ``k = W_K h' + b_K`` (torch ``Linear``
    convention: ``W_Q`` has shape (d_head, d_model)) the logits are

    .. math:: \langle q_i, k_j\rangle = h_i^\top W_Q^\top W_K h'_j
              + \underbrace{b_Q^\top W_K h'_j}_{\text{column-scalar}}
              + \underbrace{q_i^\top b_K}_{\text{row-scalar}},

    so the doubly centred logits are :math:`H_{q,c} W_Q^\top W_K H_{k,c}^\top`
    with centred query and key states (``None``: all of
    :math:`\mathbb R^{d_\text{model}}`, i.e. the identity). Neither bias
    enters; both are shape-checked. The singular values are those of
    :math:`R\, W_K H_{k,c}^\top` where :math:`H_{q,c}W_Q^\top = Q_a R` (thin QR).

    Returns
    -------
    sigma : ndarray
        Singular values, decreasing (length at most d_head).
    floor : float
        Rounding level of the computation (with the uncentred states):
        singular values below it are zero in exact arithmetic as far as
        float64 can tell.
    """
    W_Q = np.atleast_2d(np.asarray(W_Q, dtype=np.float64))
    W_K = np.atleast_2d(np.asarray(W_K, dtype=np.float64))
    dh, dm = W_Q.shape
    if W_K.shape != (dh, dm):
        raise ValueError(
            f"W_K has shape {W_K.shape}, expected {W_Q.shape} like W_Q")
    for name, b in (("b_Q", b_Q), ("b_K", b_K)):
        if b is not None and np.asarray(b).reshape(-1).shape != (dh,):
            raise ValueError(
                f"{name} must have shape ({dh},), got {np.asarray(b).shape}")
    if not (np.isfinite(W_Q).all() and np.isfinite(W_K).all()):
        raise ValueError("head weights must be finite")
    scale = float(np.linalg.norm(W_Q) * np.linalg.norm(W_K))
    size = dm
    left = W_Q.T  # (d_model or n, d_head)
    if query_states is not None:
        Hq = np.atleast_2d(np.asarray(query_states, dtype=np.float64))
        left = _centred(Hq, dm, "query_states") @ W_Q.T
        scale *= float(np.linalg.norm(Hq))
        size = max(size, Hq.shape[0])
    right = W_K
    if key_states is not None:
        Hk = np.atleast_2d(np.asarray(key_states, dtype=np.float64))
        right = W_K @ _centred(Hk, dm, "key_states").T
        scale *= float(np.linalg.norm(Hk))
        size = max(size, Hk.shape[0])
    _, R = np.linalg.qr(left)
    sigma = np.linalg.svd(R @ right, compute_uv=False)
    return sigma, _floor(size, scale)


def head_visible_dimension(W_Q, b_Q, W_K, b_K, key_states=None,
                           rtol: float = 1e-10, query_states=None) -> int:
    r"""Visible dimension of a head (``prop-head-visible``).

    .. math:: r = \operatorname{rank}\big(H_{q,c} W_Q^\top W_K H_{k,c}^\top\big)

    * ``b_K`` is row-scalar and drops out; key directions constant over
      ``key_states`` drop out.
    * ``b_Q`` drops out too: ``b_Q^T W_K h'_j`` varies with the key but is the
      same for every query, a key log-weight (``prop-multiplicity``).

    Parameters
    ----------
    W_Q, W_K : array_like, shape (d_head, d_model)
    b_Q, b_K : array_like, shape (d_head,), or None
        Shape-checked; they never change the answer.
    key_states : array_like, shape (N, d_model), optional
        Key-side hidden states; their centred span is where keys vary.
        ``None``: all of R^d_model.
    rtol : float
        Relative singular-value threshold.
    query_states : array_like, shape (n, d_model), optional
        Query-side hidden states. ``None``: all of R^d_model (the largest
        visible dimension of any instance with these keys).

    Returns
    -------
    int
    """
    rtol = _check_rtol(rtol)
    sigma, floor = head_interaction_singular_values(
        W_Q, b_Q, W_K, b_K, key_states, query_states)
    return _numerical_rank(sigma, rtol, floor)


def truncate_interaction(M, s: int) -> np.ndarray:
    r"""Rank-``s`` SVD truncation :math:`M_s = \sum_{l \le s} \sigma_l u_l v_l^\top`.

    Parameters
    ----------
    M : array_like, shape (a, b)
    s : int
        ``0 <= s``; ``s >= min(a, b)`` returns ``M``.

    Returns
    -------
    ndarray, shape (a, b)
    """
    M = np.atleast_2d(np.asarray(M, dtype=np.float64))
    s = int(s)
    if s < 0:
        raise ValueError(f"s must be >= 0, got {s}")
    if s >= min(M.shape):
        return M.copy()
    U, S, Vt = np.linalg.svd(M, full_matrices=False)
    return (U[:, :s] * S[:s]) @ Vt[:s]


def residual_bounds(Q, K, M, s: int, beta: float, key_centre=None,
                    log_weights=None) -> dict:
    r"""Measured error of an interaction truncation and its three bounds.

    ``prop-truncation-residual``. With
    :math:`A = \mathrm{rowsoftmax}(\beta Q M K^\top + \mathbf 1\log w^\top)`,
    ``A_s`` the same with the rank-``s`` truncation :math:`M_s`, and
    :math:`\mathrm{osc}_i = \mathrm{osc}_j(\beta q_i^\top (M - M_s) k_j)`:

    .. math:: \|A - A_s\| \le \max_i 2\tanh(\mathrm{osc}_i/4)
              \le \max_i \mathrm{osc}_i/2 \le \beta\,\sigma_{s+1}(M)\, R_q R_k,

    :math:`R_q = \max_i |q_i|`, :math:`R_k = \max_j |k_j - c|` for the key
    centre ``c``.

    Parameters
    ----------
    Q : array_like, shape (n, a)
    K : array_like, shape (m, b)
    M : array_like, shape (a, b)
        Interaction matrix (logits ``beta q^T M k``).
    s : int
        Truncation rank.
    beta : float
    key_centre : array_like, shape (b,), optional
        ``c``; default the key mean.
    log_weights : array_like, shape (m,), optional
        Key log-weights (enter ``A`` and ``A_s`` alike; the bounds do not
        change). A head's query-bias term is such a log-weight.

    Returns
    -------
    dict
        ``measured``, ``tanh``, ``osc``, ``sigma`` (the four numbers above, in
        that order of the chain), ``sigma_next`` (:math:`\sigma_{s+1}(M)`, 0
        beyond the rank), ``R_q``, ``R_k``.
    """
    Q = np.atleast_2d(np.asarray(Q, dtype=np.float64))
    K = np.atleast_2d(np.asarray(K, dtype=np.float64))
    M = np.atleast_2d(np.asarray(M, dtype=np.float64))
    if M.shape != (Q.shape[1], K.shape[1]):
        raise ValueError(
            f"M must have shape ({Q.shape[1]}, {K.shape[1]}), got {M.shape}")
    beta = finite_nonnegative("beta", beta)
    s = int(s)
    if s < 0:
        raise ValueError(f"s must be >= 0, got {s}")
    if key_centre is None:
        c = K.mean(axis=0)
    else:
        c = np.asarray(key_centre, dtype=np.float64).reshape(-1)
    if c.shape != (K.shape[1],):
        raise ValueError(
            f"key_centre must have shape ({K.shape[1]},), got {c.shape}")
    sigma = np.linalg.svd(M, compute_uv=False)
    sigma_next = float(sigma[s]) if s < sigma.size else 0.0
    Ms = truncate_interaction(M, s)
    w = 0.0
    if log_weights is not None:
        w = np.asarray(log_weights, dtype=np.float64).reshape(1, -1)
    L = beta * (Q @ M @ K.T) + w
    Ls = beta * (Q @ Ms @ K.T) + w
    measured = row_l1(row_softmax(L) - row_softmax(Ls))
    osc = oscillation(beta * (Q @ (M - Ms) @ K.T))
    R_q = float(np.linalg.norm(Q, axis=1).max()) if Q.size else 0.0
    R_k = float(np.linalg.norm(K - c[None, :], axis=1).max()) if K.size else 0.0
    return {
        "measured": measured,
        "tanh": float(oscillation_bound(osc).max()),
        "osc": float((osc / 2.0).max()),
        "sigma": beta * sigma_next * R_q * R_k,
        "sigma_next": sigma_next,
        "R_q": R_q,
        "R_k": R_k,
    }


def tolerance_dimension(sigma, tau, scale: float = 1.0):
    r"""Tolerance-indexed SVD dimension (``def-tolerance-dimension``).

    :math:`r(\tau) = \min\{s : \text{scale}\cdot\sigma_{s+1} \le \tau\}`.
    With ``scale = beta R_q R_k`` this is the least truncation rank whose
    guaranteed output error :math:`\eta_s = \beta\sigma_{s+1}R_qR_k` is at most
    ``tau`` (``sigma_{s+1} = 0`` beyond the length of ``sigma``).

    Parameters
    ----------
    sigma : array_like, shape (k,)
        Singular values (any order; sorted decreasing here).
    tau : float or array_like
        Tolerance(s), ``>= 0``.
    scale : float
        ``>= 0``.

    Returns
    -------
    int, or ndarray of int with the shape of ``tau``
    """
    sig = np.sort(np.abs(np.asarray(sigma, dtype=np.float64).reshape(-1)))[::-1]
    scale = finite_nonnegative("scale", scale)
    t = np.asarray(tau, dtype=np.float64)
    if np.isnan(t).any() or (t < 0).any():
        raise ValueError("tau must be >= 0")
    # min{s : scale*sig[s] <= tau} = #{s : scale*sig[s] > tau} (sig decreasing)
    out = np.count_nonzero((scale * sig)[None, :] > t.reshape(-1, 1), axis=1)
    return int(out[0]) if t.ndim == 0 else out.reshape(t.shape)
