r"""Bracket sweeps for the geometric laws (chapters 2 and 3): instances, brackets, slopes.

Every number produced here is a certified bracket from :func:`attnrank_lite.engine.bracket.rank_brackets`,
re-verified on its matrix (column ``verified``).
"""
from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd

from ..engine.assemble import CostLimits
from ..engine.attention import softmax_attention
from ..engine.bracket import rank_brackets
from ..engine.parallel import run_tasks
from .fitting import fit_loglog_slope
from .geometry import (
    clustered_sphere,
    gaussian_ball,
    log_effective_token_count,
    random_sphere,
    separated_packing,
    well_spread_sphere,
)

__all__ = [
    "ball_instance",
    "bracket_rows",
    "bracket_sweep",
    "configuration_sweep",
    "slope_table",
    "point_sweep",
    "point_task_memory",
    "sphere_configuration",
    "spherical_instance",
]

CONFIGURATIONS = ("well-spread", "packing", "random", "clustered")


def sphere_configuration(kind: str, n: int, d: int, seed: int = 0) -> np.ndarray:
    r"""A configuration of about ``n`` points on :math:`S^{d-1}`.

    ``well-spread``: the book's one well-spread set, exactly ``n`` points of
    :func:`~attnrank_lite.laws.geometry.well_spread_sphere` (equispaced circle for d = 2,
    Fibonacci sphere for d = 3, a repelled lattice or repelled random points for d >= 4).
    ``packing``: greedy maximal separated packing (any d), spacing set from the volume ratio
    so that the count is near ``n``. ``random``: uniform. ``clustered``: 8 clusters of
    angular spread 0.15.

    Returns
    -------
    X : ndarray, shape (n', d)
        ``n' = n`` except for packings (whose size is set by the spacing).
    """
    if kind not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {kind!r}; allowed: {', '.join(CONFIGURATIONS)}")
    if kind == "well-spread":
        return well_spread_sphere(n, d, seed=seed)
    if kind == "packing":
        from math import gamma, pi

        from .geometry import sphere_area

        # n caps of chordal radius delta/2 cover a fraction ~0.7 of the sphere (greedy packing)
        area = sphere_area(d)
        ball = pi ** ((d - 1) / 2) / gamma((d + 1) / 2)
        delta = 2 * (0.7 * area / (n * ball)) ** (1 / (d - 1))
        return separated_packing(d, min(delta, 2.0), seed=seed)
    if kind == "random":
        return random_sphere(n, d, seed=seed)
    return clustered_sphere(n, d, clusters=8, spread=0.15, seed=seed)


def point_task_memory(n: int, d: int, beta: float, verify_dense_limit: int = 4096) -> tuple[float, str]:
    r"""Estimated peak bytes of one ``beta`` of :func:`point_sweep` on ``n`` points of
    :math:`S^{d-1}`, and what they hold (checked against a worker's memory before submission).

    Streamed brackets hold the harmonic basis (``n x N(d, <= L)``, about
    :math:`12(1+\beta)^{(d-1)/2}` columns, at most ``n``) and row blocks, three copies (the
    estimate of chapter 2, measured 3.3 GB at n = 20,000, d = 4, beta = 64); up to
    ``verify_dense_limit`` points the dense re-verification holds six ``n x n`` arrays.
    """
    cols = min(n, 12 * (1 + beta) ** ((d - 1) / 2))
    streamed = 8.0 * 3 * n * (cols + 2048)
    dense = 8.0 * 6 * n * n if n <= verify_dense_limit else 0.0
    if dense > streamed:
        return dense, f"the dense re-verification ({n:,} x {n:,})"
    return streamed, f"the streamed bracket's basis and row blocks ({n:,} x {int(cols) + 2048:,})"


def _dense_need(n: int) -> tuple[float, str]:
    """Six ``n x n`` float64 arrays: a dense bracket and its verification."""
    return 8.0 * 6 * n * n, f"a dense {n:,} x {n:,} attention matrix and its bracket"


def spherical_instance(X: np.ndarray, beta: float) -> np.ndarray:
    r"""Spherical self-attention :math:`A = \mathrm{rowsoftmax}(\beta XX^\top)`, shape (n, n)."""
    return softmax_attention(X, X, beta)


def ball_instance(d: int, beta: float, spacing_factor: float, weighted: bool = True):
    r"""Gaussian-ball instance: ``(A, n_grid, log n_eff)``.

    ``weighted=True`` uses the Gaussian key log-weights (A is the row-normalised Gaussian kernel
    :math:`e^{-\beta|x_i-x_j|^2/2}`); ``weighted=False`` the same grid with uniform multiplicities.
    """
    X, lw = gaussian_ball(d, beta, spacing_factor=spacing_factor)
    A = softmax_attention(X, X, beta, lw if weighted else None)
    return A, X.shape[0], (log_effective_token_count(lw) if weighted else float(np.log(X.shape[0])))


