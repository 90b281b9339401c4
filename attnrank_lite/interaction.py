r"""Softmax-visible interaction geometry of a head (SPEC §3, items 4 and 5).

Row-softmax is blind to row-scalar logit shifts: ``rowsoftmax(L + c 1^T) = rowsoftmax(L)``.
Projecting every row of the logits onto the mean-zero vectors,

.. math:: L \mapsto L\,(I - \tfrac1m \mathbf 1 \mathbf 1^\top),

keeps exactly what the softmax can see. Its numerical rank is the *visible dimension* ``r`` of
an instance. For a head ``q = W_Q h + b_Q``, ``k = W_K h + b_K`` the visible bilinear form is

.. math:: (h, h') \mapsto [h; 1]^\top\, [W_Q\ b_Q]^\top W_K\, (h' - \bar h'),

so the key bias and every key direction constant over the keys drop out, while the query bias
acts as one extra constant query coordinate (the term ``b_Q^T W_K h'`` varies with the key and is
*not* row-scalar): it adds at most one visible dimension.

Approximate interaction subspaces: truncating the visible interaction ``M`` to rank ``s`` moves
row ``i``'s logits by ``delta_ij = beta q_i^T (M - M_s) k_j`` and, by Lemma 5.1, moves the
attention row by at most ``2 tanh(osc_i / 4)`` in l1, where ``osc_i = max_j delta_ij - min_j delta_ij``.
"""
from __future__ import annotations

import numpy as np

from .attention import query_key_pair, row_softmax
from .checks import finite_nonnegative
from .fitting import fit_loglog_slope
from .norms import row_l1

__all__ = [
    "row_scalar_quotient",
    "visible_dimension",
    "visible_coordinates",
    "head_visible_dimension",
    "head_interaction_singular_values",
    "truncate_interaction",
    "residual_bounds",
    "tolerance_dimension",
    "softmax_perturbation_bound",
    "oscillation",
    "hidden_instance",
    "uniform_ball",
    "decaying_head",
    "loglog_slope",
    "bracket_sweep",
    "truncation_tradeoff",
    "two_level_example",
    "random_perturbation_pairs",
]


_U = np.finfo(np.float64).eps


def _numerical_rank(sigma: np.ndarray, rtol: float, floor: float = 0.0) -> int:
    """Number of singular values above ``rtol * sigma_max`` and above the rounding ``floor``.

    ``floor`` is the size of rounding noise left by the centring (relative to the *uncentred*
    data): a quotient that is zero in exact arithmetic has dimension 0 (e.g. identical keys).
    """
    sigma = np.asarray(sigma, dtype=np.float64)
    if sigma.size == 0:
        return 0
    top = float(sigma.max())
    if not top > 0:
        return 0
    return int(np.count_nonzero((sigma > rtol * top) & (sigma > floor)))


def _floor(size: int, scale: float) -> float:
    """Rounding level of centring/multiplying data of magnitude ``scale`` over ``size`` terms."""
    return 16.0 * _U * max(size, 1) * scale


def _check_rtol(rtol: float) -> float:
    rtol = float(rtol)
    if not (np.isfinite(rtol) and 0 <= rtol < 1):
        raise ValueError(f"rtol must be a number in [0, 1), got {rtol}")
    return rtol


def row_scalar_quotient(L) -> np.ndarray:
    r"""Row-scalar quotient of a logit matrix: :math:`L (I - \mathbf 1\mathbf 1^\top/m)`.

    Subtracts each row's mean. Two logit matrices have the same row-softmax iff their quotients
    agree (for finite logits).

    Parameters
    ----------
    L : array_like, shape (n, m)
        Finite logits.

    Returns
    -------
    ndarray, shape (n, m)
        Rows with mean zero.
    """
    L = np.asarray(L, dtype=np.float64)
    if L.ndim != 2:
        raise ValueError(f"logits must be a 2-D array, got shape {L.shape}")
    if not np.isfinite(L).all():
        raise ValueError("logits must be finite")
    if L.shape[1] == 0:
        return L.copy()
    return L - L.mean(axis=1, keepdims=True)


