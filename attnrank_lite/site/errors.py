"""The command line's failure kinds (nothing heavy imported: ``verify`` and ``sweep`` need no extra)."""
from __future__ import annotations

__all__ = ["OutputError", "RunFailed", "CellTimeout", "KernelDied", "WorkerDied", "BuildFailed", "MissingExtra"]


class OutputError(OSError):
    """An output folder cannot be used; the message says why and what to do."""


class RunFailed(RuntimeError):
    """The notebook raised while executing; the message names the chapter, the cell and the error."""


class CellTimeout(RunFailed):
    """A cell ran past the per-cell timeout."""


class KernelDied(RunFailed):
    """The notebook's kernel died (out of memory, killed from outside) or could not start."""


class WorkerDied(RuntimeError):
    """A Dask worker of a sweep died while computing a row (its memory limit, the OS, or killed from outside)."""


class BuildFailed(RuntimeError):
    """Jupyter Book (Sphinx) failed; the previous site is unchanged."""


class MissingExtra(RuntimeError):
    """A command needs packages of an extra that is not installed; the message names the extra."""