#: the best-of rule of every sweep here (``effort`` of :func:`attnrank_lite.engine.assemble.assemble_brackets`):
#: ``"max"``, every certificate family within the cost limits, whatever it gains. The chapters'
#: tables and the stored sweep are these rows; the engine's cost-aware default (``"auto"``)
#: would leave out the SVD and l1-fitted families where they narrow a bracket by less than
#: their cost (issue 23).
EFFORT = "max"


def _limits(l1_limit=None, **kw) -> CostLimits:
    """The engine's cost limits with the l1-fitted family's limit ``l1_limit`` (None: the
    engine default :data:`attnrank_lite.engine.assemble.L1_LIMIT`; 0: the family is off)."""
    if l1_limit is not None:
        kw["l1"] = int(l1_limit)
    return CostLimits(**kw)


def certificate_stem(**labels) -> str:
    """A file stem naming one row group of a table, e.g. ``beta-16`` or ``configuration-random_beta-8``.

    Values are written with ``:g`` (numbers) or as text; characters other than letters, digits,
    ``.``, ``_`` and ``-`` become ``-``.
    """
    parts = [f"{k}-{v:g}" if isinstance(v, (float, np.floating)) else f"{k}-{v}" for k, v in labels.items()]
    return re.sub(r"[^A-Za-z0-9._-]", "-", "_".join(parts)) or "instance"


def save_certificates(folder, stem: str, brackets, A=None, recipe=None) -> str | None:
    """Write the brackets of one instance to ``folder/stem.npz`` (``RankBracket`` objects unchanged).

    The file is :func:`attnrank_lite.engine.certificate_io.save_brackets`'s format: the instance
    as its ``recipe`` (``dict(Q=..., beta=..., K=..., log_weights=...)``, a few kilobytes) when
    one is given, else the matrix ``A`` itself. ``folder=None`` writes nothing (returns None), and
    a folder whose byte budget is spent writes nothing more
    (:func:`attnrank_lite.engine.certificate_io.save_brackets_in_folder`).
    """
    if folder is None:
        return None
    from ..engine.certificate_io import save_brackets_in_folder

    return save_brackets_in_folder(folder, stem, list(brackets), **(recipe if recipe is not None else {"A": A}))


def bracket_rows(A: np.ndarray, eps_values, points=None, l1_limit=None, certificates=None, recipe=None,
                 stem: str | None = None, **info) -> list[dict]:
    """Brackets of ``A`` at every eps (one shared factorisation), verified, as table rows.

    ``points`` (the queries = keys as points) adds the Neumann lower and harmonic upper
    families (:func:`attnrank_lite.engine.bracket.rank_brackets`). No timings: the same parameters give
    byte-identical tables (chapter times are in the run record; engine speed is measured in
    ``benchmarks/``). ``l1_limit`` caps the l1-fitted upper family (``n * m * upper``; 0: off).
    ``certificates`` (a folder) also writes the brackets as one certificate file
    ``stem.npz`` there (:func:`save_certificates`; ``recipe`` the instance's recipe, else ``A``
    is stored); the rows are the same with or without it.
    """
    brackets = rank_brackets(A, eps_values, points=points, limits=_limits(l1_limit), effort=EFFORT)
    save_certificates(certificates, stem or certificate_stem(**info), brackets, A=A, recipe=recipe)
    return [{**info, "n": A.shape[0], "eps": b.eps, "lower": b.lower, "upper": b.upper,
             "lower_kind": b.lower_kind, "upper_source": b.upper_certificate.source,
             "verified": bool(b.verify(A, b.eps))}
            for b in brackets]


