r"""Harmonic (sphere-polynomial) upper certificates (``SPEC.md``, "Upper: harmonic certificate";
:ref:`thm-sphere-upper`): :math:`B = (A V) V^\top`, ``V`` an orthonormal basis of the polynomials of
degree :math:`\le L` restricted to the keys, certifies :math:`\mathrm{rank}_\varepsilon(A) \le
N(d,\le L)` once it meets eps; no SVD of ``A``, a family nested in ``L``.

The basis is built by Vandermonde with Arnoldi: on the sphere the monomials :math:`x^a` with
:math:`a_0 \le 1`, :math:`|a| \le L` span the restrictions; each :math:`x^a = x_k\,x^{a - e_k}` is
``x_k`` times its parent's orthonormalised column, orthogonalised against the two previous degrees
(multiplication by :math:`x_k` is self-adjoint), once more against all when a probe finds more than
:data:`PROBE_TOL` of rounding left along earlier columns, and by a QR within the degree. A
numerically rank-deficient degree keeps its independent columns (pivoted QR), and the following
degrees use every product ``x_k * column``."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .certificates import SubspaceCertificate, search_target
from .checks import log_weights as _check_log_weights
from .checks import real_matrix
from .nested import nested_family_search
from .range_finder import cholesky_qr2
from .row_source import RowSource, evenly_spaced_rows

__all__ = ["HarmonicBasis", "HarmonicCertificate", "harmonic_search", "harmonic_upper_bound", "SPHERE_TOL"]

#: keys count as "on the unit sphere" when ``| |k| - 1 | <= SPHERE_TOL``
SPHERE_TOL = 1e-8
#: relative size below which a new basis direction counts as numerically dependent
_DEP_TOL = 1e-9
#: the pass of a new degree against every earlier column runs when the sum of its columns has a
#: component of more than this relative size along one of them (else the rounding left by the short
#: recurrence is kept: the basis is orthonormal to about this, and any basis gives a valid certificate)
PROBE_TOL = 1e-10


class HarmonicBasis:
    r"""Orthonormal basis of the polynomials of degree ``<= L`` restricted to keys on the sphere, grown
    lazily degree by degree (``degree`` the highest built; ``deficient`` whether some degree had fewer
    independent columns than :math:`N(d, \ell)`); ``columns(L)`` is a prefix, independent of ``beta``.

    Parameters
    ----------
    K : array_like, shape (m, d)
        Keys on :math:`S^{d-1}` (within :data:`SPHERE_TOL`), ``d >= 2``.
    log_weights : array_like, shape (m,), optional
        The basis then spans :math:`w_j p(k_j)`, where the rows of ``A`` live."""

    def __init__(self, K, log_weights=None):
        K = real_matrix("K", K)
        m, d = K.shape
        if d < 2:
            raise ValueError(f"K must have d >= 2 columns (points on S^(d-1)), got shape {K.shape}")
        if m == 0:
            raise ValueError("K must hold at least one key")
        nrm = np.linalg.norm(K, axis=1)
        if np.abs(nrm - 1.0).max() > SPHERE_TOL:
            raise ValueError(f"keys K must lie on the unit sphere (| |k| - 1 | <= {SPHERE_TOL:g}); "
                             f"largest deviation {np.abs(nrm - 1.0).max():.3g}")
        self.K = K
        self.m, self.d = m, d
        if log_weights is None:
            w = np.ones(m)
        else:
            lw = _check_log_weights(log_weights, m)
            if not np.isfinite(lw).any():
                raise ValueError("log_weights must have at least one finite entry")
            with np.errstate(under="ignore"):
                w = np.exp(lw - lw[np.isfinite(lw)].max())
        self._buf = np.empty((m, min(m, 16)), order="F")
        self._k = 0
        q0 = w / np.linalg.norm(w)
        self._store(q0[:, None])
        self._counts = [1]  # _counts[l] = columns through degree l
        self._prev = [((0,) * d, 0)]  # (multi-index, column) of the last degree (exact mode)
        self._prev_block = (0, 1)
        self.degree = 0
        self.deficient = False

    # storage with capacity doubling (columns are appended degree by degree)
    def _store(self, C: np.ndarray) -> None:
        k = self._k
        need = k + C.shape[1]
        if need > self._buf.shape[1]:
            # doubling: every column is copied about once in all
            cap = min(max(need, 2 * self._buf.shape[1]), max(need, self.m))
            buf = np.empty((self.m, cap), order="F")
            buf[:, :k] = self._buf[:, :k]
            self._buf = buf
        self._buf[:, k:need] = C
        self._k = need

    def dimension(self, L: int) -> int:
        """Number of basis columns of degree ``<= L`` (grows the basis if needed)."""
        self.grow_to(L)
        return self._counts[L]

    def columns(self, L: int) -> np.ndarray:
        """Orthonormal basis of degree ``<= L``, shape (m, dimension(L)) (a view; do not modify)."""
        k = self.dimension(L)  # grow first: growing may replace the buffer
        return self._buf[:, :k]

    def grow_to(self, L: int) -> None:
        """Build the degrees up to ``L``."""
        if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 0:
            raise ValueError(f"degree L must be an integer >= 0, got {L!r}")
        while self.degree < L:
            k0 = self._k
            if k0 < self.m:  # else the whole space R^m is spanned: nothing new
                self._grow(k0)
            self._prev_block = (k0, self._k)
            self.degree += 1
            self._counts.append(self._k)

    def _grow(self, k0: int) -> None:
        """Append the next degree's new directions to the basis (none when the last degree added none)."""
        d, m = self.d, self.m
        X = self.K
        lo, hi = self._prev_block
        if not self.deficient:
            cand, keys = [], []
            for a, col in self._prev:
                for k in range(max((j for j, v in enumerate(a) if v), default=0), d):
                    b = list(a)
                    b[k] += 1
                    if b[0] <= 1:
                        keys.append(tuple(b))
                        cand.append((col, k))
            C = np.empty((m, len(cand)), order="F")
            for j, (col, k) in enumerate(cand):
                C[:, j] = X[:, k] * self._buf[:, col]
        else:
            keys = None
            P = self._buf[:, lo:hi]
            C = np.asfortranarray(np.concatenate([X[:, k:k + 1] * P for k in range(d)], axis=1))
        if C.shape[1] == 0:  # the last degree added no direction: no later degree adds one
            return
        norms = np.linalg.norm(C, axis=0)
        V = self._buf[:, :k0]
        if keys is not None:
            # short recurrence: <x_k q, p> = <q, x_k p> = 0 for deg q = L-1, deg p <= L-3, so only
            # degrees L-2 and L-1 carry x_k q's projection; one pass against all removes the rounding
            start = self._counts[self.degree - 2] if self.degree >= 2 else 0
            W = self._buf[:, start:k0]
            C -= W @ (W.T @ C)
            # the pass against all is needed only once rounding has built up: a probe, the sum of
            # the new columns, measures it for the price of one column
            probe = C.sum(axis=1)
            if np.abs(V.T @ probe).max() > PROBE_TOL * np.linalg.norm(probe):
                C -= V @ (V.T @ C)
        else:
            for _ in range(2):  # classical Gram-Schmidt, twice
                C -= V @ (V.T @ C)
        scale = max(float(norms.max()), 1e-300)
        Qb, diag = cholesky_qr2(C, 1e-6 * scale)  # fast path: Cholesky QR twice (well conditioned)
        if Qb is None:
            Qb, R = np.linalg.qr(C)
            diag = np.abs(np.diag(R))
        if keys is not None and diag.size and diag.min() > _DEP_TOL * scale and k0 + diag.size <= m:
            if diag.min() < 1e-3 * scale:  # R far from orthogonal: one more pass
                Qb -= V @ (V.T @ Qb)
                Qb, _ = np.linalg.qr(Qb)
            self._store(Qb)
            self._prev = [(b, k0 + j) for j, b in enumerate(keys)]
        else:
            from scipy.linalg import qr as pivoted_qr

            Qp, Rp, _ = pivoted_qr(C, mode="economic", pivoting=True)
            dp = np.abs(np.diag(Rp))
            r = int(np.count_nonzero(dp > _DEP_TOL * scale))
            r = min(r, m - k0)
            Qb = Qp[:, :r]
            if r:
                Qb = Qb - V @ (V.T @ Qb)
                Qb, _ = np.linalg.qr(Qb)
            self._store(Qb)
            self.deficient = True
            self._prev = []


