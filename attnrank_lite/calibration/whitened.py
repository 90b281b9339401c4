r"""Calibration-whitened interaction geometry of one head (chapter 6, ``def-whitened-effective-dimension``,
``prop-whitened-truncation``): thin SVDs :math:`Q_c = U_q S_q V_q^\top`, :math:`K_c = U_k S_k V_k^\top` of the
stacked queries and keys, each centred by its sequence's mean (:math:`\bar q_\sigma`, :math:`c_\sigma`),
:math:`C = S_q V_q^\top V_k S_k` (the singular values of :math:`G = Q_c K_c^\top`), and, for ``C`` truncated to rank
``s``, :math:`\|A - A_s\| \le \max_i 2\tanh(\beta\,\Omega_{s,i}/4) \le \eta_s := \beta\,\sigma_{s+1}(G)
\max_i|u_i| \max_j|v_j|` on every calibration sequence; :math:`r_\text{osc}(\tau) \le r(\tau)` are the least ``s``
whose bound is at most :math:`\tau`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.perturbation import oscillation_bound
from ..quotient.interaction import head_visible_dimension, tolerance_dimension

__all__ = ["HeadGeometry", "eta_bound", "eta_osc", "head_geometry", "tolerance_dims", "truncated_coordinates"]


@dataclass
class HeadGeometry:
    r"""Temperature-independent interaction geometry of one head on the calibration set: ``visible_dim``
    (:func:`~attnrank_lite.quotient.interaction.head_visible_dimension` on the states), ``visible_dim_calib`` (the
    rank of :math:`G`), ``sigma`` (its singular values, decreasing, zero-padded to ``d_head``), ``lev_q``, ``lev_k``
    (:math:`\max_i |u_i|`, :math:`\max_j |v_j|`), ``omega`` (:math:`\max_i \Omega_{s,i}` at :math:`\beta = 1`,
    ``s = 0..d_head``) and, one ndarray per sequence, ``a``, ``b``, ``colterm`` (:math:`u_i^\top W`, :math:`v_j^\top
    Z` with :math:`C = W \operatorname{diag}(\sigma) Z^\top`, :math:`\bar q_\sigma^\top (k_j - c_\sigma)`)."""

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
    """``omega[s]``: the largest row oscillation of ``sum_{l >= s} sig_l a_l b_l^T``."""
    omega = np.zeros(d + 1)
    for at, bt in zip(a, b):
        delta = np.zeros((at.shape[0], bt.shape[0]))
        for s in range(k - 1, -1, -1):
            delta += sig[s] * np.outer(at[:, s], bt[:, s])
            omega[s] = max(omega[s], float(np.ptp(delta, axis=1).max()))
    return omega


def head_geometry(qk, weights: dict | None = None, states=None, rtol: float = 1e-10) -> HeadGeometry:
    r"""The geometry of the module docstring from per-sequence ``(Q_s, K_s)`` (biases included); ``weights``
    (``W_Q, b_Q, W_K, b_K``) and pooled layer-input ``states`` give ``visible_dim`` (else it is
    ``visible_dim_calib``); ``rtol``: relative threshold of the numerical ranks."""
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
    sigma = np.pad(sig, (0, d - sig.size))  # zero-padded to d_head
    top = sig.max() if sig.size else 0.0
    vis_calib = int(np.count_nonzero(sig > rtol * top)) if top > 0 else 0
    a_all, b_all = Uq @ W, Uk @ Zt.T
    k = min(a_all.shape[1], b_all.shape[1], sig.size)
    lev_q, lev_k = (float(np.linalg.norm(U, axis=1).max()) if U.size else 0.0 for U in (Uq, Uk))
    cuts = np.cumsum([q.shape[0] for q, _ in qk])[:-1]
    a, b = np.split(a_all[:, :k], cuts), np.split(b_all[:, :k], cuts)
    omega = _max_oscillations(a, b, sig, k, d)
    colterm = [kt @ m for kt, m in zip(kc, qbar)]
    vis = vis_calib if weights is None else head_visible_dimension(
        weights["W_Q"], weights["b_Q"], weights["W_K"], weights["b_K"], key_states=states,
        query_states=states, rtol=rtol)
    return HeadGeometry(d, int(vis), vis_calib, sigma, lev_q, lev_k, omega, a, b, colterm)


def eta_bound(geom: HeadGeometry, beta: float) -> np.ndarray:
    r""":math:`\eta_s = \beta\,\sigma_{s+1}(G)\max_i|u_i|\max_j|v_j|`, ``s = 0..d_head`` (shape (d_head+1,))."""
    return float(beta) * np.append(geom.sigma, 0.0) * geom.lev_q * geom.lev_k


def eta_osc(geom: HeadGeometry, beta: float) -> np.ndarray:
    r""":math:`2\tanh(\beta\Omega_s/4)` for ``s = 0..d_head`` (``lem-softmax-perturbation``)."""
    return oscillation_bound(float(beta) * geom.omega)


def tolerance_dims(geom: HeadGeometry, beta: float, tau: float) -> tuple[int, int]:
    r"""``(r(tau), r_osc(tau))``: least truncation ranks with certified output error ``<= tau``."""
    r_bound = int(tolerance_dimension(geom.sigma, tau, scale=float(beta) * geom.lev_q * geom.lev_k))
    r_osc = int(np.flatnonzero(eta_osc(geom, beta) <= tau)[0])  # eta_osc[d_head] = 0, so this exists
    return r_bound, min(r_osc, r_bound)


def truncated_coordinates(geom: HeadGeometry, seq: int, s: int):
    r"""``(Qv, Kv, colterm)`` of the rank-``s`` truncated head on sequence ``seq``:
    :math:`Q_v K_v^\top = [u_i^\top C_s v_j]` (both carry :math:`\sigma^{1/2}`), and the truncated
    attention is ``rowsoftmax(beta Qv Kv^T + beta colterm)``."""
    root = np.sqrt(geom.sigma[:s])
    return geom.a[seq][:, :s] * root, geom.b[seq][:, :s] * root, geom.colterm[seq]
