"""Progress bars that show on a terminal and stay quiet in the built book."""
from __future__ import annotations

import os
import sys

__all__ = ["progress", "progress_enabled"]


def progress_enabled() -> bool:
    """``ATTNRANK_PROGRESS=1`` forces bars on, ``0`` off; otherwise on only when stderr is a terminal."""
    flag = os.environ.get("ATTNRANK_PROGRESS")
    if flag is not None:
        return flag == "1"
    return sys.stderr.isatty()


def progress(iterable, desc: str = "", total: int | None = None):
    """Wrap ``iterable`` in a tqdm bar when :func:`progress_enabled`, else return it unchanged."""
    if not progress_enabled():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, leave=False)
