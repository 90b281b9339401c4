r"""The numerical checks of chapter 1, one function per statement.

Each function builds the table a chapter-1 cell shows and the check it prints, from the
engine (:func:`attnrank_lite.rank_bracket`, the certificates) and the constructions of
:mod:`attnrank_lite.quotient.constructions`:

* ``prop-bounded-outputs``: :func:`bounded_outputs_table`;
* ``prop-exact-cases``: :func:`exact_case_table`;
* ``prop-invariances`` (c) with ``prop-frobenius-tail``: :func:`eps_sweep_table`;
* ``prop-multiplicity``: :func:`multiplicity_table`;
* the spectral contrast: :func:`spectral_contrast_table`;
* the chapter's report: the certificate drawn and its rows (:func:`cluster_certificate`,
  :func:`certificate_figure`, :func:`certificate_rows_table`; any lower kind of the bracket, eps = 0
  included), :func:`tamper_table`, :func:`l1_family_check`, :func:`invariance_table`, the figures
  :func:`eps_sweep_figure` and :func:`spectral_contrast_figure`, and :func:`key_numbers` (glue).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .attention import row_softmax, softmax_attention
from .bracket import rank_bracket, rank_brackets
from .bracket_algebra import intersect, monotone_envelope
from .certificates import ClusterMassCertificate
from .examples import (
    exact_cases,
    merge_duplicate_keys,
    random_bounded_values_max,
    spectral_numerical_rank,
    split_keys,
    tampered_copies,
)
from .l1fit import l1_fit, l1_upper_bound
from .lower import cluster_mass_lower_bound, frobenius_tail_lower_bound
from .norms import row_l1, worst_case_values
from .upper import svd_upper_bound

#: the best-of rule of chapter 1's checks (``effort`` of :func:`attnrank_lite.engine.bracket.rank_bracket`):
#: every family, so the chapter's tables do not depend on the cost-aware default
EFFORT = "max"

__all__ = [
    "bounded_outputs_table",
    "certificate_figure",
    "certificate_rows_table",
    "cluster_certificate",
    "eps_sweep_figure",
    "eps_sweep_table",
    "exact_case_table",
    "invariance_table",
    "key_numbers",
    "l1_family_check",
    "multiplicity_table",
    "spectral_contrast_figure",
    "spectral_contrast_table",
    "tamper_table",
]


def bounded_outputs_table(E, trials: int, seed: int = 0, tol: float = 1e-12):
    r"""``prop-bounded-outputs`` on one error matrix ``E``.

    Parameters
    ----------
    E : array_like, shape (n, m)
    trials : int
        Random value matrices with entries in [-1, 1] (half uniform, half signs).
    seed : int
    tol : float
        Rounding tolerance of the two checks.

    Returns
    -------
    table : pandas.DataFrame
        One row: ``row_l1(E)``, the sign vector's :math:`\max|EV|`, the best random one.
    checks : dict
        ``sign_attains`` (:math:`|\text{sign} - \|E\|| \le` tol) and ``random_below``
        (best random :math:`\le \|E\| +` tol).
    """
    norm = row_l1(E)
    _, attained = worst_case_values(E)
    best = random_bounded_values_max(E, trials, seed=seed)
    table = pd.DataFrame([{"row_l1(E)": norm, "sign vector": attained,
                           f"best of {trials} random V": best}])
    checks = {"sign_attains": bool(abs(attained - norm) <= tol),
              "random_below": bool(best <= norm + tol)}
    return table, checks


def exact_case_table(n: int, blocks: int, eps: float) -> pd.DataFrame:
    r"""Brackets of the exact cases of ``prop-exact-cases`` at ``eps``, 1 and 1.5.

    Returns
    -------
    pandas.DataFrame
        Columns ``matrix, eps, exact rank`` (the proposition's value: the case's rank for
        eps < 1, else 0), ``lower, upper, verified``.
    """
    rows = []
    for name, (A, rank) in exact_cases(n, blocks).items():
        for e in (eps, 1.0, 1.5):
            b = rank_bracket(A, e, effort=EFFORT)
            rows.append({"matrix": name, "eps": e, "exact rank": rank if e < 1 else 0,
                         "lower": b.lower, "upper": b.upper, "verified": b.verify(A, e)})
    return pd.DataFrame(rows)


def eps_sweep_table(A, eps_values, certificates=None, recipe=None) -> pd.DataFrame:
    r"""Brackets of ``A`` over ``eps_values`` with the Frobenius-tail lower bound beside them
    and the envelopes of :func:`attnrank_lite.engine.bracket_algebra.monotone_envelope`.

    ``certificates`` (a folder): the brackets also go to one certificate file
    ``instance.npz`` there (:func:`attnrank_lite.engine.certificate_io.save_brackets`; the
    instance is ``recipe``, e.g. ``dict(Q=X, beta=beta)``, else the matrix ``A``).

    Returns
    -------
    pandas.DataFrame
        Sorted by eps: the bracket's columns, ``frobenius_tail`` (``prop-frobenius-tail`` on all
        rows), ``frobenius_verified``, ``lower_envelope``, ``upper_envelope``.
    """
    rows = []
    # one factorisation for every level (rank_brackets), not one SVD per level
    brackets = rank_brackets(A, list(eps_values), effort=EFFORT)
    if certificates is not None:
        from .certificate_io import save_brackets_in_folder

        save_brackets_in_folder(certificates, "instance", brackets, **(recipe if recipe is not None else {"A": A}))
    for e, br in zip(eps_values, brackets):
        ft = frobenius_tail_lower_bound(A, e)
        rows.append({**br.as_dict(), "frobenius_tail": ft.rank, "frobenius_verified": ft.verify(A, e)})
    return monotone_envelope(pd.DataFrame(rows))


def multiplicity_table(X, multiplicities, beta: float, eps: float):
    r"""``prop-multiplicity``: keys ``X`` repeated ``multiplicities`` times, written out and merged.

    Parameters
    ----------
    X : array_like, shape (m, d)
        Queries and (distinct) keys.
    multiplicities : array_like of int, shape (m,)
    beta, eps : float

    Returns
    -------
    table : pandas.DataFrame
        Two rows (all copies; merged with log-weights): ``instance, keys`` and the bracket.
    column_change : float
        :math:`\max|A_\text{merged} - \text{column sums of } A_\text{full}|` (rounding only).
    """
    X = np.asarray(X, dtype=np.float64)
    K_full = np.repeat(X, np.asarray(multiplicities), axis=0)
    K_merged, logw, inverse = merge_duplicate_keys(K_full)
    A_full = softmax_attention(X, K_full, beta=beta)
    A_merged = softmax_attention(X, K_merged, beta=beta, log_weights=logw)
    A_summed = np.zeros_like(A_merged)
    np.add.at(A_summed.T, inverse, A_full.T)
    table = pd.DataFrame([
        {"instance": "all copies", "keys": A_full.shape[1], **rank_bracket(A_full, eps, effort=EFFORT).as_dict()},
        {"instance": "merged with log-weights", "keys": A_merged.shape[1],
         **rank_bracket(A_merged, eps, effort=EFFORT).as_dict()},
    ])
    return table, float(np.abs(A_merged - A_summed).max())


def spectral_contrast_table(matrices: dict, split_factors, eps: float) -> pd.DataFrame:
    r"""Spectral numerical rank against the certified bracket when every key is split.

    Parameters
    ----------
    matrices : dict
        ``name -> A``.
    split_factors : iterable of int
        Copies per key (:func:`attnrank_lite.engine.examples.split_keys`).
    eps : float

    Returns
    -------
    pandas.DataFrame
        Columns ``matrix, copies per key, keys, spectral numerical rank, lower, upper,
        verified``.
    """
    rows = []
    for c in split_factors:
        for name, A0 in matrices.items():
            A = split_keys(A0, c)
            b = rank_bracket(A, eps, effort=EFFORT)
            rows.append({"matrix": name, "copies per key": c, "keys": A.shape[1],
                         "spectral numerical rank": spectral_numerical_rank(A, eps),
                         "lower": b.lower, "upper": b.upper, "verified": b.verify(A, eps)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# chapter 1's report: the tables, figures and quoted numbers its cells show


def cluster_certificate(A, bracket) -> ClusterMassCertificate:
    r"""The cluster-mass certificate (``prop-cluster-mass``) chapter 1 draws for ``bracket``.

    The bracket's own lower certificate when it is a cluster-mass one; otherwise (its lower end
    came from another kind, e.g. the Frobenius tail at small eps, or eps = 0) the greedy
    :func:`~attnrank_lite.engine.lower.cluster_mass_lower_bound` of ``A`` at the bracket's eps,
    which certifies a lower end of its own (at most the bracket's).

    Returns
    -------
    ClusterMassCertificate
        Verified on ``A`` at ``bracket.eps`` (empty when eps >= 1).
    """
    cert = bracket.lower_certificate
    if isinstance(cert, ClusterMassCertificate):
        return cert
    return cluster_mass_lower_bound(A, bracket.eps)


def certificate_rows_table(A, cert: ClusterMassCertificate) -> pd.DataFrame:
    r"""One row per selected query of a cluster-mass certificate: ``row``, ``own_mass``
    (:math:`M_{aa}`, its attention on its own key group) and ``group_size``."""
    own = np.diag(cert.mass_matrix(A)) if cert.rank else np.zeros(0)
    return pd.DataFrame({"row": list(cert.rows), "own_mass": own,
                         "group_size": [len(g) for g in cert.groups]})


def certificate_figure(A, cert: ClusterMassCertificate, title: str = "", max_groups: int = 400):
    r"""The matrix ``A`` in grey with the certificate's rows and key groups marked: each coloured
    run of dots is one selected query's private key group. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.imshow(A, cmap="Greys", aspect="auto", interpolation="nearest",
              vmax=np.quantile(A, 0.995) if A.size > 1 else None)
    for a, (i, g) in enumerate(zip(list(cert.rows)[:max_groups], list(cert.groups)[:max_groups])):
        ax.plot(g, [i] * len(g), ".", ms=2, color=f"C{a % 10}")
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    ax.set_title(title)
    return fig


