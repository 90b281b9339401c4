"""How long a chapter's parameters will run, and the refusal of runs far beyond a limit.

Beside its memory estimate (:mod:`attnrank_lite.site.memory`) each chapter spec may declare
``runtime=f`` with ``f(values) -> iterable of RuntimeTerm``: the seconds each costly step of
the notebook takes, from the parameters alone, as ``constant x work`` where ``work`` counts the
step's floating-point work in the parameters' terms (``n_trials * n_circle**2`` products, the
``n**3`` of a dense factorisation, ...) and the constant is calibrated against measured runs
(the chapter module states the runs). The estimate is the sum of the terms plus a fixed start-up
cost (:data:`STARTUP_SECONDS`); the chapter's ``runtime_error`` is the factor within which the
estimate matched the calibration runs (the measured times themselves vary 2-3x with the load of
the machine). ``run`` and ``build`` print the estimate before the first cell and refuse one above
``--max-minutes`` (:func:`check_runtime`) with one line naming the parameter behind the largest
term.
"""
from __future__ import annotations

from dataclasses import dataclass

from .spec import ParameterError

__all__ = ["RuntimeTerm", "RuntimeEstimate", "TooSlow", "STARTUP_SECONDS", "DEFAULT_MAX_MINUTES",
           "scaled", "estimate_runtime", "check_runtime", "format_duration", "format_minutes", "REFERENCE_MACHINE"]

#: starting a kernel and importing numpy, pandas, matplotlib and the package (6-13 s measured on
#: a loaded 2-core machine)
STARTUP_SECONDS = 10.0
#: ``--max-minutes`` when not given
DEFAULT_MAX_MINUTES = 60.0


class TooSlow(ParameterError):
    """The parameters' estimated run time exceeds ``--max-minutes``."""


@dataclass(frozen=True)
class RuntimeTerm:
    """Estimated seconds of one step of a chapter.

    Attributes
    ----------
    seconds : float
    param : str
        The parameter that drives the step's cost, as the user types it.
    what : str
        The step, e.g. ``"2,000 random value matrices against the 256 x 256 circle matrix"``.
    """

    seconds: float
    param: str
    what: str


def scaled(measured: float, work: float, reference_work: float, param: str, what: str) -> RuntimeTerm:
    """A step that took ``measured`` seconds on the calibration run, whose work was
    ``reference_work``, scaled to ``work`` (the same count for the values at hand)."""
    ratio = work / reference_work if reference_work > 0 else 0.0
    return RuntimeTerm(measured * ratio, param, what)


@dataclass(frozen=True)
class RuntimeEstimate:
    """A chapter's estimated run time: ``seconds`` in all, within a factor ``error`` (either way),
    and its largest ``term``."""

    seconds: float
    error: float
    term: RuntimeTerm | None


def estimate_runtime(spec, values: dict) -> RuntimeEstimate:
    """The run time of a chapter with these (validated) parameters, from its spec's terms."""
    error = float(getattr(spec, "runtime_error", 3.0) or 3.0)
    if getattr(spec, "runtime", None) is None:
        return RuntimeEstimate(STARTUP_SECONDS, error, None)
    terms = list(spec.runtime(values))
    total = STARTUP_SECONDS + sum(t.seconds for t in terms)
    return RuntimeEstimate(total, error, max(terms, key=lambda t: t.seconds) if terms else None)


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``31 h``, ``4.2 days``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


#: where the estimates' constants were measured (each chapter module's RUNTIME_CALIBRATION names
#: the runs): a 2-core x86_64 machine shared with other jobs
REFERENCE_MACHINE = "the reference machine"


def format_minutes(est: RuntimeEstimate) -> str:
    """``about 4 min on the reference machine (within a factor of 3)``: the estimate is scaled from
    runs measured on one machine (:data:`REFERENCE_MACHINE`); another machine, or a busier one,
    takes longer or shorter."""
    return f"about {format_duration(est.seconds)} on {REFERENCE_MACHINE} (within a factor of {est.error:g})"


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
