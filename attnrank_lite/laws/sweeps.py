r"""Bracket sweeps of chapters 2 and 3, each bracket re-verified on its matrix; every sweep takes
``executor=`` (one task per value) and ``certificates=`` (a folder for one file per value)."""
from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd

from ..engine.assemble import CostLimits
from ..engine.attention import softmax_attention
from ..engine.bracket import rank_brackets
from ..engine.parallel import run_tasks
from .geometry import (
    ball_volume,
    clustered_sphere,
    random_sphere,
    separated_packing,
    sphere_area,
    well_spread_sphere,
)

__all__ = ["CONFIGURATIONS", "bracket_rows", "bracket_sweep", "configuration_sweep",
           "point_sweep", "point_task_memory", "sphere_configuration", "spherical_instance"]

#: the configurations of :func:`sphere_configuration`
CONFIGURATIONS = ("well-spread", "packing", "random", "clustered")


def sphere_configuration(kind: str, n: int, d: int, seed: int = 0) -> np.ndarray:
    r"""About ``n`` points on :math:`S^{d-1}`: ``well-spread`` (exactly n), ``packing`` (n caps
    cover about 0.7 of the sphere), ``random`` or ``clustered`` (8 clusters, spread 0.15)."""
    if kind not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {kind!r}; allowed: {', '.join(CONFIGURATIONS)}")
    if kind == "well-spread":
        return well_spread_sphere(n, d, seed=seed)
    if kind == "packing":
        delta = 2 * (0.7 * sphere_area(d) / (n * ball_volume(d - 1))) ** (1 / (d - 1))
        return separated_packing(d, min(delta, 2.0), seed=seed)
    if kind == "random":
        return random_sphere(n, d, seed=seed)
    return clustered_sphere(n, d, clusters=8, spread=0.15, seed=seed)


def point_task_memory(n: int, d: int, beta: float, verify_dense_limit: int = 4096) -> tuple[float, str]:
    r"""Estimated peak bytes of one ``beta`` of :func:`point_sweep`, and what: three copies of the
    basis (about :math:`12(1+\beta)^{(d-1)/2}` columns) and row blocks, or six dense ``n x n`` arrays."""
    cols = min(n, 12 * (1 + beta) ** ((d - 1) / 2))
    streamed = 8.0 * 3 * n * (cols + 2048)
    dense = 8.0 * 6 * n * n if n <= verify_dense_limit else 0.0
    if dense > streamed:
        return dense, f"the dense re-verification ({n:,} x {n:,})"
    return streamed, f"the streamed bracket's basis and row blocks ({n:,} x {int(cols) + 2048:,})"


def _dense_need(n: int) -> tuple[float, str]:
    return 8.0 * 6 * n * n, f"a dense {n:,} x {n:,} attention matrix and its bracket"


def spherical_instance(X: np.ndarray, beta: float) -> np.ndarray:
    r"""Spherical self-attention :math:`A = \mathrm{rowsoftmax}(\beta XX^\top)`, shape (n, n)."""
    return softmax_attention(X, X, beta)


#: the ``effort`` of every sweep here: every certificate family within the cost limits
EFFORT = "max"


def _limits(l1_limit=None, **kw) -> CostLimits:
    """The engine's cost limits with the l1-fitted family's ``l1_limit`` (None: default; 0: off)."""
    if l1_limit is not None:
        kw["l1"] = int(l1_limit)
    return CostLimits(**kw)


def certificate_stem(**labels) -> str:
    """A file stem naming one row group, e.g. ``configuration-random_beta-8`` (unsafe characters ``-``)."""
    parts = [f"{k}-{v:g}" if isinstance(v, (float, np.floating)) else f"{k}-{v}" for k, v in labels.items()]
    return re.sub(r"[^A-Za-z0-9._-]", "-", "_".join(parts)) or "instance"


def save_certificates(folder, stem: str, brackets, A=None, recipe=None) -> str | None:
    """Write the brackets of one instance (its ``recipe`` if given, else ``A``) to
    ``folder/stem.npz``; ``folder=None``, or a folder whose byte budget is spent, writes nothing."""
    if folder is None:
        return None
    from ..engine.certificate_io import save_brackets_in_folder

    return save_brackets_in_folder(folder, stem, list(brackets), **(recipe if recipe is not None else {"A": A}))


def bracket_rows(A: np.ndarray, eps_values, points=None, l1_limit=None, certificates=None, recipe=None,
                 stem: str | None = None, **info) -> list[dict]:
    """Verified brackets of ``A`` at every eps as table rows (no timings); ``points`` (queries =
    keys) adds the Neumann lower and harmonic upper families; ``certificates``: a folder."""
    brackets = rank_brackets(A, eps_values, points=points, limits=_limits(l1_limit), effort=EFFORT)
    save_certificates(certificates, stem or certificate_stem(**info), brackets, A=A, recipe=recipe)
    return [{**info, "n": A.shape[0], "eps": b.eps, "lower": b.lower, "upper": b.upper,
             "lower_kind": b.lower_kind, "upper_source": b.upper_certificate.source,
             "verified": bool(b.verify(A, b.eps))}
            for b in brackets]


