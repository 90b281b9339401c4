"""The sweep store's edges (issue 24 items 4, 6, 7): exact file names, read-only folders, one-line
store errors, and sweeps on one store that share the work instead of repeating it."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from store_cases import unusable_store

from attnrank_lite.laws import law_store, scale

ROW = {"d": 3, "n": 10, "beta": 1.0, "eps": 0.1, "points": "random", "seed": 0, "n_points": 10,
       "lower": 2, "upper": 5, "lower_kind": "norm", "upper_source": "x", "degree": None,
       "verified": True, "wall_s": 0.1, "cpu_s": 0.1}


def _store(path: Path, betas) -> None:
    con = law_store.open_store(path)
    law_store.insert_rows(con, [{**ROW, "beta": b} for b in betas], "abc")
    con.close()


@pytest.mark.parametrize("name, decoy", [("a#b.sqlite", "a"), ("a?b.sqlite", "a"), ("%41.sqlite", "A.sqlite")])
def test_read_store_opens_the_exact_file_name(tmp_path, name, decoy):
    """``#``, ``?`` and ``%41`` belong to the file name: the store read is that file, not the
    one a URI built by hand names (``a`` for ``a#b``, ``A.sqlite`` for ``%41``)."""
    _store(tmp_path / name, [1.0])
    _store(tmp_path / decoy, [1.0, 2.0, 3.0])
    assert list(law_store.read_store(tmp_path / name)["beta"]) == [1.0]
    assert len(law_store.read_runs(tmp_path / name)) == 0
    stores = {p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))}
    assert stores == {name, decoy}  # nothing created (the log files of a WAL store aside)


def test_a_store_in_a_read_only_folder_is_read(tmp_path, read_only_folder):
    """A read-only checkout: no ``-shm`` file can be created beside the store, which is read
    all the same (``immutable=1``) and left as it was."""
    folder = tmp_path / "ro"
    folder.mkdir()
    _store(folder / "s.sqlite", [1.0, 2.0])
    assert sorted(p.name for p in folder.iterdir()) == ["s.sqlite"]  # closed: no -wal, no -shm
    with read_only_folder(folder):
        assert list(law_store.read_store(folder / "s.sqlite")["beta"]) == [1.0, 2.0]
        assert len(law_store.read_runs(folder / "s.sqlite")) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["s.sqlite"]


def test_a_store_with_an_unapplied_log_in_a_read_only_folder_is_refused(tmp_path, read_only_folder):
    """``immutable=1`` would ignore committed rows still in the write-ahead log: refused instead."""
    folder = tmp_path / "ro"
    folder.mkdir()
    con = law_store.open_store(folder / "s.sqlite")
    con.execute("PRAGMA wal_autocheckpoint=0")
    law_store.insert_rows(con, [ROW], "abc")
    shutil.copy(folder / "s.sqlite-wal", tmp_path / "wal")
    con.close()  # checkpoints and removes the log: put the unapplied one back
    shutil.copy(tmp_path / "wal", folder / "s.sqlite-wal")
    (folder / "s.sqlite-shm").unlink(missing_ok=True)
    with read_only_folder(folder), pytest.raises(law_store.StoreError, match="s.sqlite"):
        law_store.read_store(folder / "s.sqlite")


@pytest.mark.parametrize("case, phrase, filesystem", [
    ("garbage", "not an intact SQLite file", False),
    ("truncated", "not an intact SQLite file", False),
    ("other database", "not a sweep store", False),
    ("missing folder", "does not exist", False),
    ("a folder", "is a folder", False),
])
def test_open_store_says_what_is_wrong(tmp_path, case, phrase, filesystem):
    path = unusable_store(tmp_path, case, lambda p: _store(p, [1.0, 2.0]))
    with pytest.raises(law_store.StoreError, match=phrase) as info:
        con = law_store.open_store(path)
        law_store.stored_keys(con, "abc")  # a damaged page may only show when it is read
    assert info.value.filesystem is filesystem and "\n" not in str(info.value)
    assert not (tmp_path / "no").exists()


def test_open_store_refuses_a_read_only_store(tmp_path, read_only_folder):
    folder = tmp_path / "ro"
    folder.mkdir()
    _store(folder / "s.sqlite", [1.0])
    with read_only_folder(folder), pytest.raises(law_store.StoreError, match="cannot be written") as info:
        law_store.open_store(folder / "s.sqlite")
    assert info.value.filesystem


def test_a_sweep_started_while_another_runs_leaves_it_the_claimed_rows(tmp_path, monkeypatch):
    """While the first sweep computes its first row, a second sweep on the same store starts:
    it must compute nothing (every row is stored or claimed), and the ``runs`` table then counts
    each row once (before claims it counted 4 + 4 computations for 4 rows)."""
    store = tmp_path / "s.sqlite"
    args = ([2], 60, [2.0, 4.0, 8.0, 16.0], [0.25])
    real, inner = scale.sweep_task, []

    def task(*key):
        if not inner:
            inner.append(scale.run_sweep(store, *args, log=lambda s: None))
        return real(*key)

    monkeypatch.setattr(scale, "sweep_task", task)
    outer = scale.run_sweep(store, *args, log=lambda s: None)
    assert (inner[0]["computed"], inner[0]["elsewhere"], inner[0]["skipped"]) == (0, 4, 0)
    assert (outer["computed"], outer["elsewhere"]) == (4, 0)
    runs = law_store.read_runs(store)
    assert sorted(runs["computed"]) == [0, 4] and len(law_store.read_store(store)) == 4
    with sqlite3.connect(store) as con:
        assert con.execute("SELECT count(*) FROM claims").fetchone() == (0,)  # answered or released
    con.close()


def test_claims_of_sweeps_that_no_longer_run_are_taken_over(tmp_path):
    """A sweep killed outright leaves its claims; a process that is gone (or a claim from
    another machine, left in a copied store) does not hold its rows."""
    store = tmp_path / "s.sqlite"
    con = law_store.open_store(store)
    keys = scale.configurations([2], 60, [2.0, 4.0, 8.0, 16.0], [0.25])
    code = law_store.code_hash()
    dead = subprocess.Popen(["true"])
    dead.wait()
    law_store.claim_rows(con, keys[:2], code, f"{os.uname().nodename}:{dead.pid}:0.0:x")
    law_store.claim_rows(con, keys[2:], code, "another-machine:1:0.0:y")
    con.close()
    res = scale.run_sweep(store, [2], 60, [2.0, 4.0, 8.0, 16.0], [0.25], log=lambda s: None)
    assert (res["computed"], res["elsewhere"]) == (4, 0)


def test_claims_of_a_running_sweep_are_respected(tmp_path):
    store = tmp_path / "s.sqlite"
    con = law_store.open_store(store)
    keys = scale.configurations([2], 60, [2.0, 4.0, 8.0, 16.0], [0.25])
    code = law_store.code_hash()
    mine, elsewhere = law_store.claim_rows(con, keys[:3], code, law_store.claim_owner())
    assert (len(mine), elsewhere) == (3, 0)
    again, elsewhere = law_store.claim_rows(con, keys, code, law_store.claim_owner())
    assert (again, elsewhere) == ([keys[3]], 3)
    con.close()
