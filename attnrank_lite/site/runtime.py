"""How long a chapter's parameters will run (its spec's ``runtime(values)``: one :class:`Cost` per
costly step, times the constants of :data:`MODEL_PATH` fitted by ``benchmarks/fit_runtime.py``:
CPU seconds on the reference machine), and the refusal of runs above ``--max-minutes``."""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from .spec import ParameterError

__all__ = ["Cost", "RuntimeEstimate", "TooSlow", "DEFAULT_MAX_MINUTES", "MODEL_PATH", "load_model",
           "terms", "estimate_runtime", "check_runtime", "probe_seconds", "record_ratio", "format_minutes"]

#: ``--max-minutes`` when not given
DEFAULT_MAX_MINUTES = 60.0
#: the model's constants (``benchmarks/fit_runtime.py`` writes them)
MODEL_PATH = Path(__file__).with_name("data") / "runtime_model.json"


class TooSlow(ParameterError):
    """The parameters' estimated run time exceeds ``--max-minutes``."""


@dataclass(frozen=True)
class Cost:
    """``work`` units of the model's ``term``, driven by the parameter ``param``; ``what`` names the step."""

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
    """``startup_seconds``, ``probe_seconds``, ``factor`` and ``chapters``: key -> term -> seconds per unit."""
    return json.loads(Path(path).read_text())


def terms(spec, values: dict, model: dict | None = None) -> list[tuple[float, Cost]]:
    """Each costly step with its seconds: its work times its term's coefficient in ``model`` (none for a
    chapter that declares no ``runtime``)."""
    if spec.runtime is None:
        return []
    coef = (model or load_model())["chapters"][spec.key]
    return [(coef[c.term] * c.work, c) for c in spec.runtime(values)]


def estimate_runtime(spec, values: dict, model: dict | None = None) -> RuntimeEstimate:
    """The run time of a chapter with these (validated) parameters: start-up plus its steps."""
    model = model or load_model()
    steps = terms(spec, values, model)
    return RuntimeEstimate(model["startup_seconds"] + sum(s for s, _ in steps), model["factor"],
                           max(steps, key=lambda t: t[0], default=(0, None))[1])


def probe_seconds() -> float:
    """CPU seconds of twenty 256 x 256 float64 products on one BLAS thread, best of five (the unit
    in which run times are compared across machines)."""
    import time
    import timeit

    import numpy as np
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).standard_normal((256, 256))
    with threadpool_limits(1):
        return min(timeit.repeat(lambda: a @ a, timer=time.process_time, number=20, repeat=5))


def record_ratio(record: dict, probe: float, model: dict | None = None) -> float:
    """A run record's CPU seconds over its estimate rescaled to a machine of :func:`probe_seconds` ``probe``."""
    from .chapters import get_chapter

    model = model or load_model()
    spec = get_chapter(record["chapter"])
    est = estimate_runtime(spec, spec.validate(record["parameters"]), model).seconds
    return record["cpu_seconds"] / (est * probe / model["probe_seconds"])


def format_minutes(est: RuntimeEstimate) -> str:
    """``about 4 min on the reference machine (within a factor of 3)`` (``45 s``, ``31 h``, ``4.2 days``)."""
    s = est.seconds
    when = (f"{s:.0f} s" if s < 90 else f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h" if s < 172800
            else f"{s / 86400:.1f} days")
    return f"about {when} on the reference machine (within a factor of {est.error:g})"


def check_runtime(spec, values: dict, max_minutes: float | None = DEFAULT_MAX_MINUTES) -> RuntimeEstimate:
    """The estimate; :class:`TooSlow` (one line naming the parameter behind the largest step) above
    ``max_minutes`` (0 or None: no limit)."""
    est = estimate_runtime(spec, values)
    if max_minutes and est.seconds > 60.0 * max_minutes:
        t = est.term
        driver = f"; parameter {t.param!r} drives it ({t.what}): lower {t.param!r}" if t else ""
        raise TooSlow(
            f"{spec.key}: estimated run time {format_minutes(est)} is above --max-minutes {max_minutes:g}"
            f"{driver}, or rerun with a larger --max-minutes (--max-minutes 0: no limit) to run it anyway")
    return est
