r"""Constructions of chapters 4 and 5 with a property known in closed form: hidden instances
(``thm-r-half-law``), decaying heads and the sharp pair of ``lem-softmax-perturbation``."""
from __future__ import annotations

import numpy as np

from ..engine.attention import row_softmax
from ..engine.perturbation import oscillation
from ..laws.geometry import gaussian_ball

__all__ = ["decaying_head", "hidden_instance", "random_perturbation_pairs",
           "sharp_hidden_instance", "two_level_example"]


def hidden_instance(Y, X, extra: int = 2, const: float = 0.5, nuisance: float = 3.0, seed: int = 0):
    r"""Hide an instance of visible dimension ``r`` in ambient dimension ``r + extra``: queries
    :math:`R^\top (y_i, z_i)`, :math:`z_i \sim N(0, \text{nuisance}^2 I)`, keys
    :math:`R^\top (x_j, c\mathbf 1)` (``c = const``), ``R`` a random rotation. The extra logit term
    :math:`c\,\mathbf 1^\top z_i` is row-scalar: ``rowsoftmax`` is unchanged, the logit rank ``r + 1``.

    Parameters
    ----------
    Y, X : array_like, shapes (n, r) and (m, r)
    extra : int, >= 1

    Returns
    -------
    Q, K : ndarray, shapes (n, r + extra) and (m, r + extra)
    """
    Y, X = (np.atleast_2d(np.asarray(Z, dtype=np.float64)) for Z in (Y, X))
    if extra < 1:
        raise ValueError(f"extra must be >= 1, got {extra}")
    rng = np.random.default_rng(seed)
    n, m, r = Y.shape[0], X.shape[0], X.shape[1]
    Qa = np.hstack([Y, nuisance * rng.standard_normal((n, extra))])
    Ka = np.hstack([X, np.full((m, extra), float(const))])
    R = np.linalg.qr(rng.standard_normal((r + extra, r + extra)))[0]
    return Qa @ R, Ka @ R


def decaying_head(d: int, n: int, m: int, decay: float, seed: int = 0, key_offset: float = 0.0):
    r"""Unit-sphere queries (n, d) and keys (m, d) (keys shifted by ``key_offset`` along a random
    direction: invisible, but it inflates :math:`R_k`), and :math:`M = U\,\mathrm{diag}(\sigma)V^\top`
    with Haar-random ``U, V`` and :math:`\sigma_l = \text{decay}^{l-1}` (``prop-truncation-residual``)."""
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d))
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    K = rng.standard_normal((m, d))
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    u = rng.standard_normal(d)
    K = K + key_offset * u / np.linalg.norm(u)
    U, V = np.linalg.qr(rng.standard_normal((d, d)))[0], np.linalg.qr(rng.standard_normal((d, d)))[0]
    sigma = float(decay) ** np.arange(d)
    return Q, K, (U * sigma) @ V.T


def two_level_example(t) -> np.ndarray:
    r""":math:`\|\mathrm{softmax}(a+\delta)-\mathrm{softmax}(a)\|_1` for ``a = (0, -t/2)``,
    ``delta = (0, t)``: equals :math:`2\tanh(t/4)`, the sharp case of ``lem-softmax-perturbation``."""
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    a, d = np.column_stack([np.zeros_like(t), -t / 2]), np.column_stack([np.zeros_like(t), t])
    return np.abs(row_softmax(a + d) - row_softmax(a)).sum(axis=1)


def random_perturbation_pairs(count: int, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""``count`` random logit pairs ``(a, a + delta)`` over ``m`` keys, scales spread over
    decades: :math:`\mathrm{osc}(\delta)` and :math:`\|\mathrm{softmax}(a+\delta)-\mathrm{softmax}(a)\|_1`."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((count, m)) * 10.0 ** rng.uniform(-1, 1.5, size=(count, 1))
    d = rng.standard_normal((count, m)) * 10.0 ** rng.uniform(-2, 1.5, size=(count, 1))
    return oscillation(d), np.abs(row_softmax(a + d) - row_softmax(a)).sum(axis=1)


def sharp_hidden_instance(r: int, beta: float, extra: int = 2, seed: int = 0):
    r"""``gaussian_ball(r, beta)`` hidden in ``r + extra`` dimensions by :func:`hidden_instance`:
    ``(Q, K, log_weights)``, visible dimension ``r`` (row-scalar nuisance, column-scalar weights)."""
    X, lw = gaussian_ball(r, beta)
    Q, K = hidden_instance(X, X, extra=extra, seed=seed)
    return Q, K, lw