def visible_dimension(L, rtol: float = 1e-10) -> int:
    r"""Visible dimension of an instance: the numerical rank of :math:`L(I - \mathbf 1\mathbf 1^\top/m)`.

    Parameters
    ----------
    L : array_like, shape (n, m)
        Logits (finite).
    rtol : float
        Singular values above ``rtol * sigma_max`` count; a zero matrix has dimension 0.
        Singular values below the rounding level of the centring,
        ``16 u max(n, m) ||L||_F`` (``u`` = float64 machine epsilon), never count.

    Returns
    -------
    int
    """
    rtol = _check_rtol(rtol)
    C = row_scalar_quotient(L)
    if C.size == 0:
        return 0
    floor = _floor(max(C.shape), float(np.linalg.norm(np.asarray(L, dtype=np.float64))))
    return _numerical_rank(np.linalg.svd(C, compute_uv=False), rtol, floor)


def _thin_svd_factor(X: np.ndarray):
    """``X = U diag(s) Vt`` thin SVD (handles empty)."""
    return np.linalg.svd(X, full_matrices=False)


def visible_coordinates(Q, K, rtol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    r"""Visible coordinates of an instance: a balanced rank-``r`` factorisation of the quotient.

    With centred keys :math:`K_c = K - \mathbf 1 \bar k^\top`, the quotient of the logits is
    :math:`Q K^\top (I - \mathbf 1\mathbf 1^\top/m) = Q K_c^\top`. Its SVD
    :math:`U \Sigma V^\top`, truncated at ``rtol * sigma_max``, gives
    :math:`Q_v = U_r \Sigma_r^{1/2}`, :math:`K_v = V_r \Sigma_r^{1/2}` (singular values split as
    square roots, so both factors are equally scaled), and for every ``beta``

    .. math:: \mathrm{rowsoftmax}(\beta Q_v K_v^\top) = \mathrm{rowsoftmax}(\beta Q K^\top)

    up to the truncated singular values (exactly, when ``rtol = 0`` and rounding is ignored).
    The columns of ``Kv`` have mean zero. The SVD is computed from the factors (cost
    ``O((n + m) d^2)``), not from the ``n x m`` product.

    Parameters
    ----------
    Q : array_like, shape (n, d)
    K : array_like, shape (m, d)
    rtol : float

    Returns
    -------
    Qv : ndarray, shape (n, r)
    Kv : ndarray, shape (m, r)
        ``r = visible_dimension(Q @ K.T, rtol)`` (up to rounding at the threshold).
    """
    rtol = _check_rtol(rtol)
    Q, K = query_key_pair(Q, K)
    n, m = Q.shape[0], K.shape[0]
    Kc = K - K.mean(axis=0, keepdims=True)
    Ua, sa, Vat = _thin_svd_factor(Q)
    Ub, sb, Vbt = _thin_svd_factor(Kc)
    core = (sa[:, None] * Vat) @ (Vbt.T * sb[None, :])  # (ka, kb): Q Kc^T = Ua core Ub^T
    W, s, Zt = np.linalg.svd(core, full_matrices=False)
    r = _numerical_rank(s, rtol, _floor(max(n, m, Q.shape[1]), float(np.linalg.norm(Q) * np.linalg.norm(K))))
    root = np.sqrt(s[:r])
    Qv = (Ua @ W[:, :r]) * root[None, :]
    Kv = (Ub @ Zt[:r].T) * root[None, :]
    return Qv.reshape(n, r), Kv.reshape(m, r)


def head_interaction_singular_values(W_Q, b_Q, W_K, b_K=None, key_states=None) -> np.ndarray:
    r"""Singular values of a head's visible bilinear form.

    For ``q = W_Q h + b_Q`` and ``k = W_K h' + b_K`` (torch ``Linear`` convention: ``W_Q`` has
    shape (d_head, d_model)), with queries ranging over all of :math:`\mathbb R^{d_\text{model}}`
    and keys over ``key_states`` (or all of :math:`\mathbb R^{d_\text{model}}`), the quotient of
    the logit matrix is

    .. math:: [h_i; 1]^\top\, G, \qquad G = [W_Q\ b_Q]^\top W_K\, K_c^\top,

    with :math:`K_c` the centred key states (``None``: :math:`K_c^\top = I`). ``b_K`` only adds the
    row-scalar term :math:`q^\top b_K` and never enters. The singular values of ``G`` are those
    of :math:`R\, W_K K_c^\top` where :math:`[W_Q\ b_Q]^\top = Q_a R` (thin QR).

    Returns
    -------
    sigma : ndarray
        Singular values, decreasing (length at most d_head).
    floor : float
        Rounding level of the computation (with the uncentred key states): singular values
        below it are zero in exact arithmetic as far as float64 can tell.
    """
    W_Q = np.atleast_2d(np.asarray(W_Q, dtype=np.float64))
    W_K = np.atleast_2d(np.asarray(W_K, dtype=np.float64))
    dh, dm = W_Q.shape
    if W_K.shape != (dh, dm):
        raise ValueError(f"W_K has shape {W_K.shape}, expected {W_Q.shape} like W_Q")
    b_Q = np.zeros(dh) if b_Q is None else np.asarray(b_Q, dtype=np.float64).reshape(-1)
    if b_Q.shape != (dh,):
        raise ValueError(f"b_Q must have shape ({dh},), got {b_Q.shape}")
    if b_K is not None and np.asarray(b_K).reshape(-1).shape != (dh,):
        raise ValueError(f"b_K must have shape ({dh},), got {np.asarray(b_K).shape}")
    A = np.concatenate([W_Q, b_Q[:, None]], axis=1)  # (dh, dm + 1)
    _, R = np.linalg.qr(A.T)  # A^T = Qa R, R (dh, dh) when dm + 1 >= dh
    if key_states is None:
        right = W_K
        scale, size = float(np.linalg.norm(A) * np.linalg.norm(W_K)), dm
    else:
        H = np.atleast_2d(np.asarray(key_states, dtype=np.float64))
        if H.shape[1] != dm:
            raise ValueError(f"key_states must have shape (N, {dm}), got {H.shape}")
        Hc = H - H.mean(axis=0, keepdims=True)
        right = W_K @ Hc.T
        scale, size = float(np.linalg.norm(A) * np.linalg.norm(W_K) * np.linalg.norm(H)), max(dm, H.shape[0])
    if not (np.isfinite(R).all() and np.isfinite(right).all()):
        raise ValueError("head weights and key states must be finite")
    return np.linalg.svd(R @ right, compute_uv=False), _floor(size, scale)


def head_visible_dimension(W_Q, b_Q, W_K, b_K, key_states=None, rtol: float = 1e-10) -> int:
    r"""Visible dimension of a head: the rank of its visible bilinear form (see above).

    .. math:: r = \operatorname{rank}\big([W_Q\ b_Q]^\top W_K K_c^\top\big)

    * ``b_K`` is row-scalar and drops out; key directions constant over ``key_states`` drop out.
    * ``b_Q`` does **not** drop out in general: ``b_Q^T W_K h'`` varies with the key. It adds one
      visible dimension iff :math:`K_c W_K^\top b_Q \notin \operatorname{range}(K_c W_K^\top W_Q)`;
      in particular not when ``b_Q`` lies in the column space of ``W_Q`` (it is then a shift of
      the query states).

    Parameters
    ----------
    W_Q, W_K : array_like, shape (d_head, d_model)
    b_Q, b_K : array_like, shape (d_head,), or None (zero bias)
    key_states : array_like, shape (N, d_model), optional
        Key-side hidden states; their centred span is where keys vary. ``None``: all of R^d_model.
    rtol : float
        Relative singular-value threshold.

    Returns
    -------
    int
        The largest visible dimension of any instance with these keys (attained by generic queries).
    """
    rtol = _check_rtol(rtol)
    sigma, floor = head_interaction_singular_values(W_Q, b_Q, W_K, b_K, key_states)
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


def oscillation(delta) -> np.ndarray:
    r"""Row oscillation :math:`\mathrm{osc}(\delta_i) = \max_j \delta_{ij} - \min_j \delta_{ij}`.

    ``delta`` of shape (n, m) gives shape (n,); shape (m,) gives a 0-d array.
    """
    d = np.asarray(delta, dtype=np.float64)
    if d.ndim not in (1, 2) or d.shape[-1] == 0:
        raise ValueError(f"delta must have shape (n, m) or (m,) with m >= 1, got {d.shape}")
    if not np.isfinite(d).all():
        raise ValueError("delta must be finite")
    return d.max(axis=-1) - d.min(axis=-1)


def softmax_perturbation_bound(delta_logits) -> np.ndarray:
    r"""Lemma 5.1: per row :math:`2\tanh(\mathrm{osc}(\delta)/4)`.

    For every logit vector ``a``,
    :math:`\|\mathrm{softmax}(a+\delta) - \mathrm{softmax}(a)\|_1 \le 2\tanh(\mathrm{osc}(\delta)/4) \le \mathrm{osc}(\delta)/2`,
    and the first bound is attained (two-level ``delta``).

    Parameters
    ----------
    delta_logits : array_like, shape (n, m) or (m,)

    Returns
    -------
    ndarray, shape (n,) (or 0-d for a single row)
    """
    return 2.0 * np.tanh(oscillation(delta_logits) / 4.0)


def residual_bounds(Q, K, M, s: int, beta: float, key_centre=None, log_weights=None) -> dict:
    r"""Measured error of an interaction truncation and its three bounds (SPEC §3 item 5).

    With :math:`A = \mathrm{rowsoftmax}(\beta Q M K^\top + \mathbf 1\log w^\top)`, ``A_s`` the same
    with the rank-``s`` truncation :math:`M_s`, and
    :math:`\mathrm{osc}_i = \mathrm{osc}_j(\beta q_i^\top (M - M_s) k_j)`:

    .. math:: \|A - A_s\| \le \max_i 2\tanh(\mathrm{osc}_i/4) \le \max_i \mathrm{osc}_i/2
              \le \beta\,\sigma_{s+1}(M)\, R_q R_k,

    :math:`R_q = \max_i |q_i|`, :math:`R_k = \max_j |k_j - c|` for the key centre ``c``.

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
        Key log-weights (enter ``A`` and ``A_s`` alike; the bounds do not change).

    Returns
    -------
    dict
        ``measured``, ``tanh``, ``osc``, ``sigma`` (the four numbers above, in that order of the
        chain) and ``sigma_next`` (:math:`\sigma_{s+1}(M)`, 0 beyond the rank), ``R_q``, ``R_k``.
    """
    Q = np.atleast_2d(np.asarray(Q, dtype=np.float64))
    K = np.atleast_2d(np.asarray(K, dtype=np.float64))
    M = np.atleast_2d(np.asarray(M, dtype=np.float64))
    if M.shape != (Q.shape[1], K.shape[1]):
        raise ValueError(f"M must have shape ({Q.shape[1]}, {K.shape[1]}), got {M.shape}")
    beta = finite_nonnegative("beta", beta)
    s = int(s)
    if s < 0:
        raise ValueError(f"s must be >= 0, got {s}")
    c = K.mean(axis=0) if key_centre is None else np.asarray(key_centre, dtype=np.float64).reshape(-1)
    if c.shape != (K.shape[1],):
        raise ValueError(f"key_centre must have shape ({K.shape[1]},), got {c.shape}")
    sigma = np.linalg.svd(M, compute_uv=False)
    sigma_next = float(sigma[s]) if s < sigma.size else 0.0
    Ms = truncate_interaction(M, s)
    w = 0.0 if log_weights is None else np.asarray(log_weights, dtype=np.float64).reshape(1, -1)
    L = beta * (Q @ M @ K.T) + w
    Ls = beta * (Q @ Ms @ K.T) + w
    measured = row_l1(row_softmax(L) - row_softmax(Ls))
    osc = oscillation(beta * (Q @ (M - Ms) @ K.T))
    R_q = float(np.linalg.norm(Q, axis=1).max()) if Q.size else 0.0
    R_k = float(np.linalg.norm(K - c[None, :], axis=1).max()) if K.size else 0.0
    return {
        "measured": measured,
        "tanh": float((2.0 * np.tanh(osc / 4.0)).max()),
        "osc": float((osc / 2.0).max()),
        "sigma": beta * sigma_next * R_q * R_k,
        "sigma_next": sigma_next,
        "R_q": R_q,
        "R_k": R_k,
    }


def tolerance_dimension(sigma, tau, scale: float = 1.0):
    r"""Tolerance-indexed SVD dimension :math:`r(\tau) = \min\{s : \text{scale}\cdot\sigma_{s+1} \le \tau\}`.

    With ``scale = beta R_q R_k`` this is the least truncation rank whose guaranteed output error
    :math:`\eta_s = \beta\sigma_{s+1}R_qR_k` is at most ``tau`` (``sigma_{s+1} = 0`` beyond the
    length of ``sigma``).

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
    # min{s : scale*sig[s] <= tau} = number of s with scale*sig[s] > tau (sig decreasing)
    out = np.count_nonzero((scale * sig)[None, :] > t.reshape(-1, 1), axis=1)
    return int(out[0]) if t.ndim == 0 else out.reshape(t.shape)


# ---------------------------------------------------------------- instances and fits for chapters 4 and 5
def hidden_instance(Y, X, extra: int = 2, const: float = 0.5, nuisance: float = 3.0, seed: int = 0):
    r"""Hide an instance of visible dimension ``r`` in ambient dimension ``r + extra``.

    Queries :math:`q_i = R^\top (y_i, z_i)` with random nuisance :math:`z_i \sim N(0, \text{nuisance}^2 I)`,
    keys :math:`k_j = R^\top (x_j, c\mathbf 1)` with the constant ``c = const``, and a random rotation
    ``R``. Then :math:`\langle q_i, k_j\rangle = \langle y_i, x_j\rangle + c\,\mathbf 1^\top z_i`: the extra
    term is row-scalar, so ``rowsoftmax`` is unchanged while the logit matrix has rank ``r + 1``.

    Parameters
    ----------
    Y : array_like, shape (n, r)
        Visible query coordinates.
    X : array_like, shape (m, r)
        Visible key coordinates.
    extra : int
        Nuisance dimensions (``>= 1``).

    Returns
    -------
    Q : ndarray, shape (n, r + extra)
    K : ndarray, shape (m, r + extra)
    """
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    if extra < 1:
        raise ValueError(f"extra must be >= 1, got {extra}")
    rng = np.random.default_rng(seed)
    n, m, r = Y.shape[0], X.shape[0], X.shape[1]
    Qa = np.hstack([Y, nuisance * rng.standard_normal((n, extra))])
    Ka = np.hstack([X, np.full((m, extra), float(const))])
    R = np.linalg.qr(rng.standard_normal((r + extra, r + extra)))[0]
    return Qa @ R, Ka @ R


def uniform_ball(N: int, r: int, radius: float = 1.0, seed: int = 0) -> np.ndarray:
    """``N`` independent uniform points in the ``r``-ball of the given radius, shape (N, r)."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((N, r))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    return radius * Z * rng.random((N, 1)) ** (1.0 / r)


def decaying_head(d: int, n: int, m: int, decay: float, seed: int = 0, key_offset: float = 0.0):
    r"""Random queries, keys and an interaction matrix with spectrum :math:`\sigma_l = \text{decay}^{l-1}`.

    Returns
    -------
    Q : ndarray, shape (n, d)
        Rows uniform on the unit sphere.
    K : ndarray, shape (m, d)
        Rows uniform on the unit sphere, shifted by ``key_offset`` along a random direction
        (a constant key direction: invisible, but it inflates :math:`R_k` about the origin).
    M : ndarray, shape (d, d)
        :math:`U\,\mathrm{diag}(\sigma)V^\top` with Haar-random ``U``, ``V``.
    """
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d))
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    K = rng.standard_normal((m, d))
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    u = rng.standard_normal(d)
    K = K + key_offset * u / np.linalg.norm(u)
    U = np.linalg.qr(rng.standard_normal((d, d)))[0]
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    sigma = float(decay) ** np.arange(d)
    return Q, K, (U * sigma) @ V.T


