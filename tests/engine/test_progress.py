"""Progress bars: drawn on a terminal or when forced, never in an executed notebook (so never in
the website). The terminal is a real pseudo-terminal (``os.openpty``); the notebook is executed by
a real Jupyter kernel (nbclient), as papermill does for the command line and the website build.
"""
from __future__ import annotations

import fcntl
import os
import select
import struct
import sys
import termios
import time

import nbformat
import pytest
from nbclient import NotebookClient

from attnrank_lite.engine import progress as prog


def _read_all(fd: int, wait: float = 2.0) -> str:
    out, deadline = b"", time.time() + wait
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif out:
            break
    return out.decode(errors="replace")


@pytest.fixture
def pty_device():
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # a real terminal's size
    try:
        yield master, os.ttyname(slave)
    finally:
        os.close(master)
        os.close(slave)


def test_bars_off_without_terminal_and_when_forced_off(monkeypatch, capsys):
    monkeypatch.setenv("ATTNRANK_PROGRESS", "0")
    items = [1, 2, 3]
    assert prog.progress(items, desc="x") is items
    monkeypatch.delenv("ATTNRANK_PROGRESS")
    monkeypatch.setattr(sys, "stderr", open(os.devnull, "w"))  # not a terminal
    assert prog.progress(items) is items


def test_bars_drawn_on_a_terminal_and_off_when_forced(monkeypatch, pty_device):
    master, tty = pty_device
    monkeypatch.delenv("ATTNRANK_PROGRESS", raising=False)
    with open(tty, "w") as term:
        monkeypatch.setattr(sys, "stderr", term)
        assert list(prog.progress(range(40), desc="sweep-bar")) == list(range(40))
        term.flush()
        text = _read_all(master)
        assert "sweep-bar" in text and "/40" in text
        monkeypatch.setenv("ATTNRANK_PROGRESS", "0")  # the built book: never, even on a terminal
        items = list(range(5))
        assert prog.progress(items, desc="quiet-bar") is items


def test_a_bar_is_drawn_while_its_first_item_still_runs(monkeypatch, pty_device):
    """A family running a minute must show its bar once the delay has passed, not when it ends
    (tqdm alone draws only between items: the (3000, 64) default bracket of issue 23 was silent)."""
    master, tty = pty_device
    monkeypatch.delenv("ATTNRANK_PROGRESS", raising=False)
    seen = []
    with open(tty, "w") as term:
        monkeypatch.setattr(sys, "stderr", term)
        for i in prog.progress(range(2), desc="slow-first", delay=0.2):
            if i == 0:
                time.sleep(1.0)
                term.flush()
                seen.append(_read_all(master, wait=0.5))
    assert "slow-first" in seen[0] and "0/2" in seen[0]


def test_kernel_bars_never_reach_the_notebook(monkeypatch):
    """A notebook executed as papermill does: its standard error is no terminal, so no bar."""
    monkeypatch.delenv("ATTNRANK_PROGRESS", raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from attnrank_lite.engine.progress import progress\n"
        "total = sum(progress(range(25), desc='kernel-sweep'))\n"
        "print(total)")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    texts = "".join(o.get("text", "") for o in outputs)
    assert texts.strip() == "300"  # sum(range(25)): the loop ran in full
    assert all(o.get("name") != "stderr" for o in outputs), outputs
    assert "kernel-sweep" not in texts


def test_a_long_bracket_shows_its_families_and_a_short_one_nothing(monkeypatch, capsys):
    # the bracket's bars: drawn after PROGRESS_DELAY seconds, naming the running family
    from attnrank_lite.engine import assemble
    from attnrank_lite.engine.streaming import point_bracket
    from attnrank_lite.laws.geometry import fibonacci_sphere

    X = fibonacci_sphere(300)
    monkeypatch.setenv("ATTNRANK_PROGRESS", "1")
    monkeypatch.setattr(assemble, "PROGRESS_DELAY", 0.0)  # every bracket counts as long
    b = point_bracket(X, 16.0, 0.25)
    err = capsys.readouterr().err
    assert "bracket: lower families" in err and "bracket: upper families" in err
    assert "harmonic family" in err and "neumann" in err
    monkeypatch.setattr(assemble, "PROGRESS_DELAY", 3600.0)  # no bracket is that long
    assert point_bracket(X, 16.0, 0.25).upper == b.upper
    assert "bracket" not in capsys.readouterr().err
    monkeypatch.setattr(assemble, "PROGRESS_DELAY", 0.0)
    monkeypatch.setenv("ATTNRANK_PROGRESS", "0")  # the built book: never
    point_bracket(X, 16.0, 0.25)
    assert capsys.readouterr().err == ""
