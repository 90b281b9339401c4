r"""Constructions of chapters 4 and 5: hidden instances (``thm-r-half-law``),
decaying heads and the sharp pair of ``lem-softmax-perturbation``.
Chapter 1's exact cases live in :mod:`attnrank_lite.basics.examples`.

Each function builds data with a property known in closed form; the tests
check that property, not our own code.
"""
from __future__ import annotations

import numpy as np

from ..engine.attention import row_softmax
from ..engine.perturbation import oscillation
from ..laws.geometry import gaussian_ball

__all__ = [
    "decaying_head",
    "hidden_instance",
    "random_perturbation_pairs",
    "sharp_hidden_instance",
    "two_level_example",
]


# ------------------------------------------------------------- chapters 4 and 5
def hidden_instance(Y, X, extra: int = 2, const: float = 0.5, nuisance: float = 3.0, seed: int = 0):
    r"""Hide an instance of visible dimension ``r`` in ambient dimension ``r + extra``.

    Queries :math:`q_i = R^\top (y_i, z_i)` with random nuisance
    :math:`z_i \sim N(0, \text{nuisance}^2 I)`, keys
    :math:`k_j = R^\top (x_j, c\mathbf 1)` with the constant ``c = const``, and a
    random rotation ``R``. Then
    :math:`\langle q_i, k_j\rangle = \langle y_i, x_j\rangle + c\,\mathbf 1^\top z_i`: the extra
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


def decaying_head(d: int, n: int, m: int, decay: float, seed: int = 0, key_offset: float = 0.0):
    r"""Random queries, keys and an interaction matrix with a geometric spectrum.

    Spectrum :math:`\sigma_l = \text{decay}^{l-1}` (``prop-truncation-residual``).

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


def two_level_example(t) -> np.ndarray:
    r"""The sharp case of ``lem-softmax-perturbation``.

    :math:`\|\mathrm{softmax}(a+\delta)-\mathrm{softmax}(a)\|_1` for
    ``a = (0, -t/2)``, ``delta = (0, t)`` (mass :math:`1/(1+e^{t/2})` on the raised key); equals
    :math:`2\tanh(t/4)`. ``t`` of shape (k,) gives shape (k,)."""
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    a = np.column_stack([np.zeros_like(t), -t / 2])
    d = np.column_stack([np.zeros_like(t), t])
    return np.abs(row_softmax(a + d) - row_softmax(a)).sum(axis=1)


def random_perturbation_pairs(count: int, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""Random logit pairs ``(a, a + delta)`` with scales spread over decades.

    For the ``lem-softmax-perturbation`` plot.

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


def sharp_hidden_instance(r: int, beta: float, extra: int = 2, seed: int = 0):
    r"""The chapter-3 Gaussian-ball construction in dimension ``r``, hidden.

    ``gaussian_ball(r, beta)`` (points ``x_j`` and key log-weights
    :math:`\tfrac\beta2(\tfrac14 - |x_j|^2)`) hidden in ``r + extra``
    ambient dimensions by :func:`hidden_instance` (row-scalar nuisance and a
    random rotation). Its logits :math:`\beta\langle q_i,k_j\rangle + \log w_j`
    have visible dimension ``r`` (``def-visible-dimension``): the nuisance is
    row-scalar and the weights are column-scalar.

    Returns
    -------
    Q : ndarray, shape (n, r + extra)
    K : ndarray, shape (n, r + extra)
    log_weights : ndarray, shape (n,)
    """
    X, lw = gaussian_ball(r, beta)
    Q, K = hidden_instance(X, X, extra=extra, seed=seed)
    return Q, K, lw
