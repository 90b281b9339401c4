"""Memory a chapter's parameters need, and the refusal, before any work, of what this machine cannot hold.

A spec's ``memory(values)`` yields one :class:`MemoryNeed` per large step of the notebook, from
the parameters alone: the dense float64 arrays the step holds, times the copies it keeps alive.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..engine.parallel import format_bytes
from .spec import ParameterError, shown

__all__ = ["MemoryNeed", "TooLarge", "BRACKET_COPIES", "LIMIT_ENV", "dense_need", "ball_grid_points",
           "available_memory", "largest_need", "check_memory"]

#: n x m float64 arrays alive while one n x m attention matrix is built and bracketed (logits, the
#: matrix, the SVD, the certificates' work arrays); ``ru_maxrss`` measured 4.0 copies (1500 x 1500)
#: and 5.6 (400 x 3200); 6 leaves a margin
BRACKET_COPIES = 6
#: environment variable that sets the limit by hand (bytes, or with a K/M/G/T suffix)
LIMIT_ENV = "ATTNRANK_MEMORY_LIMIT"
#: where a container's cgroup v2 memory limit is read
CGROUP = Path("/sys/fs/cgroup")


class TooLarge(ParameterError):
    """The parameters need more memory than this machine has available."""


@dataclass(frozen=True)
class MemoryNeed:
    """Estimated peak ``bytes`` of one step: ``param`` drives it (as the user types it), ``what`` is held."""

    bytes: float
    param: str
    what: str


def dense_need(n: float, m: float, param: str, what: str, copies: float = BRACKET_COPIES) -> MemoryNeed:
    """``copies`` float64 arrays of shape (n, m)."""
    size = " x ".join(f"{x:,.0f}" if x < 1e9 else f"{x:.2g}" for x in (n, m))
    return MemoryNeed(8.0 * copies * float(n) * float(m), param, f"{what} ({size})")


def ball_grid_points(d: int, beta: float, spacing_factor: float, radius: float = 0.5) -> float:
    r"""An upper estimate of the points of :math:`h\mathbb{Z}^d`, :math:`h = s/\sqrt\beta`, in the ball of
    ``radius`` (:func:`attnrank_lite.laws.geometry.gaussian_ball`): the volume :math:`V_d (R + \sqrt d/2)^d`
    in grid units, :math:`R = \text{radius}\sqrt\beta/s`, padded by half a cell diagonal."""
    R = radius * math.sqrt(beta) / spacing_factor + math.sqrt(d) / 2
    return math.pi ** (d / 2) / math.gamma(d / 2 + 1) * R ** d


def _limit_from_env(text: str) -> float:
    """Bytes from ``8G``, ``512M``, ``1.5GiB`` or ``1000000`` (powers of 1024); a :class:`ParameterError`
    naming :data:`LIMIT_ENV` for anything else, or above RAM and swap together (``nan``, ``inf``
    or an impossible size would switch the check off)."""
    core = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}.get(core[-1:], 1)
    try:
        value = float(core[:-1] if mult != 1 else core) * mult
    except ValueError:
        value = math.nan
    most = float(psutil.virtual_memory().total + psutil.swap_memory().total)
    if not (math.isfinite(value) and 0 < value <= most):
        raise ParameterError(f"environment variable {LIMIT_ENV}={shown(text)} is not a memory size this machine "
                             f"can have; use a positive number of bytes up to {most / 2 ** 30:.1f} GiB, "
                             "optionally with K, M, G or T (e.g. 8G), or unset it")
    return value


def available_memory() -> float:
    """Bytes this process can still allocate without swapping: ``psutil``'s available memory, capped
    by a container's cgroup v2 limit; :data:`LIMIT_ENV` (e.g. ``8G``) overrides both."""
    if os.environ.get(LIMIT_ENV):
        return _limit_from_env(os.environ[LIMIT_ENV])
    avail = float(psutil.virtual_memory().available)
    try:  # memory.max is "max" where the cgroup has no limit
        limit, used = (float((CGROUP / f).read_text()) for f in ("memory.max", "memory.current"))
        return min(avail, max(limit - used, 0.0))
    except (OSError, ValueError):
        return avail


def largest_need(spec, values: dict) -> MemoryNeed | None:
    """The largest of the chapter's estimates for these (validated) parameters, or None."""
    return max(spec.memory(values) if spec.memory else (), key=lambda n: n.bytes, default=None)


def check_memory(spec, values: dict, available: float | None = None) -> MemoryNeed | None:
    """The largest estimate, or :class:`TooLarge` naming its parameter, the estimate and the limit
    (``available``, default :func:`available_memory`) when it does not fit."""
    need = largest_need(spec, values)
    limit = available_memory() if available is None else available
    if need is not None and need.bytes > limit:
        raise TooLarge(
            f"{spec.key}: parameter {need.param!r} needs about {format_bytes(need.bytes)} of memory for "
            f"{need.what}, more than the {format_bytes(limit)} available on this machine; "
            f"lower {need.param!r} (or use --profile quick)")
    return need
