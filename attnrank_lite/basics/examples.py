r"""Chapter 1's exact cases and small examples (``prop-bounded-outputs``, ``prop-exact-cases``,
``prop-multiplicity``): data with a property known in closed form."""
from __future__ import annotations

import numpy as np

from ..engine.attention import row_softmax
from ..engine.certificates import ClusterMassCertificate, SubspaceCertificate
from ..engine.norms import bounded_output_error

__all__ = ["block_uniform", "exact_cases", "merge_duplicate_keys", "random_bounded_values_max",
           "spectral_numerical_rank", "split_keys", "tampered_copies", "uniform_matrix"]


def uniform_matrix(n: int, m: int | None = None) -> np.ndarray:
    """The uniform attention ``J / m``, shape (n, m), as the softmax of zero logits."""
    return row_softmax(np.zeros((n, n if m is None else m)))


def block_uniform(n: int, b: int) -> np.ndarray:
    """Shape (n, n): ``b`` uniform diagonal blocks (sizes as equal as possible), ``A_ij = 1/|block|``
    when ``i`` and ``j`` share a block, else 0."""
    if not 1 <= b <= n:
        raise ValueError(f"need 1 <= b <= n, got b={b}, n={n}")
    labels = np.repeat(np.arange(b), np.diff(np.linspace(0, n, b + 1).round().astype(int)))
    return row_softmax(np.where(labels[:, None] == labels[None, :], 0.0, -np.inf))


def split_keys(A: np.ndarray, copies: int) -> np.ndarray:
    r"""Every key split into ``copies`` identical keys, :math:`A \otimes 1^\top/\text{copies}`, shape
    (n, m copies): the same :math:`\mathrm{rank}_\varepsilon` (``prop-multiplicity``), singular values
    shrunk by :math:`\sqrt{\text{copies}}`."""
    return np.repeat(np.asarray(A, dtype=np.float64), copies, axis=1) / copies


def spectral_numerical_rank(A, eps: float) -> int:
    r""":math:`\#\{k : \sigma_k(A) > \varepsilon\}`, the least rank within spectral distance eps."""
    return int(np.sum(np.linalg.svd(np.asarray(A, dtype=np.float64), compute_uv=False) > eps))


def random_bounded_values_max(E, trials: int, p: int = 4, seed: int = 0) -> float:
    r"""Largest :math:`\max|EV|` over ``trials`` random ``V`` (shape (m, p)) with entries in [-1, 1],
    half uniform, half signs; by ``prop-bounded-outputs`` at most :math:`\|E\|`."""
    rng = np.random.default_rng(seed)
    E = np.asarray(E, dtype=np.float64)
    best = 0.0
    for t in range(trials):
        shape = (E.shape[1], p)
        V = rng.uniform(-1, 1, shape) if t % 2 == 0 else rng.choice([-1.0, 1.0], size=shape)
        best = max(best, bounded_output_error(E, V))
    return best


def merge_duplicate_keys(K, decimals: int = 12):
    r"""Identical keys (rows of ``K``, shape (m, d)) merged into one with log-weight
    ``log(multiplicity)`` (``prop-multiplicity``). Returns ``K_unique`` (u, d), ``log_weights``
    (u,) and ``inverse`` (m,), each key's merged key: ``A_merged[:, c] = A[:, inverse == c].sum(1)``."""
    K = np.asarray(K, dtype=np.float64)
    _, first, inverse, counts = np.unique(K.round(decimals), axis=0, return_index=True,
                                          return_inverse=True, return_counts=True)
    return K[first], np.log(counts.astype(np.float64)), inverse.reshape(-1)


def exact_cases(n: int, b: int) -> dict:
    r"""``name -> (A, rank for eps < 1)`` of ``prop-exact-cases``: ``I_n`` (n), ``J/n`` (1), ``b``
    uniform blocks (b); each has rank 0 for eps >= 1."""
    return {"identity": (np.eye(n), n), "uniform J/n": (uniform_matrix(n), 1),
            f"{b} uniform blocks": (block_uniform(n, b), b)}


def tampered_copies(bracket, lower):
    r"""Two broken copies of certificates, for the ``verify`` demonstration: the ``RankBracket``'s upper
    ``SubspaceCertificate`` with ``L``'s largest entry changed by 1, and the ``ClusterMassCertificate``
    ``lower`` with group 0 made to overlap group 1 (None with fewer than two groups)."""
    c = bracket.upper_certificate
    L = c.L.copy()
    if L.size:
        L[np.unravel_index(np.argmax(np.abs(L)), L.shape)] += 1.0
    upper = SubspaceCertificate(L, c.R.copy(), source="tampered")
    g = [list(x) for x in lower.groups]
    if len(g) < 2:
        return upper, None
    g[0] = sorted(set(g[0]) | {g[1][0]})
    return upper, ClusterMassCertificate(rows=list(lower.rows), groups=g)
