"""Progress bars on a terminal (tqdm's ``disable=None``), quiet in an executed notebook; the
environment variable ``ATTNRANK_PROGRESS=1`` forces them on, ``ATTNRANK_PROGRESS=0`` off."""
from __future__ import annotations

import os

__all__ = ["progress"]


def progress(iterable, desc: str = "", total: int | None = None, delay: float = 0.0):
    """``iterable`` wrapped in a tqdm bar labelled ``desc`` (``total`` items, first drawn after
    ``delay`` seconds) when bars are on, else unchanged."""
    flag = os.environ.get("ATTNRANK_PROGRESS")
    if flag == "0":
        return iterable
    from tqdm import tqdm

    bar = tqdm(iterable, desc=desc, total=total, leave=False, delay=delay,
               disable=False if flag == "1" else None)
    return iterable if bar.disable else bar