def point_sweep(X, betas, eps_values, desc: str = "", verify_dense_limit: int = 4096, svd="auto",
                executor=None, l1_limit=None, certificates=None, **info) -> pd.DataFrame:
    r"""Streamed brackets of the self-attention of unit rows ``X`` over ``betas`` (``A`` never
    stored): rows as :func:`bracket_rows`' with ``degree``, verified on row blocks (and up to
    ``verify_dense_limit`` points on the dense matrix)."""
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
                keep_brackets=False, certificates=None, right_inverse: int = 0) -> list[dict]:
    """Rows of :func:`point_sweep` for one ``beta``; ``keep_brackets``: with ``"bracket"``;
    ``right_inverse``: the engine's ``CostLimits.right_inverse`` (0: the family off)."""
    from ..engine.harmonic import HarmonicBasis, HarmonicCertificate
    from ..engine.streaming import point_brackets

    basis = HarmonicBasis(X) if basis is None else basis
    limits = _limits(l1_limit, materialise=max(CostLimits().materialise, verify_dense_limit ** 2),
                     right_inverse=right_inverse)
    bs = point_brackets(X, beta, eps_values, basis=basis, svd=svd, limits=limits, effort=EFFORT)
    save_certificates(certificates, certificate_stem(beta=float(beta)), bs, recipe={"Q": X, "beta": beta})
    A = softmax_attention(X, X, beta, block=512) if X.shape[0] <= verify_dense_limit else None
    return [{"beta": beta, **info, "n": X.shape[0], "eps": b.eps, "lower": b.lower,
             "upper": b.upper, "lower_kind": b.lower_kind,
             "upper_source": b.upper_certificate.source,
             "degree": (b.upper_certificate.degree if isinstance(b.upper_certificate, HarmonicCertificate) else None),
             "verified": True if A is None else bool(b.verify(A, b.eps)),
             **({"bracket": b} if keep_brackets else {})}
            for b in bs]


def bracket_sweep(make, values, eps_values, key: str = "beta", desc: str = "", points=None,
                  executor=None, l1_limit=None, certificates=None, recipe=None, **info) -> pd.DataFrame:
    """:func:`bracket_rows` of ``make(v)`` (``A`` or ``(A, extra_dict)``) for every ``v`` in
    ``values``, with the column ``key`` (``make`` travels to an ``executor``'s workers);
    ``recipe(v)``: the instance for its file (default ``make.recipe``; else ``A`` is stored)."""
    recipe = getattr(make, "recipe", None) if recipe is None else recipe
    tasks = [(make, v, tuple(eps_values), points, key, l1_limit, info, certificates,
              None if recipe is None or certificates is None else recipe(v)) for v in values]
    need = None if points is None else (lambda *t: _dense_need(len(points)))
    parts = run_tasks(_bracket_task, tasks, executor, desc=desc or key, need=need, label=lambda t: f"{key}={t[1]!r}")
    return pd.DataFrame([row for part in parts for row in part])


def _bracket_task(make, v, eps_values, points, key, l1_limit, info, certificates=None, recipe=None) -> list[dict]:
    out = make(v)
    A, extra = (out if isinstance(out, tuple) else (out, {}))
    return bracket_rows(A, eps_values, points=points, l1_limit=l1_limit, certificates=certificates,
                        recipe=recipe, stem=certificate_stem(**{key: v}), **{key: v}, **info, **extra)


def configuration_sweep(n: int, d: int, betas, eps_values, seed: int = 0,
                        kinds=CONFIGURATIONS, executor=None, l1_limit=None, certificates=None) -> pd.DataFrame:
    """Brackets of every :func:`sphere_configuration` kind over ``betas`` with ``points=X``, one
    task per (kind, beta); a ``configuration`` column; ``certificates``: one subfolder per kind."""
    tasks = [(kind, n, d, seed, beta, tuple(eps_values), l1_limit, certificates) for kind in kinds for beta in betas]
    parts = run_tasks(_configuration_task, tasks, executor, desc="configurations",
                      need=lambda *t: _dense_need(n), label=lambda t: f"{t[0]} beta={t[4]:g}",
                      cost=lambda *t: t[4])
    return pd.DataFrame([row for part in parts for row in part])


def _configuration_task(kind, n, d, seed, beta, eps_values, l1_limit=None, certificates=None) -> list[dict]:
    X = sphere_configuration(kind, n, d, seed=seed)
    return bracket_rows(spherical_instance(X, beta), eps_values, points=X, l1_limit=l1_limit,
                        certificates=None if certificates is None else os.path.join(certificates, kind),
                        recipe={"Q": X, "beta": beta}, stem=certificate_stem(beta=beta),
                        beta=beta, configuration=kind)