def point_sweep(X, betas, eps_values, desc: str = "", verify_dense_limit: int = 4096, svd="auto",
                executor=None, l1_limit=None, certificates=None, **info) -> pd.DataFrame:
    r"""Brackets of the self-attention of the points ``X`` (on the unit sphere) over ``betas``,
    from :func:`attnrank_lite.engine.streaming.point_brackets` (the matrix is never stored).

    One :class:`~attnrank_lite.engine.harmonic.HarmonicBasis` serves every ``beta``. Column
    ``verified``: the certificates were verified on the row blocks generated from the points
    (always) and, when ``n <= verify_dense_limit``, rechecked by ``verify`` on the materialised
    matrix. Up to that size the assembler also copies the matrix for the greedy cluster-mass
    search (its ``CostLimits.materialise``; dense packings at high beta). ``degree`` is the
    harmonic degree ``L`` of the upper certificate (``None`` if the upper side came from another
    family). ``executor`` (a :class:`concurrent.futures.Executor`) runs one task per ``beta``
    (:func:`attnrank_lite.engine.parallel.run_tasks`; each worker rebuilds the basis from ``X``);
    ``None`` is the sequential loop. The brackets are the same either way. ``l1_limit``: the
    l1-fitted family's cost limit (``n * m * upper``; None: the engine default; 0: off).
    ``certificates`` (a folder): each beta's brackets also go to a certificate file
    ``beta-<beta>.npz`` there, with the recipe ``(X, beta)`` as instance (the rows are the same).

    Returns
    -------
    pandas.DataFrame
        One row per (beta, eps): beta, info columns, n, eps, lower, upper, lower_kind,
        upper_source, degree, verified.
    """
    from ..engine.harmonic import HarmonicBasis

    X = np.asarray(X, dtype=np.float64)
    basis = HarmonicBasis(X) if executor is None else None  # a worker builds its own from X
    tasks = [(X, beta, tuple(eps_values), basis, verify_dense_limit, svd, info, l1_limit, False, certificates)
             for beta in betas]
    n, d = X.shape
    parts = run_tasks(_point_task, tasks, executor, desc=desc or "beta",
                      need=lambda X, beta, *_: point_task_memory(n, d, beta, verify_dense_limit),
                      label=lambda t: f"beta={t[1]:g}", cost=lambda X, beta, *_: beta)
    return pd.DataFrame([row for part in parts for row in part])


def _point_task(X, beta, eps_values, basis, verify_dense_limit, svd, info, l1_limit=None,
                keep_brackets=False, certificates=None) -> list[dict]:
    """Rows of :func:`point_sweep` for one ``beta`` (a task: the basis is rebuilt when None);
    ``keep_brackets``: each row also holds its :class:`RankBracket` under ``"bracket"``;
    ``certificates``: a folder the brackets are also saved into as files (:func:`save_certificates`)."""
    from ..engine.harmonic import HarmonicBasis, HarmonicCertificate
    from ..engine.streaming import point_brackets

    basis = HarmonicBasis(X) if basis is None else basis
    limits = _limits(l1_limit, materialise=max(CostLimits().materialise, verify_dense_limit ** 2))
    bs = point_brackets(X, beta, eps_values, basis=basis, svd=svd, limits=limits, effort=EFFORT)
    save_certificates(certificates, certificate_stem(beta=float(beta)), bs, recipe={"Q": X, "beta": beta})
    A = softmax_attention(X, X, beta, block=512) if X.shape[0] <= verify_dense_limit else None
    return [{"beta": beta, **info, "n": X.shape[0], "eps": b.eps, "lower": b.lower,
             "upper": b.upper, "lower_kind": b.lower_kind,
             "upper_source": b.upper_certificate.source,
             "degree": (b.upper_certificate.degree
                        if isinstance(b.upper_certificate, HarmonicCertificate) else None),
             "verified": True if A is None else bool(b.verify(A, b.eps)),
             **({"bracket": b} if keep_brackets else {})}
            for b in bs]


def bracket_sweep(make, values, eps_values, key: str = "beta", desc: str = "", points=None,
                  executor=None, l1_limit=None, certificates=None, recipe=None, **info) -> pd.DataFrame:
    """Brackets of ``make(v)`` for every ``v`` in ``values`` and every eps.

    Parameters
    ----------
    make : callable
        ``make(v) -> A`` (an ndarray) or ``(A, extra_dict)``.
    values : sequence
    eps_values : sequence of float
    key : str
        Column name for ``v``.
    points : array_like, optional
        The points of every instance (rows of ``A``; self-attention keys on the sphere): adds
        the Neumann lower and harmonic upper families.
    executor : concurrent.futures.Executor, optional
        Runs one task per value (:func:`attnrank_lite.engine.parallel.run_tasks`); ``make`` then
        travels to the workers (Dask pickles closures with cloudpickle; a process pool needs a
        module-level ``make``). ``None``: the sequential loop.
    l1_limit : int, optional
        Cost limit of the l1-fitted upper family (see :func:`bracket_rows`).
    certificates : str or os.PathLike, optional
        A folder: each value's brackets also go to a certificate file ``<key>-<v>.npz`` there
        (:func:`save_certificates`). The rows are the same with or without it.
    recipe : callable, optional
        ``recipe(v) -> dict(Q=..., beta=..., K=..., log_weights=...)``, the instance of value
        ``v`` as a recipe for its certificate file; default ``make.recipe`` when ``make`` has
        one (:func:`attnrank_lite.laws.ball_law.ball_maker`), else the file stores the matrix.

    Returns
    -------
    pandas.DataFrame
        One row per (value, eps): ``key``, info columns, n, eps, lower, upper, lower_kind,
        upper_source, verified.
    """
    recipe = getattr(make, "recipe", None) if recipe is None else recipe
    tasks = [(make, v, tuple(eps_values), points, key, l1_limit, info, certificates,
              None if recipe is None or certificates is None else recipe(v)) for v in values]
    need = None if points is None else (lambda *t: _dense_need(len(points)))
    parts = run_tasks(_bracket_task, tasks, executor, desc=desc or key, need=need,
                      label=lambda t: f"{key}={t[1]!r}")
    return pd.DataFrame([row for part in parts for row in part])


