"""Memory a chapter's parameters need (its spec's ``memory(values)``: one :class:`MemoryNeed` per large
step), and the refusal, before any work, of what this machine cannot hold."""
from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import NamedTuple

import psutil

from ..engine.parallel import format_bytes
from .spec import ParameterError, shown

__all__ = ["MemoryNeed", "TooLarge", "BRACKET_COPIES", "LIMIT_ENV", "dense_need", "ball_grid_points",
           "available_memory", "largest_need", "check_memory"]

#: n x m float64 arrays alive while an n x m attention matrix is built and bracketed (logits, matrix,
#: SVD, work arrays): ``ru_maxrss`` measured 4.0 (1500 x 1500) and 5.6 (400 x 3200); 6 leaves a margin
BRACKET_COPIES = 6
#: the environment variable setting the limit by hand, and where a container's cgroup v2 limit is read
LIMIT_ENV, CGROUP = "ATTNRANK_MEMORY_LIMIT", Path("/sys/fs/cgroup")


class TooLarge(ParameterError):
    """The parameters need more memory than this machine has available."""


class MemoryNeed(NamedTuple):
    """Estimated peak ``bytes`` of one step: ``param`` drives it (as the user types it), ``what`` is held."""

    bytes: float
    param: str
    what: str


def dense_need(n: float, m: float, param: str, what: str, copies: float = BRACKET_COPIES) -> MemoryNeed:
    """``copies`` float64 arrays of shape (n, m)."""
    size = " x ".join(f"{x:,.0f}" if x < 1e9 else f"{x:.2g}" for x in (n, m))
    return MemoryNeed(8.0 * copies * float(n) * float(m), param, f"{what} ({size})")


def ball_grid_points(d: int, beta: float, spacing_factor: float, radius: float = 0.5) -> float:
    r"""At least the points of :math:`h\mathbb{Z}^d`, :math:`h = s/\sqrt\beta`, in the ball of ``radius``
    (:func:`~attnrank_lite.laws.geometry.gaussian_ball`): :math:`V_d (R + \sqrt d/2)^d`, :math:`R = r\sqrt\beta/s`."""
    R = radius * math.sqrt(beta) / spacing_factor + math.sqrt(d) / 2
    return math.pi ** (d / 2) / math.gamma(d / 2 + 1) * R ** d


def available_memory() -> float:
    """Bytes allocatable without swapping, capped by a cgroup v2 limit; or :data:`LIMIT_ENV` (``8G``,
    ``1.5GiB``, bytes; :class:`ParameterError` unless a size up to RAM and swap)."""
    if not (text := os.environ.get(LIMIT_ENV, "")):
        avail = float(psutil.virtual_memory().available)
        try:  # memory.max is "max" where the cgroup has no limit
            limit, used = (float((CGROUP / f).read_text()) for f in ("memory.max", "memory.current"))
            return min(avail, max(limit - used, 0.0))
        except (OSError, ValueError):
            return avail
    size = re.fullmatch(r"\s*(\d*\.?\d+(?:E[+-]?\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    value = float(size[1]) * 1024 ** " KMGT".index(size[2] or " ") if size else 0.0
    most = float(psutil.virtual_memory().total + psutil.swap_memory().total)
    if not 0 < value <= most:
        raise ParameterError(f"environment variable {LIMIT_ENV}={shown(text)} is not a memory size up to this "
                             f"machine's {most / 2 ** 30:.1f} GiB (e.g. 8G, 512M or bytes); give one or unset it")
    return value


def largest_need(spec, values: dict) -> MemoryNeed | None:
    """The largest of the chapter's estimates for these (validated) parameters, or None."""
    return max(spec.memory(values) if spec.memory else (), key=lambda n: n.bytes, default=None)


def check_memory(spec, values: dict, available: float | None = None) -> MemoryNeed | None:
    """The largest estimate, or :class:`TooLarge` naming its parameter when it exceeds ``available``."""
    need, limit = largest_need(spec, values), available_memory() if available is None else available
    if need is not None and need.bytes > limit:
        raise TooLarge(f"{spec.key}: parameter {need.param!r} needs about {format_bytes(need.bytes)} of memory "
                       f"for {need.what}, more than the {format_bytes(limit)} available on this machine; "
                       f"lower {need.param!r} (or use --profile quick)")
    return need
