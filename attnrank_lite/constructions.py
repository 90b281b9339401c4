r"""Constructions used by the chapters: exact cases and small examples of
chapter 1 (``prop-bounded-outputs``, ``prop-exact-cases``, ``prop-multiplicity``,
``prop-certificate-chain``), hidden instances of chapter 4 (``thm-r-half-law``),
decaying heads and the sharp pair of ``lem-softmax-perturbation`` of chapter 5.

Each function builds data with a property known in closed form; the tests
check that property, not our own code.
"""
from __future__ import annotations

import numpy as np

from .attention import row_softmax
from .certificates import ClusterMassCertificate, SubspaceCertificate
from .geometry import gaussian_ball
from .interaction import oscillation
from .norms import bounded_output_error

__all__ = [
    "block_uniform",
    "decaying_head",
    "exact_cases",
    "hidden_instance",
    "merge_duplicate_keys",
    "random_bounded_values_max",
    "random_perturbation_pairs",
    "sharp_hidden_instance",
    "spectral_numerical_rank",
    "split_keys",
    "tampered_copies",
    "two_level_example",
    "uniform_matrix",
]


# ------------------------------------------------------------- chapter 1
def uniform_matrix(n: int, m: int | None = None) -> np.ndarray:
    """The uniform attention matrix ``J / m`` (shape (n, m)): every query averages all keys.

    Built as the softmax of zero logits, so its stored rows never sum to more than 1 exactly.
    """
    m = n if m is None else m
    return row_softmax(np.zeros((n, m)))


def block_uniform(n: int, b: int) -> np.ndarray:
    """Block-diagonal row-stochastic matrix of ``b`` uniform blocks (sizes as equal as possible).

    Returns
    -------
    ndarray, shape (n, n)
        ``A_ij = 1/|block|`` when ``i`` and ``j`` share a block, else 0.
    """
    if not 1 <= b <= n:
        raise ValueError(f"need 1 <= b <= n, got b={b}, n={n}")
    labels = np.repeat(np.arange(b), np.diff(np.linspace(0, n, b + 1).round().astype(int)))
    same = labels[:, None] == labels[None, :]
    return row_softmax(np.where(same, 0.0, -np.inf))


def split_keys(A: np.ndarray, copies: int) -> np.ndarray:
    r"""Split every key into ``copies`` identical keys: ``A \otimes 1^T / copies``.

    Shape (n, m * copies).

    This is the same attention (each original key's mass shared by its copies) and, by
    ``prop-multiplicity``, has the same :math:`\mathrm{rank}_\varepsilon`; its singular
    values shrink by
    :math:`\sqrt{\text{copies}}`.
    """
    return np.repeat(np.asarray(A, dtype=np.float64), copies, axis=1) / copies


def spectral_numerical_rank(A, eps: float) -> int:
    r"""Spectral numerical rank: :math:`\#\{k : \sigma_k(A) > \varepsilon\}`, the least rank within
    spectral-norm distance :math:`\varepsilon` (Eckart–Young)."""
    return int(np.sum(np.linalg.svd(np.asarray(A, dtype=np.float64), compute_uv=False) > eps))


def random_bounded_values_max(E, trials: int, p: int = 4, seed: int = 0) -> float:
    r"""Largest :math:`\max|EV|` over ``trials`` random value matrices with entries in [-1, 1].

    Half the draws are uniform on [-1, 1], half are random sign matrices.
    ``prop-bounded-outputs`` says the
    result never exceeds :math:`\|E\|`.
    """
    rng = np.random.default_rng(seed)
    E = np.asarray(E, dtype=np.float64)
    best = 0.0
    for t in range(trials):
        shape = (E.shape[1], p)
        V = rng.uniform(-1, 1, shape) if t % 2 == 0 else rng.choice([-1.0, 1.0], size=shape)
        best = max(best, bounded_output_error(E, V))
    return best


def merge_duplicate_keys(K, decimals: int = 12):
    r"""Merge identical keys into one key with log-weight ``log(multiplicity)``.

    ``prop-multiplicity``.

    Parameters
    ----------
    K : array_like, shape (m, d)

    Returns
    -------
    K_unique : ndarray, shape (u, d)
    log_weights : ndarray, shape (u,)
        ``log`` of each unique key's multiplicity.
    inverse : ndarray, shape (m,)
        Index of each original key's merged key: ``A_merged[:, c] = A[:, inverse == c].sum(1)``.
    """
    K = np.asarray(K, dtype=np.float64)
    _, first, inverse, counts = np.unique(K.round(decimals), axis=0, return_index=True,
                                          return_inverse=True, return_counts=True)
    return K[first], np.log(counts.astype(np.float64)), inverse.reshape(-1)


def exact_cases(n: int, b: int) -> dict:
    r"""The exact cases of ``prop-exact-cases``, with their rank for ``eps < 1``.

    Returns
    -------
    dict
        ``name -> (A, rank)``: identity ``I_n`` (rank n), uniform ``J/n`` (rank 1) and ``b``
        uniform diagonal blocks (rank b). For ``eps >= 1`` every one has rank 0.
    """
    return {
        "identity": (np.eye(n), n),
        "uniform J/n": (uniform_matrix(n), 1),
        f"{b} uniform blocks": (block_uniform(n, b), b),
    }


def tampered_copies(bracket):
    r"""Two deliberately broken copies of a bracket's certificates, for the verify demonstration.

    Returns
    -------
    upper : SubspaceCertificate
        The upper certificate with one entry of ``L`` changed by 1 (the largest-|.| entry).
    lower : ClusterMassCertificate or None
        The cluster-mass certificate with the first group made to overlap the second
        (``None`` if it has fewer than two groups).
    """
    c = bracket.upper_certificate
    L = c.L.copy()
    if L.size:
        idx = np.unravel_index(np.argmax(np.abs(L)), L.shape)
        L[idx] += 1.0
    upper = SubspaceCertificate(L, c.R.copy(), source="tampered")
    lower = None
    groups = bracket.lower_groups
    if len(groups) >= 2:
        g = [list(x) for x in groups]
        g[0] = sorted(set(g[0]) | {g[1][0]})
        lower = ClusterMassCertificate(rows=list(bracket.lower_rows), groups=g)
    return upper, lower


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
