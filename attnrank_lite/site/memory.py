"""Memory a chapter's parameters need, and the refusal of what this machine cannot hold.

Each chapter spec may declare ``memory=f`` with ``f(values) -> iterable of MemoryNeed``: one
estimate per large step of the notebook, from the parameters alone (no work is done). The
largest estimate is compared with the memory available now (:func:`available_memory`), and a
run that cannot fit is refused before any work with a message naming the parameter, the
estimate and the limit (:class:`TooLarge`).

The estimates are deliberately simple: the dense float64 matrices a step holds, times the
number of copies the step keeps alive (:data:`BRACKET_COPIES` for a certified bracket).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from .spec import ParameterError, shown

__all__ = ["MemoryNeed", "TooLarge", "BRACKET_COPIES", "dense_need", "ball_grid_points", "available_memory",
           "largest_need", "check_memory", "format_bytes"]

#: n x m float64 arrays alive while one n x m attention matrix is built and bracketed: the logits,
#: the matrix, the SVD and the certificates' work arrays. Measured with ``ru_maxrss`` at 4.0
#: copies (1500 x 1500) and 5.6 copies (400 x 3200); 6 leaves a margin.
BRACKET_COPIES = 6

#: environment variable overriding the detected limit (bytes, or with a K/M/G/T suffix)
LIMIT_ENV = "ATTNRANK_MEMORY_LIMIT"


class TooLarge(ParameterError):
    """The parameters need more memory than this machine has available."""


@dataclass(frozen=True)
class MemoryNeed:
    """Estimated peak memory of one step of a chapter.

    Attributes
    ----------
    bytes : float
    param : str
        The parameter(s) that drive the estimate, as the user types them (e.g. ``"betas"``).
    what : str
        What is held, e.g. ``"the 78,540 x 78,540 attention matrix of beta = 1e5"``.
    """

    bytes: float
    param: str
    what: str


def dense_need(n: float, m: float, param: str, what: str, copies: float = BRACKET_COPIES) -> MemoryNeed:
    """``copies`` float64 arrays of shape (n, m)."""
    return MemoryNeed(8.0 * copies * float(n) * float(m), param, f"{what} ({_count(n)} x {_count(m)})")


def ball_grid_points(d: int, beta: float, spacing_factor: float, radius: float = 0.5) -> float:
    r"""About how many points of the grid :math:`h\mathbb{Z}^d`, :math:`h = s/\sqrt\beta`, lie in the
    ball of radius ``radius`` (the construction of :func:`attnrank_lite.laws.geometry.gaussian_ball`).

    The ball's volume in grid units, with the radius padded by half a cell diagonal so that the
    boundary layer is counted: :math:`V_d\,(R + \sqrt d/2)^d`, :math:`R = \text{radius}\sqrt\beta/s`.
    """
    R = radius * math.sqrt(beta) / spacing_factor + math.sqrt(d) / 2
    return math.pi ** (d / 2) / math.gamma(d / 2 + 1) * R ** d


def _count(x: float) -> str:
    return f"{x:,.0f}" if x < 1e9 else f"{x:.2g}"


def format_bytes(b: float) -> str:
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20)):
        if b >= size:
            return f"{b / size:.1f} {unit}"
    return f"{b / 1024:.0f} KiB"


def _parse_size(text: str) -> float:
    """Bytes from ``8G``, ``512M``, ``1.5GiB`` or ``1000000``: a finite positive number with an
    optional K/M/G/T suffix (powers of 1024). Anything else is a :class:`ParameterError` naming
    :data:`LIMIT_ENV` (``nan`` or ``inf`` would silently switch the memory check off)."""
    raw = text
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}.get(text[-1:], 1)
    try:
        value = float(text[:-1] if mult != 1 else text) * mult
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"environment variable {LIMIT_ENV}={shown(raw)} is not a memory size; use a positive "
                             "number of bytes, optionally with K, M, G or T (e.g. 8G), or unset it")
    return value


def _capped_limit(text: str) -> float:
    """:func:`_parse_size` of ``text``, refused (:class:`ParameterError` naming :data:`LIMIT_ENV`)
    above this machine's memory, RAM and swap together: a limit the machine cannot have would
    switch the memory check off as surely as ``inf``."""
    import psutil

    value = _parse_size(text)
    most = float(psutil.virtual_memory().total + psutil.swap_memory().total)
    if value > most:
        raise ParameterError(f"environment variable {LIMIT_ENV}={shown(text)} is more than this machine's memory "
                             f"({most / 2 ** 30:.1f} GiB with swap); give at most that, or unset it")
    return value


def _cgroup_headroom() -> float | None:
    """Memory left under this process's cgroup v2 limit (containers), or None."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit == "max":
            return None
        used = float(Path("/sys/fs/cgroup/memory.current").read_text())
        return max(float(limit) - used, 0.0)
    except (OSError, ValueError):
        return None


def available_memory() -> float | None:
    """Bytes this process can still allocate without swapping, or None when unknown.

    ``MemAvailable`` of ``/proc/meminfo`` (Linux), capped by a cgroup limit; ``psutil`` elsewhere
    when installed. The environment variable ``ATTNRANK_MEMORY_LIMIT`` (e.g. ``8G``) overrides.
    """
    if os.environ.get(LIMIT_ENV):
        return _capped_limit(os.environ[LIMIT_ENV])
    avail = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail = float(line.split()[1]) * 1024
                break
    except OSError:
        pass
    if avail is None:
        try:
            import psutil
        except ImportError:
            return None
        avail = float(psutil.virtual_memory().available)
    cg = _cgroup_headroom()
    return avail if cg is None else min(avail, cg)


def largest_need(spec, values: dict) -> MemoryNeed | None:
    """The largest of the chapter's estimates for these (validated) parameters, or None."""
    if spec.memory is None:
        return None
    needs = list(spec.memory(values))
    return max(needs, key=lambda n: n.bytes) if needs else None


def check_memory(spec, values: dict, available: float | None = None) -> MemoryNeed | None:
    """Refuse parameters whose largest memory estimate exceeds the available memory.

    Raises
    ------
    TooLarge
        Naming the parameter, the estimate and the limit.
    """
    need = largest_need(spec, values)
    limit = available_memory() if available is None else available
    if need is not None and limit is not None and need.bytes > limit:
        raise TooLarge(
            f"{spec.key}: parameter {need.param!r} needs about {format_bytes(need.bytes)} of memory for "
            f"{need.what}, more than the {format_bytes(limit)} available on this machine; "
            f"lower {need.param!r} (or use --profile quick)")
    return need