@dataclass
class HarmonicCertificate(SubspaceCertificate):
    """A subspace certificate ``B = (A V_L) V_L^T``, ``V_L`` the basis of degree ``<= L``; ``degree``
    is ``L``, for the reader (``verify`` checks the factorisation only)."""

    degree: int = 0


def harmonic_search(source: RowSource, basis: HarmonicBasis, eps_values, *, lo: int = 0, sample: int = 256,
                    L_cap: int = 400):
    """Harmonic certificates of the smallest degree found, one per eps (``None``: none): the degree
    grows until the sample rows meet the smallest eps, then the nested search certifies over the cuts
    ``N(d, <= L)``."""
    eps_list = [float(e) for e in eps_values]
    m = basis.m
    if source.m != m:
        raise ValueError(f"the basis has {m} keys but A has {source.m} columns")
    As = source.rows(evenly_spaced_rows(source.n, sample))
    target = search_target(min(eps_list))
    # grow the degree until the sample meets the smallest eps (incremental residual)
    L = 0
    E = As - (As @ basis.columns(0)) @ basis.columns(0).T
    prev = basis.dimension(0)
    errs = {prev: float(np.abs(E).sum(axis=1).max())}
    L_max = None
    while True:
        if L_max is None and (errs[prev] <= target or L >= L_cap or prev >= m):
            # no headroom degree: the next one is built only after a failure, by the retry below
            L_max = min(L_cap, L)
        if L_max is not None and L >= L_max:
            break
        L += 1
        c = basis.dimension(L)
        if c > prev:
            Vn = basis._buf[:, prev:c]
            E -= (As @ Vn) @ Vn.T
            prev = c
        evaluated = prev > lo or prev >= m or L >= L_cap  # cuts <= lo are known to fail
        errs[prev] = float(np.abs(E).sum(axis=1).max()) if evaluated else float("inf")
    del E, As
    while True:
        cuts = [basis.dimension(L) for L in range(L_max + 1)]
        found = nested_family_search(source, basis.columns(L_max), cuts, eps_list, lo=lo,
                                     sample=sample, sample_errors=errs)
        if all(f is not None for f in found) or L_max >= L_cap or cuts[-1] >= m:
            break
        L_max = min(L_cap, L_max + 2)  # rare: the full check failed at every cut; more degrees
        errs = None
    degrees = [None if f is None else cuts.index(f[0]) for f in found]
    # R is a view of the basis (no copy): the basis is only ever appended to
    return [None if f is None else HarmonicCertificate(f[1], basis.columns(L).T, source=f"harmonic degree {L}",
                                                       degree=L) for f, L in zip(found, degrees)]


def harmonic_upper_bound(A, K, eps: float, lo: int = 0, basis: HarmonicBasis | None = None,
                         log_weights=None):
    """Harmonic upper certificate for a stored ``A`` whose keys ``K`` lie on the unit sphere (``lo`` a
    rank known to fail, ``basis`` one of the same keys); ``None`` when no degree meets ``eps``."""
    A = real_matrix("A", A)
    basis = HarmonicBasis(K, log_weights) if basis is None else basis
    if basis.m != A.shape[1]:
        raise ValueError(f"K has {basis.m} keys but A has {A.shape[1]} columns")
    return harmonic_search(RowSource.from_matrix(A), basis, [eps], lo=lo)[0]

