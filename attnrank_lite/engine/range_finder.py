r"""The one randomized range finder (Halko, Martinsson and Tropp, *SIAM Review* 53, 2011,
Algorithms 4.3/4.4 and 5.1) over the row blocks of a :class:`~attnrank_lite.engine.row_source.RowSource`:
:math:`W = \mathrm{orth}(A^\top G)`, ``power_iters`` times :math:`W \leftarrow \mathrm{orth}(A^\top A W)`,
then Rayleigh–Ritz on :math:`P = AW` (:math:`P^\top P = Z \Sigma^2 Z^\top`, :math:`V = WZ`,
:math:`AV = PZ`). Nothing here is trusted: the basis only proposes factorisations, which the searches verify."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .row_source import RowSource

__all__ = ["RitzBasis", "cholesky_qr2", "orthonormalize", "randomized_range_finder"]

#: power iterations by default (HMT: "q = 1 or 2 is usually enough" for decaying spectra)
POWER_ITERS = 2


def cholesky_qr2(C: np.ndarray, tiny: float):
    r"""Cholesky QR, twice: ``C = Q R`` with ``Q`` orthonormal to rounding level when
    :math:`\kappa(C)` is modest. Returns ``(Q, |diag R|)``, or ``(None, None)`` when the Cholesky
    factorisation fails or some :math:`|R_{jj}|` is at most ``tiny`` (use Householder QR then)."""
    if C.shape[1] == 0:
        return None, None
    Q, diag = C, None
    for _ in range(2):
        try:
            Lc = np.linalg.cholesky(Q.T @ Q)
        except np.linalg.LinAlgError:
            return None, None
        if diag is None:
            diag = np.abs(np.diag(Lc))
            if not np.all(np.isfinite(diag)) or diag.min() <= tiny:
                return None, None
        Q = Q @ np.linalg.inv(Lc).T  # Q R^{-1} with R = Lc^T (small c x c inverse, one GEMM)
    return np.asfortranarray(Q), diag


def orthonormalize(C: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the columns of ``C`` (same shape): Cholesky QR twice when the
    columns are well enough conditioned (``|R_jj| > 1e-7 max_j |c_j|``), else Householder QR."""
    if C.shape[1] == 0:
        return C.copy()
    scale = float(np.sqrt((C * C).sum(axis=0).max()))
    Q, _ = cholesky_qr2(C, 1e-7 * max(scale, 1e-300))
    if Q is None:
        Q, _ = np.linalg.qr(C)
    return Q


@dataclass
class RitzBasis:
    """``V`` (m, l) orthonormal, by decreasing Ritz value ``sigma`` (l,), and ``AV`` (n, l) ``= A @ V``."""

    V: np.ndarray
    AV: np.ndarray
    sigma: np.ndarray


def randomized_range_finder(source: RowSource, size: int, *, power_iters: int = POWER_ITERS,
                            seed: int = 0, dtype=np.float32) -> RitzBasis:
    """Randomized approximation (a :class:`RitzBasis`) of the top-``size`` right-singular subspace of
    ``A`` (``2 + power_iters`` passes; Gaussian test matrix of ``seed``); the passes' products run in
    ``dtype``, the Ritz step and the returned arrays in float64."""
    n, m = source.n, source.m
    l = int(min(max(1, size), n, m))
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, l)).astype(dtype)
    Y = np.zeros((m, l), dtype=dtype)
    for sl, R in source.blocks():
        Y += R.astype(dtype, copy=False).T @ G[sl]
    del G
    W = orthonormalize(Y.astype(np.float64))  # float64, orthonormal to rounding level
    for _ in range(int(power_iters)):
        Y[:] = 0
        Wd = W.astype(dtype)
        for _, R in source.blocks():
            R = R.astype(dtype, copy=False)
            Y += R.T @ (R @ Wd)
        W = orthonormalize(Y.astype(np.float64))
    P = np.empty((n, l))
    Wd = W.astype(dtype)
    for sl, R in source.blocks():
        P[sl] = R.astype(dtype, copy=False) @ Wd
    gram = P.T @ P
    vals, Z = np.linalg.eigh((gram + gram.T) / 2)
    order = np.argsort(vals)[::-1]
    Z = Z[:, order]
    return RitzBasis(V=np.ascontiguousarray(W @ Z), AV=P @ Z, sigma=np.sqrt(np.maximum(vals[order], 0.0)))