def _bracket_task(make, v, eps_values, points, key, l1_limit, info, certificates=None,
                  recipe=None) -> list[dict]:
    """Rows of :func:`bracket_sweep` for one value ``v`` (a task)."""
    out = make(v)
    A, extra = (out if isinstance(out, tuple) else (out, {}))
    return bracket_rows(A, eps_values, points=points, l1_limit=l1_limit, certificates=certificates,
                        recipe=recipe, stem=certificate_stem(**{key: v}), **{key: v}, **info, **extra)


def slope_table(df: pd.DataFrame, key: str = "beta", by=("eps",), level: float = 0.95,
                reference: float | None = None) -> pd.DataFrame:
    """Fitted log-log slopes of the lower and upper ends against ``key``, per group, unjudged.

    No slope table of the book uses it: every one is judged by the book's one rule,
    :func:`attnrank_lite.laws.verdicts.judged_slope_table` (capped rows left out, a verdict
    column). It stays for readers' scripts.

    Returns
    -------
    pandas.DataFrame
        Columns: the ``by`` columns, end ("lower"/"upper"), slope, ci_low, ci_high, points,
        key range, and ``reference`` (the law's exponent) when given.
    """
    out = []
    for keys, g in df.groupby(list(by)):
        keys = keys if isinstance(keys, tuple) else (keys,)
        g = g.sort_values(key)
        for end in ("lower", "upper"):
            ok = g[end] > 0
            fit = fit_loglog_slope(g.loc[ok, key], g.loc[ok, end], level=level)
            row = dict(zip(by, keys))
            row.update(end=end, slope=fit.slope, ci_low=fit.ci_low, ci_high=fit.ci_high,
                       points=fit.npoints, **{f"{key}_min": g[key].min(), f"{key}_max": g[key].max()})
            if reference is not None:
                row["reference"] = reference
            out.append(row)
    return pd.DataFrame(out)


def configuration_sweep(n: int, d: int, betas, eps_values, seed: int = 0,
                        kinds=CONFIGURATIONS, executor=None, l1_limit=None, certificates=None) -> pd.DataFrame:
    """Brackets of every configuration kind (:func:`sphere_configuration`) over ``betas``.

    Every kind gets the same engine: :func:`bracket_sweep` with ``points=X`` (geometric
    certificates in the best-of next to the dense ones). With an ``executor``, one task per
    (kind, beta) rebuilds its points from ``(kind, n, d, seed)``; the rows are the same.
    ``l1_limit``: the l1-fitted family's cost limit (:func:`bracket_rows`). ``certificates``
    (a folder): one certificate file per (kind, beta) there, the recipe ``(X, beta)`` its instance.

    Returns
    -------
    pandas.DataFrame
        :func:`bracket_sweep` rows with a ``configuration`` column, kinds in order.
    """
    if executor is not None:
        tasks = [(kind, n, d, seed, beta, tuple(eps_values), l1_limit, certificates)
                 for kind in kinds for beta in betas]
        parts = run_tasks(_configuration_task, tasks, executor, desc="configurations",
                          need=lambda *t: _dense_need(n), label=lambda t: f"{t[0]} beta={t[4]:g}",
                          cost=lambda *t: t[4])
        return pd.DataFrame([row for part in parts for row in part])
    parts = []
    for kind in kinds:
        X = sphere_configuration(kind, n, d, seed=seed)
        parts.append(bracket_sweep(lambda b, X=X: spherical_instance(X, b), betas,
                                   eps_values, desc=kind, points=X, l1_limit=l1_limit,
                                   certificates=None if certificates is None else os.path.join(certificates, kind),
                                   recipe=lambda b, X=X: {"Q": X, "beta": b}, configuration=kind))
    return pd.concat(parts, ignore_index=True)


def _configuration_task(kind, n, d, seed, beta, eps_values, l1_limit=None, certificates=None) -> list[dict]:
    """Rows of :func:`configuration_sweep` for one (kind, beta): the points rebuilt from the seed."""
    X = sphere_configuration(kind, n, d, seed=seed)
    return bracket_rows(spherical_instance(X, beta), eps_values, points=X, l1_limit=l1_limit,
                        certificates=None if certificates is None else os.path.join(certificates, kind),
                        recipe={"Q": X, "beta": beta}, stem=certificate_stem(beta=beta),
                        beta=beta, configuration=kind)
