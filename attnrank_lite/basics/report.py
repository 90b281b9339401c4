r"""Chapter 1's tables, checks and glued numbers, one function per statement, from the engine's brackets and
certificates with ``effort="max"`` (every family: the tables do not depend on the cost-aware default)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine.attention import row_softmax, softmax_attention
from ..engine.bracket import rank_bracket, rank_brackets
from ..engine.bracket_algebra import intersect, monotone_envelope
from ..engine.certificates import ClusterMassCertificate
from ..engine.l1fit import l1_fit, l1_upper_bound
from ..engine.lower import cluster_mass_lower_bound, frobenius_tail_lower_bound
from ..engine.norms import row_l1, worst_case_values
from ..engine.upper import svd_upper_bound
from . import examples as ex

#: the best-of rule of the chapter's brackets (``effort`` of :func:`~attnrank_lite.engine.bracket.rank_bracket`)
EFFORT = "max"

__all__ = ["bounded_outputs_table", "certificate_rows_table", "cluster_certificate", "eps_sweep_table",
           "exact_case_table", "invariance_table", "key_numbers", "l1_family_check",
           "multiplicity_table", "spectral_contrast_table", "tamper_table"]


def bounded_outputs_table(E, trials: int, seed: int = 0, tol: float = 1e-12):
    r"""``prop-bounded-outputs`` on ``E`` (shape (n, m)): ``row_l1(E)``, the sign vector's
    :math:`\max|EV|` and the best of ``trials`` random ``V`` in one row, with the checks
    ``sign_attains`` (equal within ``tol``) and ``random_below`` (at most the norm + ``tol``)."""
    norm = row_l1(E)
    _, attained = worst_case_values(E)
    best = ex.random_bounded_values_max(E, trials, seed=seed)
    table = pd.DataFrame([{"row_l1(E)": norm, "sign vector": attained, f"best of {trials} random V": best}])
    return table, {"sign_attains": bool(abs(attained - norm) <= tol), "random_below": bool(best <= norm + tol)}


def exact_case_table(n: int, blocks: int, eps: float) -> pd.DataFrame:
    r"""Brackets of ``prop-exact-cases`` at ``eps``, 1 and 1.5: columns ``matrix, eps, exact rank``
    (the case's rank for eps < 1, else 0), ``lower, upper, verified``."""
    rows = []
    for name, (A, rank) in ex.exact_cases(n, blocks).items():
        for e in (eps, 1.0, 1.5):
            b = rank_bracket(A, e, effort=EFFORT)
            rows.append({"matrix": name, "eps": e, "exact rank": rank if e < 1 else 0,
                         "lower": b.lower, "upper": b.upper, "verified": b.verify(A, e)})
    return pd.DataFrame(rows)


def eps_sweep_table(A, eps_values, certificates=None, recipe=None) -> pd.DataFrame:
    r"""Brackets of ``A`` over ``eps_values`` (sorted) with ``frobenius_tail`` (``prop-frobenius-tail``, all rows),
    ``frobenius_verified`` and the envelopes of :func:`~attnrank_lite.engine.bracket_algebra.monotone_envelope`;
    with ``certificates`` (a folder) the brackets also go to ``instance.npz`` there, the instance being ``recipe``
    (e.g. ``dict(Q=X, beta=beta)``) or else ``A``."""
    brackets = rank_brackets(A, list(eps_values), effort=EFFORT)  # one factorisation for all levels
    if certificates is not None:
        from ..engine.certificate_io import save_brackets_in_folder

        save_brackets_in_folder(certificates, "instance", brackets, **(recipe if recipe is not None else {"A": A}))
    rows = []
    for e, br in zip(eps_values, brackets):
        ft = frobenius_tail_lower_bound(A, e)
        rows.append({**br.as_dict(), "frobenius_tail": ft.rank, "frobenius_verified": ft.verify(A, e)})
    return monotone_envelope(pd.DataFrame(rows))


def multiplicity_table(X, multiplicities, beta: float, eps: float):
    r"""``prop-multiplicity``: the keys ``X`` (shape (m, d), also the queries) repeated ``multiplicities`` times,
    written out and merged with log-weights. Returns the two brackets (``instance, keys`` and the bracket's columns)
    and :math:`\max|A_\text{merged} -` column sums of :math:`A_\text{full}|` (rounding only)."""
    X = np.asarray(X, dtype=np.float64)
    K_full = np.repeat(X, np.asarray(multiplicities), axis=0)
    K_merged, logw, inverse = ex.merge_duplicate_keys(K_full)
    A_full = softmax_attention(X, K_full, beta=beta)
    A_merged = softmax_attention(X, K_merged, beta=beta, log_weights=logw)
    A_summed = np.zeros_like(A_merged)
    np.add.at(A_summed.T, inverse, A_full.T)
    table = pd.DataFrame([{"instance": name, "keys": M.shape[1], **rank_bracket(M, eps, effort=EFFORT).as_dict()}
                          for name, M in (("all copies", A_full), ("merged with log-weights", A_merged))])
    return table, float(np.abs(A_merged - A_summed).max())


def spectral_contrast_table(matrices: dict, split_factors, eps: float) -> pd.DataFrame:
    r"""Spectral numerical rank against the certified bracket of each ``name -> A`` with every key
    split into ``c`` copies (:func:`.examples.split_keys`) for ``c`` in ``split_factors``."""
    rows = []
    for c in split_factors:
        for name, A0 in matrices.items():
            A = ex.split_keys(A0, c)
            b = rank_bracket(A, eps, effort=EFFORT)
            rows.append({"matrix": name, "copies per key": c, "keys": A.shape[1],
                         "spectral numerical rank": ex.spectral_numerical_rank(A, eps),
                         "lower": b.lower, "upper": b.upper, "verified": b.verify(A, eps)})
    return pd.DataFrame(rows)


def cluster_certificate(A, bracket) -> ClusterMassCertificate:
    r"""The cluster-mass certificate (``prop-cluster-mass``) drawn for ``bracket``: its own lower certificate when
    of that kind, else the greedy :func:`~attnrank_lite.engine.lower.cluster_mass_lower_bound` of ``A`` at its eps."""
    cert = bracket.lower_certificate
    return cert if isinstance(cert, ClusterMassCertificate) else cluster_mass_lower_bound(A, bracket.eps)


def certificate_rows_table(A, cert: ClusterMassCertificate) -> pd.DataFrame:
    r"""Per selected query: ``row``, ``own_mass`` (:math:`M_{aa}`) and ``group_size``."""
    own = np.diag(cert.mass_matrix(A)) if cert.rank else np.zeros(0)
    return pd.DataFrame({"row": list(cert.rows), "own_mass": own, "group_size": [len(g) for g in cert.groups]})


def tamper_table(A, bracket, cert: ClusterMassCertificate, eps: float) -> pd.DataFrame:
    r"""``verify`` on the found certificates and on :func:`.examples.tampered_copies` of them
    (``None`` when the cluster-mass certificate has fewer than 2 groups)."""
    bad_upper, bad_lower = ex.tampered_copies(bracket, cert)
    rows = [("upper B = LR (as found)", bracket.upper_certificate.verify(A, eps)),
            ("upper, one entry of L changed", bad_upper.verify(A, eps)),
            ("lower cluster-mass (as found)", cert.verify(A, eps)),
            ("lower, group 0 overlapping group 1", None if bad_lower is None else bad_lower.verify(A, eps))]
    return pd.DataFrame(rows, columns=["certificate", "verify"])


def l1_family_check(A, eps: float) -> tuple[dict, dict, str]:
    r"""The SVD family against the rows fitted in :math:`\ell_1` ("Fitting the rows"). Returns glue strings
    (``c1_l1_k`` the SVD certificate's rank, ``c1_l1_proj`` / ``c1_l1_fit`` its largest row error projected /
    fitted, both that of ``B = A`` when no member met eps, ``c1_l1_rank`` the :math:`\ell_1` family's), checks
    (``fit_not_worse``, ``l1_verified``: verifies with rank at most the SVD one) and the printed line."""
    plain, fitted = svd_upper_bound(A, eps), l1_upper_bound(A, eps)
    if plain.source == "identity":  # no member met eps (eps = 0): B = A, no subspace
        projected = fit = row_l1(np.asarray(A, dtype=np.float64) - plain.L @ plain.R)
    else:
        same_k = l1_fit(A, plain.R.T)
        projected, fit = float(same_k.max_projected), float(same_k.max_error)
    verified = fitted.verify(A, eps)
    numbers = {"c1_l1_k": str(plain.rank), "c1_l1_proj": f"{projected:.3f}",
               "c1_l1_fit": f"{fit:.3f}", "c1_l1_rank": str(fitted.rank)}
    checks = {"fit_not_worse": bool(fit <= projected), "l1_verified": bool(verified and fitted.rank <= plain.rank)}
    message = (f"SVD family: rank {plain.rank} ({plain.source}), max row error {projected:.3f} "
               f"projected, {fit:.3f} fitted in l1 | l1 family: rank {fitted.rank}, verify: {verified}")
    return numbers, checks, message


def invariance_table(X, beta: float, eps: float, rng) -> tuple[pd.DataFrame, float, tuple[int, int]]:
    r"""``prop-invariances`` on the self-attention of ``X``: brackets of :math:`A`, of :math:`A` with
    rows and columns permuted and of every other row; the largest change of the row softmax under
    a random row shift :math:`c\mathbf 1^\top` of the logits; the first two brackets intersected."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    perm_r, perm_c = rng.permutation(n), rng.permutation(n)
    shift = rng.normal(size=(n, 1)) * 50
    L = beta * X @ X.T
    A = row_softmax(L)
    cases = {"original": A, "rows and columns permuted": A[perm_r][:, perm_c], "every other row deleted": A[::2]}
    table = pd.DataFrame([{"instance": k, **rank_bracket(M, eps, effort=EFFORT).as_dict()} for k, M in cases.items()])
    shift_change = float(np.abs(row_softmax(L + shift) - A).max())
    return table, shift_change, intersect(table["lower"].iloc[:2], table["upper"].iloc[:2])


def key_numbers(invariances, combined, shift_change: float, sweep, comp_combined, contrast,
                matrix: str = "circle") -> dict:
    r"""The numbers the chapter's prose quotes, as glue strings, from its own tables (``contrast``
    rows of ``matrix``: spectral counts at the fewest and most copies, their brackets intersected)."""
    rows = contrast[contrast.matrix == matrix].sort_values("copies per key")
    pair = "[{}, {}]".format
    return {
        "c1_orig_lower": str(invariances["lower"].iloc[0]),
        "c1_perm_lower": str(invariances["lower"].iloc[1]),
        "c1_combined": pair(*combined),
        "c1_shift_change": f"{shift_change:.1e}",
        "c1_frob_range": f"{sweep.frobenius_tail.min()} to {sweep.frobenius_tail.max()}",
        "c1_lower_range": f"{sweep.lower.min()} to {sweep.lower.max()}",
        "c1_comp_combined": pair(*comp_combined),
        "c1_spec_first": str(rows["spectral numerical rank"].iloc[0]),
        "c1_spec_last": str(rows["spectral numerical rank"].iloc[-1]),
        "c1_c_last": str(rows["copies per key"].iloc[-1]),
        "c1_split_combined": pair(*intersect(rows["lower"], rows["upper"])),
    }