def loglog_slope(x, y, level: float = 0.95) -> dict:
    r"""Least-squares slope of :math:`\log y` against :math:`\log x` with a Student-t interval.

    A dictionary view of :func:`attnrank_lite.fitting.fit_loglog_slope` for results tables.

    Parameters
    ----------
    x, y : array_like, shape (k,)
        Positive values, ``k >= 3``.
    level : float
        Confidence level of the interval on the slope.

    Returns
    -------
    dict
        ``slope``, ``low``, ``high``, ``points``.
    """
    if np.size(x) < 3:
        raise ValueError("need at least 3 points")
    fit = fit_loglog_slope(x, y, level=level)
    return {"slope": fit.slope, "low": fit.ci_low, "high": fit.ci_high, "points": fit.npoints}


def bracket_sweep(make_attention, betas, eps: float, desc: str = "") -> list:
    """Certified brackets of ``make_attention(beta)`` over ``betas``.

    Parameters
    ----------
    make_attention : callable ``beta -> A`` (ndarray, shape (n, m))
    betas : sequence of float
    eps : float

    Returns
    -------
    list of dict
        ``beta``, ``n``, ``lower``, ``upper``, ``lower_kind``, ``verified`` per beta.
    """
    from .sweeps import bracket_sweep as sweep

    table = sweep(lambda b: make_attention(float(b)), [float(b) for b in betas], [eps], desc=desc)
    return table[["beta", "n", "lower", "upper", "lower_kind", "verified"]].to_dict("records")


