r"""The matrix a certificate file describes, rebuilt by the checker itself, with a proven error.

For a stored matrix the rows are the stored floats (error 0, and exact rational arithmetic is
possible). For a recipe :math:`A = \mathrm{rowsoftmax}(\beta QK^\top + \mathbf 1\log w^\top)`
the checker computes rows :math:`\hat A_i` in float64 and a bound :math:`\delta_i \ge
\|\hat A_i - A_i\|_1` on the distance to the *exact* softmax of the stored floats:

* logits :math:`\hat\ell = \mathrm{fl}(\mathrm{fl}(\beta\,\mathrm{fl}(QK^\top)) + \log w)` are
  within :math:`t_{ij} = \gamma_{d+2}(\beta\|q_i\|\|k_j\| + |\log w_j|)` of the exact ones
  (Higham's :math:`\gamma_k = ku/(1-ku)`, Cauchy–Schwarz for :math:`\sum_l|q_{il}||k_{jl}|`);
  by the softmax perturbation lemma (:math:`\|\mathrm{softmax}(a+\Delta) - \mathrm{softmax}(a)\|_1
  \le \mathrm{osc}(\Delta)/2 \le \max_j|\Delta_j|`) this costs at most :math:`\max_j t_{ij}`;
* the shift :math:`z = \mathrm{fl}(\hat\ell - \max_j\hat\ell_j)` is another logit perturbation of
  at most :math:`u\max_j|z_j|`;
* ``exp`` is assumed accurate to 4 ulp (relative :math:`8u`), the sum of ``m`` terms to
  :math:`\gamma_{m}` and the division to ``u``: each entry is the exact softmax of ``z`` times
  :math:`1+\rho` with :math:`|\rho| \le \gamma_{m+10}`, a row error of at most :math:`\gamma_{m+10}`;
* underflow: every entry loses at most :math:`4\eta` (:math:`\eta = 2^{-1074}`, the row sum is
  :math:`\ge 1`).

Keys of weight zero (:math:`\log w_j = -\infty`) give exact zeros in both. The sum of the terms
is multiplied by :math:`1 + 10^{-6}` to cover the evaluation of the bound itself.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["gamma", "U", "ETA", "Instance", "SphereSpace", "harmonic_count"]

U = 2.0**-53
ETA = 2.0**-1074


def gamma(k: int) -> float:
    """:math:`\\gamma_k = ku/(1-ku)`, rounded up by a relative 1e-12."""
    ku = k * U
    if not ku < 0.5:
        raise ValueError("gamma undefined")
    return ku / (1.0 - ku) * (1.0 + 1e-12)


class Instance:
    """Rows of the file's matrix (``header["instance"]`` and its ``arrays``), by the checker's own
    arithmetic, and their error bounds."""

    def __init__(self, inst: dict, arrays: dict):
        if not isinstance(inst, dict) or inst.get("kind") not in ("matrix", "attention"):
            raise ValueError("instance kind must be matrix or attention")
        self.kind = inst["kind"]
        if self.kind == "matrix":
            A = self._get(arrays, inst.get("A"), ndim=2)
            if not np.isfinite(A).all():
                raise ValueError("A must be finite")
            self.A = A
            self.n, self.m = A.shape
            self.exact = True
            return
        self.exact = False
        self.Q = self._get(arrays, inst.get("Q"), ndim=2)
        self.K = self.Q if inst.get("K") is None else self._get(arrays, inst.get("K"), ndim=2)
        beta = inst.get("beta")
        if type(beta) not in (int, float) or not math.isfinite(beta) or beta < 0:
            raise ValueError("beta must be a finite number >= 0")
        self.beta = float(beta)
        if self.K.shape[1] != self.Q.shape[1] or not (np.isfinite(self.Q).all() and np.isfinite(self.K).all()):
            raise ValueError("Q and K must be finite with the same dimension")
        self.n, self.m = self.Q.shape[0], self.K.shape[0]
        if inst.get("log_weights") is None:
            self.lw = np.zeros(self.m)
        else:
            lw = self._get(arrays, inst.get("log_weights"), ndim=1)
            if lw.shape != (self.m,) or np.isnan(lw).any() or np.isposinf(lw).any() or not np.isfinite(lw).any():
                raise ValueError("log_weights malformed")
            self.lw = lw
        finite = np.isfinite(self.lw)
        self._lw_max = float(np.abs(self.lw[finite]).max())
        self._k_max = float(np.sqrt((self.K * self.K).sum(axis=1)).max()) * (1 + 4 * U)
        self._d = self.Q.shape[1]

    @staticmethod
    def _get(arrays, name, ndim):
        if not isinstance(name, str) or name not in arrays:
            raise ValueError(f"instance names no array {name!r}")
        arr = arrays[name]
        if arr.dtype.str != "<f8" or arr.ndim != ndim:
            raise ValueError(f"array {name} must be {ndim}-D float64")
        return arr

    def rows(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(A_hat[idx], delta[idx])``: computed rows and bounds on their l1 distance to the exact rows."""
        if self.kind == "matrix":
            return self.A[idx], np.zeros(len(idx))
        Qb = self.Q[idx]
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            ell = (self.beta * (Qb @ self.K.T)) + self.lw[None, :]
            c = ell.max(axis=1, keepdims=True)
            z = ell - c
            e = np.exp(z)
            A = e / e.sum(axis=1, keepdims=True)
        if not np.isfinite(A).all():
            raise ValueError("the recipe's rows are not finite")
        qn = np.sqrt((Qb * Qb).sum(axis=1)) * (1 + 4 * U)
        t = gamma(self._d + 2) * (self.beta * qn * self._k_max + self._lw_max)
        zmax = np.where(np.isfinite(z), np.abs(z), 0.0).max(axis=1)
        delta = (t + U * zmax * (1 + 4 * U) + gamma(self.m + 10) + 4 * self.m * ETA) * (1 + 1e-6)
        return A, delta


