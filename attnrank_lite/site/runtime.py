"""How long a chapter's parameters will run, and the refusal of runs far beyond a limit.

A chapter spec declares ``runtime=f`` with ``f(values) -> iterable of Cost``: the work of each
costly step counted in the parameters' terms (``n_trials * n_circle**2`` products, the ``n**3``
of a factorisation, ...). The constants are in one data file, :data:`MODEL_PATH`, written by
``benchmarks/fit_runtime.py`` from measured run records: each term's CPU seconds per unit of work,
a start-up cost, the :func:`probe_seconds` of the machine they were measured on and the
``factor`` within which every fitted run matched its estimate. The estimate is CPU seconds on
that machine (its wall time when idle). ``run`` and ``build`` print it before the first cell and
refuse one above ``--max-minutes`` (:func:`check_runtime`) in one line naming the parameter behind
the largest term; :func:`record_ratio` compares a run record with its estimate, rescaled by the
probes of the two machines (the built site's test fails when a chapter ran outside the factor).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from .spec import ParameterError

__all__ = ["Cost", "RuntimeEstimate", "TooSlow", "DEFAULT_MAX_MINUTES", "MODEL_PATH", "load_model",
           "terms", "estimate_runtime", "check_runtime", "probe_seconds", "record_ratio", "format_duration",
           "format_minutes"]

#: ``--max-minutes`` when not given
DEFAULT_MAX_MINUTES = 60.0
#: the model's constants (``benchmarks/fit_runtime.py`` writes them)
MODEL_PATH = Path(__file__).with_name("data") / "runtime_model.json"


class TooSlow(ParameterError):
    """The parameters' estimated run time exceeds ``--max-minutes``."""


@dataclass(frozen=True)
class Cost:
    """The work of one costly step: ``work`` units of the model's term ``term``, driven by the
    parameter ``param`` (as the user types it); ``what`` names the step for the refusal."""

    term: str
    work: float
    param: str
    what: str


@dataclass(frozen=True)
class RuntimeEstimate:
    """``seconds`` in all, within a factor ``error`` either way, and the costliest step ``term``."""

    seconds: float
    error: float
    term: Cost | None


@functools.cache
def load_model(path: Path = MODEL_PATH) -> dict:
    """The fitted model: ``startup_seconds``, ``probe_seconds``, ``factor`` and, per chapter key,
    ``{term: CPU seconds per unit of work}``."""
    return json.loads(Path(path).read_text())


def terms(spec, values: dict, model: dict | None = None) -> list[tuple[float, Cost]]:
    """Each costly step with its seconds: its work times its term's coefficient in ``model``."""
    coef = (model or load_model())["chapters"][spec.key]
    return [(coef[c.term] * c.work, c) for c in (spec.runtime or (lambda v: ()))(values)]


def estimate_runtime(spec, values: dict, model: dict | None = None) -> RuntimeEstimate:
    """The run time of a chapter with these (validated) parameters: start-up plus its steps."""
    model = model or load_model()
    steps = terms(spec, values, model)
    return RuntimeEstimate(model["startup_seconds"] + sum(s for s, _ in steps), model["factor"],
                           max(steps, key=lambda t: t[0], default=(0, None))[1])


def probe_seconds() -> float:
    """CPU seconds of twenty products of two 256 x 256 float64 matrices on one BLAS thread, the
    best of five: the unit in which run times are compared across machines."""
    import time

    import numpy as np
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).standard_normal((256, 256))
    best = float("inf")
    with threadpool_limits(1):
        for _ in range(5):
            t0 = time.process_time()
            for _ in range(20):
                a @ a
            best = min(best, time.process_time() - t0)
    return best


def record_ratio(record: dict, probe: float, model: dict | None = None) -> float:
    """A run record's CPU seconds over its estimate on a machine whose :func:`probe_seconds` is
    ``probe`` (the model's estimate times ``probe / model["probe_seconds"]``)."""
    from .chapters import get_chapter

    model = model or load_model()
    spec = get_chapter(record["chapter"])
    est = estimate_runtime(spec, spec.validate(record["parameters"]), model).seconds
    return record["cpu_seconds"] / (est * probe / model["probe_seconds"])


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``31 h``, ``4.2 days``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def format_minutes(est: RuntimeEstimate) -> str:
    """``about 4 min on the reference machine (within a factor of 3)``: the machine the model
    was fitted on; another machine, or a busier one, takes longer or shorter."""
    return f"about {format_duration(est.seconds)} on the reference machine (within a factor of {est.error:g})"


def check_runtime(spec, values: dict, max_minutes: float | None = DEFAULT_MAX_MINUTES) -> RuntimeEstimate:
    """Refuse parameters whose estimated run time exceeds ``max_minutes`` (0 or None: no limit).

    Raises
    ------
    TooSlow
        One line: the estimate, the limit, the parameter behind the largest step, how to go on.
    """
    est = estimate_runtime(spec, values)
    if max_minutes and est.seconds > 60.0 * max_minutes:
        t = est.term
        driver = f"; parameter {t.param!r} drives it ({t.what}): lower {t.param!r}" if t else ""
        raise TooSlow(
            f"{spec.key}: estimated run time {format_minutes(est)} is above --max-minutes {max_minutes:g}"
            f"{driver}, or rerun with a larger --max-minutes (--max-minutes 0: no limit) to run it anyway")
    return est
