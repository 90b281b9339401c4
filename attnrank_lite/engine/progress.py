"""Progress bars that show on a terminal and stay quiet in the built book.

A bar is drawn on standard error when it is a terminal (tqdm's ``disable=None``: a script run from
a shell), never in an executed notebook, whose standard error is captured. ``ATTNRANK_PROGRESS=1``
forces bars on (in Jupyter they appear in the cell's output), ``ATTNRANK_PROGRESS=0`` off (the
website build sets it).
"""
from __future__ import annotations

import os

__all__ = ["progress"]


def progress(iterable, desc: str = "", total: int | None = None, delay: float = 0.0):
    """``iterable`` wrapped in a tqdm bar labelled ``desc`` when bars are on, else unchanged.

    Parameters
    ----------
    iterable : iterable
    desc : str
    total : int, optional
        Number of items, when ``len(iterable)`` is not available.
    delay : float
        Seconds before the bar is first drawn (a loop that ends sooner draws nothing).
    """
    flag = os.environ.get("ATTNRANK_PROGRESS")
    if flag == "0":
        return iterable
    from tqdm import tqdm

    bar = tqdm(iterable, desc=desc, total=total, leave=False, delay=delay,
               disable=False if flag == "1" else None)
    return iterable if bar.disable else bar
