r"""Exact cases and small examples of chapter 1 (``prop-bounded-outputs``,
``prop-exact-cases``, ``prop-multiplicity``, ``prop-certificate-chain``).

Each function builds data with a property known in closed form; the tests
check that property, not our own code.
"""
from __future__ import annotations

import numpy as np

from .attention import row_softmax
from .certificates import ClusterMassCertificate, SubspaceCertificate
from .norms import bounded_output_error

__all__ = [
    "block_uniform",
    "exact_cases",
    "merge_duplicate_keys",
    "random_bounded_values_max",
    "spectral_numerical_rank",
    "split_keys",
    "tampered_copies",
    "uniform_matrix",
]


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


def tampered_copies(bracket, lower=None):
    r"""Two deliberately broken copies of a bracket's certificates, for the verify demonstration.

    Parameters
    ----------
    bracket : RankBracket
    lower : GroupedLowerCertificate, optional
        The grouped lower certificate to break (default: the bracket's own, when it is grouped;
        a bracket whose lower end is another kind, e.g. Frobenius tail, has no groups).

    Returns
    -------
    upper : SubspaceCertificate
        The upper certificate with one entry of ``L`` changed by 1 (the entry of largest magnitude).
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
    if lower is None:
        rows, groups = bracket.lower_rows, bracket.lower_groups
    else:
        rows, groups = list(lower.rows), [list(x) for x in lower.groups]
    broken = None
    if len(groups) >= 2:
        g = [list(x) for x in groups]
        g[0] = sorted(set(g[0]) | {g[1][0]})
        broken = ClusterMassCertificate(rows=list(rows), groups=g)
    return upper, broken
