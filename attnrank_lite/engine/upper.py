"""Searches that produce upper (subspace) certificates (the book's :ref:`prop-certificate-chain`)."""
from __future__ import annotations

import numpy as np

from .certificates import SubspaceCertificate, search_target
from .norms import row_l1_blockwise
from .range_finder import POWER_ITERS, randomized_range_finder
from .row_source import RowSource

__all__ = [
    "exact_factorisation",
    "identity_certificate",
    "nested_family_search",
    "randomized_family",
    "randomized_upper_bound",
    "svd_upper_bound",
]


def identity_certificate(rows_of, n: int, m: int, block: int = 512) -> SubspaceCertificate:
    """``B = A`` itself, as ``I @ A`` or ``A @ I`` (rank ``min(n, m)``, error 0).

    ``rows_of(slice)`` returns rows of ``A``; they are copied into a new array, ``block`` rows
    at a time (the one place where the identity factorisation is built).
    """
    A = np.empty((n, m))
    for s in range(0, n, block):
        A[s:s + block] = rows_of(slice(s, min(n, s + block)))
    if n <= m:
        return SubspaceCertificate(np.eye(n), A, source="identity")
    return SubspaceCertificate(A, np.eye(m), source="identity")


def exact_factorisation(A) -> SubspaceCertificate:
    """``B = A`` itself for a stored ``A`` (:func:`identity_certificate`)."""
    A = np.asarray(A, dtype=np.float64)
    return identity_certificate(lambda rows: A[rows], *A.shape)


def nested_family_search(A, US: np.ndarray, Vt: np.ndarray, eps: float, lo: int = 0, source: str = ""):
    r"""Smallest-k search over the nested family ``B_k = US[:, :k] @ Vt[:k]``.

    The row-l1 error of nested projections is not monotone in ``k``; bisection keeps the
    invariant ``err(hi) <= eps < err(lo)`` and so returns a *valid* certificate, not always the
    smallest one in the family. One factorisation serves every ``k``.

    Parameters
    ----------
    A : ndarray, shape (n, m)
    US : ndarray, shape (n, l)
        Left factor (e.g. ``U * S``).
    Vt : ndarray, shape (l, m)
        Right factor with orthonormal rows.
    eps : float
    lo : int
        A rank known to fail, e.g. ``lower - 1`` for a certified lower bound ``lower``
        (no rank-``lower - 1`` matrix meets ``eps``, so neither does ``B_{lower-1}``).

    Returns
    -------
    SubspaceCertificate or None
        ``None`` when even ``k = l`` misses ``eps``.
    """
    l = US.shape[1]
    target = search_target(eps)

    def err(k):
        return float(row_l1_blockwise(A, US[:, :k], Vt[:k]).max()) if A.shape[0] else 0.0

    hi = l
    if err(hi) > target:
        return None
    lo = max(0, min(lo, hi - 1))
    if lo == 0 and hi > 0 and err(0) <= target:
        hi = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if err(mid) <= target:
            hi = mid
        else:
            lo = mid
    return SubspaceCertificate(US[:, :hi].copy(), Vt[:hi].copy(), source=source)


def svd_upper_bound(A, eps: float, svd=None, lo: int = 0) -> SubspaceCertificate:
    r"""Upper certificate from the top right-singular subspaces: ``B_k = A V_k V_k^T``.

    Parameters
    ----------
    A : ndarray, shape (n, m)
    eps : float
    svd : tuple, optional
        ``(U, S, Vt)`` of ``A`` if already computed.
    """
    A = np.asarray(A, dtype=np.float64)
    U, S, Vt = np.linalg.svd(A, full_matrices=False) if svd is None else svd
    cert = nested_family_search(A, U * S, Vt, eps, lo=lo, source="dense SVD")
    if cert is None or not cert.verify(A, eps):
        cert = exact_factorisation(A)
    return cert


def randomized_family(A, eps: float, start: int = 32, power_iters: int = POWER_ITERS, seed: int = 0,
                      oversample: int = 10, lo: int = 0):
    r"""Randomized nested family that meets ``eps``, and its certificate.

    Doubles the sketch size ``l`` (starting at ``start + oversample``) until the top member
    ``B_l = A V V^T`` of the family ``B_k = (A V_k) V_k^T`` meets ``eps``, with ``V`` from
    :func:`~attnrank_lite.engine.range_finder.randomized_range_finder`; when ``l`` reaches half
    of ``min(n, m)`` the exact SVD family is used instead.

    Returns
    -------
    cert : SubspaceCertificate
        Verified on ``A``.
    family : tuple ``(US, Vt, source)``
        The nested family (``US`` shape (n, l), ``Vt`` shape (l, m)); a caller can search it
        again for a larger ``eps`` without a new factorisation. ``None`` if the identity
        factorisation had to be used.
    """
    A = np.asarray(A, dtype=np.float64)
    n, m = A.shape
    full = min(n, m)
    source = RowSource.from_matrix(A)
    l = max(1, min(full, start + oversample))
    draw = 0
    while True:
        if l >= full // 2:
            U, S, Vt = np.linalg.svd(A, full_matrices=False)
            fam = (U * S, Vt, "dense SVD")
            cert = nested_family_search(A, fam[0], fam[1], eps, lo=lo, source=fam[2])
            if cert is None or not cert.verify(A, eps):
                return exact_factorisation(A), None
            return cert, fam
        basis = randomized_range_finder(source, l, power_iters=power_iters, seed=seed + draw)
        fam = (basis.AV, basis.V.T, f"randomized range finder (l={l})")
        cert = nested_family_search(A, fam[0], fam[1], eps, lo=lo, source=fam[2])
        if cert is not None and cert.verify(A, eps):
            return cert, fam
        l = min(full, 2 * l)
        draw += 1


def randomized_upper_bound(A, eps: float, start: int = 32, power_iters: int = POWER_ITERS, seed: int = 0,
                           oversample: int = 10, lo: int = 0) -> SubspaceCertificate:
    r"""Upper certificate from a randomized range finder (Halko–Martinsson–Tropp).

    Finds an orthonormal ``Q`` (m x l) with ``A Q Q^T ≈ A``, takes the SVD ``A Q = U S W^T`` and
    searches the nested family ``B_k = (U_k S_k) (Q W_k)^T = A V_k V_k^T`` with ``V = Q W``.
    ``l`` doubles until ``B_l`` meets ``eps``. The certificate is exact (verified on ``A``)
    even though the subspace is approximate. Cost :math:`O(nml)` per sketch plus
    :math:`O(nmk)` per bisection step (errors are computed in row blocks).

    Parameters
    ----------
    A : ndarray, shape (n, m)
    eps : float
    start : int
        First subspace dimension tried (before oversampling).
    power_iters : int
        Subspace iterations (2 is plenty for attention spectra).
    seed : int
        Seed of the Gaussian test matrix (results are deterministic).
    lo : int
        A rank known to fail (``lower - 1`` from a lower certificate).
    """
    return randomized_family(A, eps, start=start, power_iters=power_iters, seed=seed,
                             oversample=oversample, lo=lo)[0]