def _binom(a: int, b: int) -> int:
    return math.comb(a, b) if a >= 0 and b >= 0 else 0


def harmonic_count(d: int, degree: int) -> int:
    """Dimension of the spherical harmonics of degree exactly ``degree`` on :math:`S^{d-1}`."""
    return _binom(degree + d - 1, d - 1) - _binom(degree + d - 3, d - 1)


class SphereSpace:
    """The checker's orthonormal basis ``V`` of the (weighted) polynomials of degree ``<= L`` on
    the keys, degree by degree: the newest block times the coordinates, orthogonalised twice
    against the basis, then a pivoted QR keeping at most :math:`N(d, l)` new directions."""

    def __init__(self, K: np.ndarray, lw: np.ndarray, degree: int):
        from scipy.linalg import qr

        m, d = K.shape
        if d < 2 or np.abs(np.sqrt((K * K).sum(axis=1)) - 1.0).max() > 1e-8:
            raise ValueError("the keys are not on the unit sphere")
        with np.errstate(under="ignore"):
            w = np.exp(lw - lw[np.isfinite(lw)].max())
        V = (w / np.linalg.norm(w))[:, None]
        newest = V
        for deg in range(1, degree + 1):
            if V.shape[1] >= m:
                break
            C = np.concatenate([K[:, k:k + 1] * newest for k in range(d)], axis=1)
            scale = max(float(np.linalg.norm(C, axis=0).max()), 1e-300)
            for _ in range(2):
                C = C - V @ (V.T @ C)
            Qc, Rc, _ = qr(C, mode="economic", pivoting=True)
            keep = int(np.count_nonzero(np.abs(np.diag(Rc)) > 1e-9 * scale))
            keep = min(keep, harmonic_count(d, deg), m - V.shape[1])
            newest = Qc[:, :keep]
            newest = newest - V @ (V.T @ newest)
            newest, _ = np.linalg.qr(newest)
            V = np.concatenate([V, newest], axis=1)
        self.V = V
