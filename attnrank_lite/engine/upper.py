"""Searches that produce upper (subspace) certificates (the book's :ref:`prop-certificate-chain`)."""
from __future__ import annotations

import numpy as np

from .certificates import SubspaceCertificate
from .nested import nested_family_search
from .range_finder import POWER_ITERS, randomized_range_finder
from .row_source import RowSource

__all__ = ["exact_factorisation", "identity_certificate", "nested_certificate", "randomized_family",
           "svd_upper_bound", "gram_eigenbasis", "DENSE_FROM"]

#: the randomized family's sketches stop, for the dense basis, once one would hold ``min(n, m) / DENSE_FROM``
#: columns: at n = m = 3,000 a sketch of 1,344 columns (two power iterations) took about as long as
#: :func:`gram_eigenbasis` (4.1 s and 3.6 s, one thread; see benchmarks/README.md)
DENSE_FROM = 4


def identity_certificate(rows_of, n: int, m: int, block: int = 512) -> SubspaceCertificate:
    """``B = A`` itself, as ``I @ A`` or ``A @ I`` (rank ``min(n, m)``, error 0), the rows
    ``rows_of(slice)`` copied ``block`` at a time."""
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


def nested_certificate(A, V: np.ndarray, eps: float, lo: int = 0, source: str = ""):
    """For a stored ``A``: the member of ``B_k = (A V_k) V_k^T`` found by the one nested search (every ``k`` a cut),
    verified; ``None`` when none meets ``eps``."""
    A = np.asarray(A, dtype=np.float64)
    found = nested_family_search(RowSource.from_matrix(A), V, range(0, V.shape[1] + 1), [eps], lo=lo)[0]
    if found is None:
        return None
    k, left = found
    cert = SubspaceCertificate(np.ascontiguousarray(left), np.ascontiguousarray(V[:, :k].T), source=source)
    return cert if cert.verify(A, eps) else None


def svd_upper_bound(A, eps: float, svd=None, lo: int = 0) -> SubspaceCertificate:
    """Upper certificate ``B_k = A V_k V_k^T`` from the top right-singular subspaces of ``A`` (n, m)
    (``svd = (U, S, Vt)`` if already computed; ``lo`` a rank known to fail); ``B = A`` when none
    meets eps."""
    A = np.asarray(A, dtype=np.float64)
    Vt = np.linalg.svd(A, full_matrices=False)[2] if svd is None else svd[2]
    cert = nested_certificate(A, Vt.T, eps, lo, "dense SVD")
    return exact_factorisation(A) if cert is None else cert


def gram_eigenbasis(A) -> np.ndarray:
    """An orthonormal basis ``V`` (m, min(n, m)) of the row space of ``A`` (n, m), columns in decreasing
    order of ``||A v||``: the eigenvectors of the Gram matrix ``A^T A`` (for ``n < m``, ``A^T = Q R`` and
    ``V = Q W`` with ``W`` those of ``R R^T``). In exact arithmetic these are the right singular vectors;
    in floating point the columns are orthonormal to rounding and the leading ones agree with the SVD's
    where ``sigma_k`` is well above ``sqrt(u) sigma_1``. Any orthonormal ``V`` gives valid members of the
    nested family (each is checked entrywise); this one costs about half of ``np.linalg.svd(A)``."""
    A = np.asarray(A, dtype=np.float64)
    n, m = A.shape
    if n >= m:
        return np.linalg.eigh(A.T @ A)[1][:, ::-1]
    Q, R = np.linalg.qr(A.T)
    return Q @ np.linalg.eigh(R @ R.T)[1][:, ::-1]


def randomized_family(A, eps: float, start: int = 32, power_iters: int = POWER_ITERS, seed: int = 0,
                      oversample: int = 10, lo: int = 0):
    """Randomized nested family ``B_k = (A V_k) V_k^T`` that meets ``eps``: the sketch size ``l``
    doubles from ``start + oversample``, and from ``l >= min(n, m) / DENSE_FROM`` on the family is
    the dense :func:`gram_eigenbasis`; ``lo`` a rank known to fail. Returns the certificate, verified
    on ``A``, and the family ``(V, source)`` to search again at a larger eps (``None`` when ``B = A``
    was used)."""
    A = np.asarray(A, dtype=np.float64)
    n, m = A.shape
    full = min(n, m)
    source = RowSource.from_matrix(A)
    l = max(1, min(full, start + oversample))
    draw = 0
    while True:
        if l >= full // DENSE_FROM:
            fam = (gram_eigenbasis(A), "dense eigenvectors of A^T A")
            cert = nested_certificate(A, fam[0], eps, lo, fam[1])
            if cert is None:
                return exact_factorisation(A), None
            return cert, fam
        basis = randomized_range_finder(source, l, power_iters=power_iters, seed=seed + draw)
        fam = (basis.V, f"randomized range finder (l={l})")
        cert = nested_certificate(A, fam[0], eps, lo, fam[1])
        if cert is not None:
            return cert, fam
        l = min(full, 2 * l)
        draw += 1

