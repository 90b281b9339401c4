"""Store files a sweep cannot use, shared by the store tests (`tests/laws/test_law_store.py`) and
the command line's (`tests/site/test_sweep_store_errors.py`)."""
from __future__ import annotations

import sqlite3
from pathlib import Path


def unusable_store(tmp_path: Path, case: str, make_good) -> Path:
    """The path of a store of kind ``case``: ``garbage``, ``truncated`` (a store written by
    ``make_good(path)``, grown past a few pages and cut), ``other database``, ``missing folder``
    or ``a folder``."""
    path = tmp_path / "s.sqlite"
    if case == "garbage":
        path.write_bytes(b"\x00garbage" * 100)
    elif case == "truncated":
        make_good(path)
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE pad (x)")
            con.executemany("INSERT INTO pad VALUES (?)", [("x" * 500,)] * 200)
        con.close()
        path.write_bytes(path.read_bytes()[:5000])
    elif case == "other database":
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE rows (x)")
        con.close()
    elif case == "missing folder":
        path = tmp_path / "no" / "s.sqlite"
    else:
        path.mkdir()
    return path