def tamper_table(A, bracket, cert: ClusterMassCertificate, eps: float) -> pd.DataFrame:
    r"""``verify`` on the found certificates and on deliberately broken copies
    (:func:`~attnrank_lite.engine.examples.tampered_copies`): one entry of ``L`` changed, group 0
    made to overlap group 1 (``None`` when the cluster-mass certificate has fewer than 2 groups)."""
    bad_upper, bad_lower = tampered_copies(bracket, lower=cert)
    rows = [("upper B = LR (as found)", bracket.upper_certificate.verify(A, eps)),
            ("upper, one entry of L changed", bad_upper.verify(A, eps)),
            ("lower cluster-mass (as found)", cert.verify(A, eps)),
            ("lower, group 0 overlapping group 1",
             None if bad_lower is None else bad_lower.verify(A, eps))]
    return pd.DataFrame(rows, columns=["certificate", "verify"])


def l1_family_check(A, eps: float) -> tuple[dict, dict, str]:
    r"""The SVD family against the rows fitted in :math:`\ell_1` (chapter 1, "Fitting the rows").

    Returns
    -------
    numbers : dict
        Glue strings ``c1_l1_k`` (the projected certificate's rank), ``c1_l1_proj`` and
        ``c1_l1_fit`` (its largest row error projected and fitted), ``c1_l1_rank`` (the rank the
        :math:`\ell_1` family certifies). When no member of the SVD family meets eps (eps = 0 on a
        full-rank matrix) the certificate is :math:`B = A` itself and both errors are its own.
    checks : dict
        ``fit_not_worse`` (fitted error <= projected on the same subspace) and ``l1_verified``
        (the :math:`\ell_1` certificate verifies and has rank <= the projected one).
    message : str
        The line the chapter prints.
    """
    plain = svd_upper_bound(A, eps)
    fitted = l1_upper_bound(A, eps)
    if plain.source == "identity":  # no member of the family met eps (eps = 0): B = A, no subspace
        projected = fit = float(plain.row_errors(A)[0].max())
    else:
        same_k = l1_fit(A, plain.R.T)
        projected, fit = float(same_k.max_projected), float(same_k.max_error)
    verified = fitted.verify(A, eps)
    numbers = {"c1_l1_k": str(plain.rank), "c1_l1_proj": f"{projected:.3f}",
               "c1_l1_fit": f"{fit:.3f}", "c1_l1_rank": str(fitted.rank)}
    checks = {"fit_not_worse": bool(fit <= projected),
              "l1_verified": bool(verified and fitted.rank <= plain.rank)}
    message = (f"SVD family: rank {plain.rank} ({plain.source}), max row error {projected:.3f} "
               f"projected, {fit:.3f} fitted in l1 | l1 family: rank {fitted.rank}, verify: {verified}")
    return numbers, checks, message


