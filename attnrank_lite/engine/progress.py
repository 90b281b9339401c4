"""Progress bars that show on a terminal and stay quiet in the built book.

Where a bar goes is decided by two environment variables, read when a loop starts:

``ATTNRANK_PROGRESS_TTY=/dev/pts/N``
    Draw the bars on that terminal device. The command line (``python -m attnrank_lite run`` and
    ``build``) sets it to its own terminal when its standard error is one: the notebook then runs
    in a papermill kernel whose standard streams are captured into the notebook, so writing to the
    terminal device directly is what keeps the bars visible to the person at the terminal **and**
    out of the executed notebook (hence out of the website).
``ATTNRANK_PROGRESS=1`` / ``0``
    Force bars on (to standard error: in Jupyter they appear in the cell's output) or off.

Otherwise bars are shown only when standard error is a terminal (a plain Python script run from
a shell). The website build executes notebooks with ``ATTNRANK_PROGRESS=0`` and no terminal, so
the pages never contain progress output.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import weakref

__all__ = ["progress", "progress_enabled", "progress_stream", "terminal_device"]

_TTY_STREAMS: dict[str, object] = {}


def terminal_device(stream=None) -> str | None:
    """Path of the terminal device behind ``stream`` (default ``sys.stderr``), or None."""
    stream = sys.stderr if stream is None else stream
    try:
        fd = stream.fileno()
        return os.ttyname(fd) if os.isatty(fd) else None
    except (AttributeError, OSError, ValueError):
        return None


def _open_tty(path: str):
    fh = _TTY_STREAMS.get(path)
    if fh is None or fh.closed:
        try:
            fh = open(path, "w", buffering=1, encoding="utf-8", errors="replace")
        except OSError:
            return None
        _TTY_STREAMS[path] = fh
    return fh


def progress_stream():
    """The stream bars are drawn on, or None when bars are off (see the module docstring)."""
    tty = os.environ.get("ATTNRANK_PROGRESS_TTY")
    if tty:
        fh = _open_tty(tty)
        if fh is not None:
            return fh
    flag = os.environ.get("ATTNRANK_PROGRESS")
    if flag is not None:
        return sys.stderr if flag == "1" else None
    return sys.stderr if sys.stderr is not None and sys.stderr.isatty() else None


def progress_enabled() -> bool:
    """Whether :func:`progress` draws a bar here (see the module docstring)."""
    return progress_stream() is not None


def progress(iterable, desc: str = "", total: int | None = None, delay: float = 0.0):
    """Wrap ``iterable`` in a tqdm bar when bars are enabled, else return it unchanged.

    Parameters
    ----------
    iterable : iterable
    desc : str
        Label shown before the bar.
    total : int, optional
        Number of items, when ``len(iterable)`` is not available.
    delay : float
        Seconds before the bar is first drawn (a loop that ends sooner draws nothing).
    """
    stream = progress_stream()
    if stream is None:
        return iterable
    from tqdm import tqdm

    try:  # the width of the terminal the bar is drawn on (tqdm only asks sys.stderr/sys.stdout)
        ncols = os.get_terminal_size(stream.fileno()).columns or None
    except (AttributeError, OSError, ValueError):
        ncols = None
    bar = tqdm(iterable, desc=desc, total=total, file=stream, leave=False, ncols=ncols, delay=delay)
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