def truncation_tradeoff(Q, K, M, beta: float, eps: float, s_values=None, max_degree: int = 64) -> list:
    r"""Total certificate for ``A = rowsoftmax(beta Q M K^T)`` through truncations ``M_s``.

    For each ``s`` the residual :math:`\tau_s = \max_i 2\tanh(\mathrm{osc}_i/4) \ge \|A - A_s\|`
    (Lemma 5.1) leaves the budget :math:`\varepsilon - \tau_s` for ``A_s``, and
    :math:`\mathrm{rank}_\varepsilon(A) \le \mathrm{rank}_{\varepsilon-\tau_s}(A_s)`. Two certificates of
    ``A_s`` at that budget are recorded: the bracket's SVD upper side (its factorisation is then
    re-verified **against A at eps** directly) and the polynomial certificate in the ``s``-dimensional
    visible coordinates of ``A_s``.

    Returns
    -------
    list of dict
        ``s``, ``tau_measured``, ``tau_tanh``, ``tau_sigma``, ``budget``, ``upper`` (SVD upper of
        ``A_s``), ``verified_on_A``, ``poly_degree``, ``poly_count`` (``None`` when no certificate).
    """
    from .attention import softmax_attention
    from .bracket import rank_bracket
    from .polynomial import polynomial_certificate

    Q = np.atleast_2d(np.asarray(Q, dtype=np.float64))
    K = np.atleast_2d(np.asarray(K, dtype=np.float64))
    M = np.atleast_2d(np.asarray(M, dtype=np.float64))
    A = softmax_attention(Q @ M, K, beta)
    s_values = range(min(M.shape) + 1) if s_values is None else s_values
    rows = []
    for s in s_values:
        b = residual_bounds(Q, K, M, s, beta)
        budget = eps - b["tanh"]
        row = {"s": int(s), "tau_measured": b["measured"], "tau_tanh": b["tanh"], "tau_sigma": b["sigma"],
               "budget": budget, "upper": None, "verified_on_A": False, "poly_degree": None, "poly_count": None}
        if budget > 0:
            QMs = Q @ truncate_interaction(M, s)
            As = softmax_attention(QMs, K, beta)
            br = rank_bracket(As, budget)
            row["upper"] = br.upper
            row["verified_on_A"] = bool(br.upper_certificate.verify(A, eps))
            Qv, Kv = visible_coordinates(QMs, K)
            cert = polynomial_certificate(Qv, Kv, beta, budget, max_degree=max_degree)
            if cert is not None and cert.verify(As, budget):
                row["poly_degree"], row["poly_count"] = cert.degree, cert.count
        rows.append(row)
    return rows