def invariance_table(X, beta: float, eps: float, rng) -> tuple[pd.DataFrame, float, tuple[int, int]]:
    r"""``prop-invariances`` on the self-attention instance of the points ``X``.

    Brackets of :math:`A`, of :math:`A` with rows and columns permuted (``rng``) and of every
    other row of :math:`A`; the largest change of the row softmax when a random row-scalar
    shift :math:`c\mathbf 1^\top` is added to the logits; the intersection of the first two
    brackets (one rank, two certificates).

    Returns
    -------
    table : pandas.DataFrame
        Columns ``instance`` and the bracket's.
    shift_change : float
    combined : (int, int)
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    perm_r, perm_c = rng.permutation(n), rng.permutation(n)
    shift = rng.normal(size=(n, 1)) * 50
    L = beta * X @ X.T
    A = row_softmax(L)
    cases = {"original": A, "rows and columns permuted": A[perm_r][:, perm_c],
             "every other row deleted": A[::2]}
    table = pd.DataFrame([{"instance": k, **rank_bracket(M, eps, effort=EFFORT).as_dict()} for k, M in cases.items()])
    shift_change = float(np.abs(row_softmax(L + shift) - A).max())
    return table, shift_change, intersect(table["lower"].iloc[:2], table["upper"].iloc[:2])


def eps_sweep_figure(sweep: pd.DataFrame, title: str = ""):
    """The certified bracket against eps (log rank axis), from :func:`eps_sweep_table`."""
    import matplotlib.pyplot as plt

    from .plots import plot_bracket_band

    fig, ax = plt.subplots(figsize=(5, 3.2))
    plot_bracket_band(ax, sweep["eps"], sweep["lower"], sweep["upper"], label=r"rank$_\varepsilon$")
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(r"rank$_\varepsilon$ (certified bracket)")
    ax.legend()
    ax.set_yscale("log")
    ax.set_title(title)
    return fig


def spectral_contrast_figure(contrast: pd.DataFrame):
    """Bracket bands and spectral counts against copies per key, from
    :func:`spectral_contrast_table` (a spectral count of 0 is drawn at 0.8 on the log axis)."""
    import matplotlib.pyplot as plt

    from .plots import plot_bracket_band

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for name, g in contrast.groupby("matrix"):
        cc = g["copies per key"]
        plot_bracket_band(ax, cc, g["lower"], g["upper"], label=rf"{name}: rank$_\varepsilon$")
        ax.plot(cc, g["spectral numerical rank"].clip(lower=0.8), "o--", label=f"{name}: spectral")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("copies per key")
    ax.set_ylabel("rank")
    ax.legend(fontsize=7)
    return fig


def _pair(b) -> str:
    return f"[{b[0]}, {b[1]}]"


def key_numbers(invariances: pd.DataFrame, combined, shift_change: float, sweep: pd.DataFrame,
                comp_combined, contrast: pd.DataFrame, matrix: str = "circle") -> dict:
    r"""The numbers chapter 1's prose quotes, as glue strings, from the run's own tables.

    ``contrast`` rows of ``matrix`` give the spectral counts at the fewest and most copies per
    key and the intersection of their brackets (``c1_split_combined``).
    """
    rows = contrast[contrast.matrix == matrix].sort_values("copies per key")
    split = intersect(rows["lower"], rows["upper"])
    return {
        "c1_orig_lower": str(invariances["lower"].iloc[0]),
        "c1_perm_lower": str(invariances["lower"].iloc[1]),
        "c1_combined": _pair(combined),
        "c1_shift_change": f"{shift_change:.1e}",
        "c1_frob_range": f"{sweep.frobenius_tail.min()} to {sweep.frobenius_tail.max()}",
        "c1_lower_range": f"{sweep.lower.min()} to {sweep.lower.max()}",
        "c1_comp_combined": _pair(comp_combined),
        "c1_spec_first": str(rows["spectral numerical rank"].iloc[0]),
        "c1_spec_last": str(rows["spectral numerical rank"].iloc[-1]),
        "c1_c_last": str(rows["copies per key"].iloc[-1]),
        "c1_split_combined": _pair(split),
    }
