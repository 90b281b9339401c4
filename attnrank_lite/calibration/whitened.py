r"""Calibration-whitened interaction geometry of one attention head (``def-whitened-effective-dimension``).

For a head with queries :math:`q_i` and keys :math:`k_j` in :math:`\mathbb R^{d}` on calibration
sequences :math:`\sigma`, centre both sides per sequence: :math:`\bar q_\sigma`, :math:`c_\sigma`
are the sequence's mean query and mean key. Then, for :math:`i, j \in \sigma`,

.. math:: q_i^\top k_j = \underbrace{(q_i - \bar q_\sigma)^\top (k_j - c_\sigma)}_{\text{doubly centred}}
          + \underbrace{\bar q_\sigma^\top (k_j - c_\sigma)}_{\text{column-scalar: a key log-weight}}
          + \underbrace{q_i^\top c_\sigma}_{\text{row-scalar: invisible}} .

The row-scalar term drops out of the row softmax; the column-scalar term (it holds the query
bias :math:`b_Q`) is a key log-weight, kept exactly and never counted as a dimension
(``prop-multiplicity``). Stack the centred queries into :math:`Q_c` and the centred keys into
:math:`K_c` (all sequences), take thin SVDs :math:`Q_c = U_q S_q V_q^\top`,
:math:`K_c = U_k S_k V_k^\top` and put :math:`C = S_q V_q^\top V_k S_k`. With :math:`u_i, v_j` the rows
of :math:`U_q, U_k`, the doubly centred logit is :math:`u_i^\top C v_j`, and the singular values of
``C`` are those of :math:`G = Q_c K_c^\top`. Truncating ``C`` to rank ``s`` changes row ``i``'s
logits by :math:`\delta_{ij} = \beta u_i^\top (C - C_s) v_j`; by the softmax perturbation lemma
(``lem-softmax-perturbation``)

.. math:: \|A - A_s\| \le \max_i 2\tanh(\beta\,\Omega_{s,i}/4) \le \eta_s :=
          \beta\,\sigma_{s+1}(G) \max_i|u_i| \max_j|v_j|

on every calibration sequence (``prop-whitened-truncation``), where :math:`A_s` keeps the key
log-weights and has visible dimension at most ``s``. Hence the tolerance-indexed dimensions
:math:`r(\tau) = \min\{s : \eta_s \le \tau\}` and
:math:`r_\text{osc}(\tau) = \min\{s : \max_i 2\tanh(\beta\,\Omega_{s,i}/4) \le \tau\} \le r(\tau)`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.perturbation import oscillation_bound
from ..quotient.interaction import head_visible_dimension, tolerance_dimension

__all__ = [
    "HeadGeometry",
    "eta_bound",
    "eta_osc",
    "head_geometry",
    "tolerance_dims",
    "truncated_coordinates",
]


@dataclass
class HeadGeometry:
    r"""Temperature-independent interaction geometry of one head on the calibration set.

    Attributes
    ----------
    d_head : int
    visible_dim : int
        :func:`attnrank_lite.quotient.interaction.head_visible_dimension` from the weights, queries and
        keys ranging over the calibration states (doubly centred: biases never count).
    visible_dim_calib : int
        Numerical rank (``rtol``) of the doubly centred pooled logit matrix :math:`G = Q_c K_c^\top`.
    sigma : ndarray, shape (d_head,)
        Singular values of ``G`` (= of ``C``), decreasing, zero-padded.
    lev_q, lev_k : float
        :math:`\max_i |u_i|`, :math:`\max_j |v_j|` (square roots of the largest leverage scores).
    omega : ndarray, shape (d_head + 1,)
        :math:`\max_i \Omega_{s,i}` for ``s = 0..d_head``: the largest logit oscillation at
        :math:`\beta = 1` left by truncation to rank ``s`` (``omega[d_head] = 0``).
    a, b : list of ndarray, each (n_s, k)
        Per sequence, rotated whitened coordinates :math:`u_i^\top W`, :math:`v_j^\top Z` with
        :math:`C = W \operatorname{diag}(\sigma) Z^\top`: doubly centred logits
        :math:`\beta\, a\, \mathrm{diag}(\sigma)\, b^\top`.
    colterm : list of ndarray, each (n_s,)
        Per sequence, the column-scalar term :math:`\bar q_\sigma^\top (k_j - c_\sigma)` (key
        log-weights :math:`\beta\,\cdot` this).
    """

    d_head: int
    visible_dim: int
    visible_dim_calib: int
    sigma: np.ndarray
    lev_q: float
    lev_k: float
    omega: np.ndarray
    a: list
    b: list
    colterm: list


def _range_basis(X: np.ndarray, rtol: float):
    """Thin SVD of ``X`` restricted to singular values above ``rtol * max``: (U, s, Vt)."""
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    keep = s > rtol * s.max() if s.size and s.max() > 0 else np.zeros(s.size, bool)
    return U[:, keep], s[keep], Vt[keep]


def _max_oscillations(a, b, sig, k: int, d: int) -> np.ndarray:
    """``omega[s] = max`` over sequences and rows of the oscillation of ``sum_{l >= s} sig_l a_l b_l^T``."""
    omega = np.zeros(d + 1)
    for at, bt in zip(a, b):
        delta = np.zeros((at.shape[0], bt.shape[0]))
        for s in range(k - 1, -1, -1):
            delta += sig[s] * np.outer(at[:, s], bt[:, s])
            omega[s] = max(omega[s], float(np.ptp(delta, axis=1).max()))
    return omega


def head_geometry(qk, weights: dict | None = None, states=None, rtol: float = 1e-10) -> HeadGeometry:
    r"""Calibration-whitened, doubly centred geometry of one head (see the module docstring).

    Parameters
    ----------
    qk : list of (Q_s, K_s)
        Per calibration sequence, queries and keys of shape (n_s, d_head) (biases included).
    weights : dict, optional
        ``W_Q, b_Q, W_K, b_K`` for the weight-based visible dimension.
    states : ndarray, shape (N, d_model), optional
        Pooled layer-input states (queries and keys range over them) for that dimension.
    rtol : float
        Relative threshold of the numerical ranks.

    Returns
    -------
    HeadGeometry
    """
    if not qk:
        raise ValueError("need at least one calibration sequence")
    d = qk[0][0].shape[1]
    qbar = [q.mean(axis=0) for q, _ in qk]
    Qc = np.concatenate([q - m for (q, _), m in zip(qk, qbar)])
    kc = [k - k.mean(axis=0, keepdims=True) for _, k in qk]
    Kc = np.concatenate(kc)
    Uq, sq, Vqt = _range_basis(Qc, rtol)
    Uk, sk, Vkt = _range_basis(Kc, rtol)
    C = (sq[:, None] * Vqt) @ (Vkt.T * sk[None, :])
    W, sig, Zt = np.linalg.svd(C, full_matrices=True)
    sigma = np.zeros(d)
    sigma[:sig.size] = sig
    top = sig.max() if sig.size else 0.0
    vis_calib = int(np.count_nonzero(sig > rtol * top)) if top > 0 else 0
    a_all, b_all = Uq @ W, Uk @ Zt.T
    k = min(a_all.shape[1], b_all.shape[1], sig.size)
    lev_q = float(np.linalg.norm(Uq, axis=1).max()) if Uq.size else 0.0
    lev_k = float(np.linalg.norm(Uk, axis=1).max()) if Uk.size else 0.0
    bounds = np.cumsum([0] + [q.shape[0] for q, _ in qk])
    a = [a_all[bounds[t]:bounds[t + 1], :k] for t in range(len(qk))]
    b = [b_all[bounds[t]:bounds[t + 1], :k] for t in range(len(qk))]
    omega = _max_oscillations(a, b, sig, k, d)
    colterm = [kt @ m for kt, m in zip(kc, qbar)]
    if weights is not None:
        vis = head_visible_dimension(weights["W_Q"], weights["b_Q"], weights["W_K"], weights["b_K"],
                                     key_states=states, query_states=states, rtol=rtol)
    else:
        vis = vis_calib
    return HeadGeometry(d, int(vis), vis_calib, sigma, lev_q, lev_k, omega, a, b, colterm)


def eta_bound(geom: HeadGeometry, beta: float) -> np.ndarray:
    r""":math:`\eta_s = \beta\,\sigma_{s+1}(G)\max_i|u_i|\max_j|v_j|`, ``s = 0..d_head`` (shape (d_head+1,))."""
    sig = np.append(geom.sigma, 0.0)
    return float(beta) * sig * geom.lev_q * geom.lev_k


def eta_osc(geom: HeadGeometry, beta: float) -> np.ndarray:
    r"""``lem-softmax-perturbation`` on the measured oscillations.

    Returns :math:`2\tanh(\beta\Omega_s/4)` for ``s = 0..d_head`` (shape (d_head+1,)).
    """
    return oscillation_bound(float(beta) * geom.omega)


def tolerance_dims(geom: HeadGeometry, beta: float, tau: float) -> tuple[int, int]:
    r"""``(r(tau), r_osc(tau))``: least truncation ranks with certified output error ``<= tau``."""
    r_bound = int(tolerance_dimension(geom.sigma, tau, scale=float(beta) * geom.lev_q * geom.lev_k))
    e = eta_osc(geom, beta)
    r_osc = int(np.flatnonzero(e <= tau)[0])  # e[d_head] = 0, so this exists
    return r_bound, min(r_osc, r_bound)


def truncated_coordinates(geom: HeadGeometry, seq: int, s: int):
    r"""Visible coordinates and key log-weights of the rank-``s`` truncated head on sequence ``seq``.

    Returns
    -------
    Qv : ndarray, shape (n, s)
    Kv : ndarray, shape (n, s)
        :math:`Q_v K_v^\top = [u_i^\top C_s v_j]` (balanced: both carry :math:`\sigma^{1/2}`).
    colterm : ndarray, shape (n,)
        :math:`\bar q_\sigma^\top (k_j - c_\sigma)`; at inverse temperature ``beta`` the truncated
        attention is ``rowsoftmax(beta Qv Kv^T + beta colterm)`` (key log-weights ``beta colterm``).
    """
    root = np.sqrt(geom.sigma[:s])
    return geom.a[seq][:, :s] * root, geom.b[seq][:, :s] * root, geom.colterm[seq]