def two_level_example(t) -> np.ndarray:
    r"""The sharp case of Lemma 5.1: :math:`\|\mathrm{softmax}(a+\delta)-\mathrm{softmax}(a)\|_1` for
    ``a = (0, -t/2)``, ``delta = (0, t)`` (mass :math:`1/(1+e^{t/2})` on the raised key); equals
    :math:`2\tanh(t/4)`. ``t`` of shape (k,) gives shape (k,)."""
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    a = np.column_stack([np.zeros_like(t), -t / 2])
    d = np.column_stack([np.zeros_like(t), t])
    return np.abs(row_softmax(a + d) - row_softmax(a)).sum(axis=1)


def random_perturbation_pairs(count: int, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""Random logit pairs ``(a, a + delta)`` with scales spread over decades (for Lemma 5.1 plots).

    Returns
    -------
    osc : ndarray, shape (count,)
        :math:`\mathrm{osc}(\delta)`.
    change : ndarray, shape (count,)
        :math:`\|\mathrm{softmax}(a+\delta)-\mathrm{softmax}(a)\|_1`.
    """
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((count, m)) * 10.0 ** rng.uniform(-1, 1.5, size=(count, 1))
    d = rng.standard_normal((count, m)) * 10.0 ** rng.uniform(-2, 1.5, size=(count, 1))
    return oscillation(d), np.abs(row_softmax(a + d) - row_softmax(a)).sum(axis=1)
