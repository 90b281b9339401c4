"""Progress bars on a terminal (tqdm's ``disable=None``), quiet in an executed notebook; the
environment variable ``ATTNRANK_PROGRESS=1`` forces them on, ``ATTNRANK_PROGRESS=0`` off."""
from __future__ import annotations

import os
import threading
import time
import weakref

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
    if bar.disable:
        return iterable
    if delay > 0:
        global _WATCHER
        _DELAYED.add(bar)
        if _WATCHER is None or not _WATCHER.is_alive():
            _WATCHER = threading.Thread(target=_draw_delayed, daemon=True)
            _WATCHER.start()
    return bar


#: open bars with a delay, and the one thread that draws them
_DELAYED: weakref.WeakSet = weakref.WeakSet()
_WATCHER: threading.Thread | None = None


def _draw_delayed(tick: float = 0.5) -> None:
    """Every ``tick`` seconds, draw each open bar whose delay has passed: tqdm draws only when an
    item ends, so a first item running a minute stayed invisible."""
    while True:
        time.sleep(tick)
        for bar in list(_DELAYED):
            with bar.get_lock():  # the lock close() clears under: no redraw after the clearing
                if bar.disable:
                    _DELAYED.discard(bar)
                elif time.time() - bar.start_t >= bar.delay:
                    bar.refresh(nolock=True)
