"""``sweep --store`` and ``sweep --report`` on stores that cannot be used (issue 24 item 4): one
line naming the parameter and what is wrong, with the documented exit status (2 a bad parameter,
8 a file-system error), never "internal error" (9)."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from store_cases import unusable_store

from attnrank_lite.laws import law_store
from attnrank_lite.site import cli

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ["sweep", "--d", "2", "--n", "60", "--beta", "2", "4", "8", "16", "--eps", "0.25"]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "internal error" not in err, err
    return err


def _good_store(path: Path) -> Path:
    assert cli.main([*SWEEP, "--store", str(path)]) == 0
    return path


@pytest.mark.parametrize("case, phrase", [
    ("garbage", "not an intact SQLite file"),
    ("truncated", "not an intact SQLite file"),
    ("other database", "not a sweep store"),
    ("missing folder", "does not exist"),
    ("a folder", "is a folder"),
])
def test_a_store_that_is_not_a_sweep_store_is_a_bad_parameter(tmp_path, capsys, case, phrase):
    path = unusable_store(tmp_path, case, _good_store)
    capsys.readouterr()
    assert cli.main([*SWEEP, "--store", str(path)]) == cli.EXIT["bad parameter"]
    err = _one_line(capsys)
    assert "parameter '--store'" in err and phrase in err
    if case != "missing folder":
        assert cli.main(["sweep", "--report", str(path)]) == cli.EXIT["bad parameter"]
        err = _one_line(capsys)
        assert "parameter '--report'" in err


def test_report_on_a_missing_file_says_so(tmp_path, capsys):
    assert cli.main(["sweep", "--report", str(tmp_path / "none.sqlite")]) == cli.EXIT["bad parameter"]
    err = _one_line(capsys)
    assert "parameter '--report'" in err and "no such file" in err and "none.sqlite" in err


def test_a_read_only_store_is_a_file_system_error(tmp_path, capsys, read_only_folder):
    folder = tmp_path / "ro"
    folder.mkdir()
    store = _good_store(folder / "s.sqlite")
    capsys.readouterr()
    with read_only_folder(folder):
        assert cli.main([*SWEEP[:-1], "0.1", "--store", str(store)]) == cli.EXIT["file system error"]
        err = _one_line(capsys)
        assert "parameter '--store'" in err and "cannot be written" in err
        assert cli.main(["sweep", "--report", str(store), "--figure", str(tmp_path / "f.png")]) == 0


def test_a_full_disk_is_a_file_system_error(tmp_path):
    """A file size limit (RLIMIT_FSIZE, its signal ignored) stands in for a full disk: SQLite's
    writes fail as they would on a full file system."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (32 * 1024, 32 * 1024))

    env = dict(os.environ, PYTHONPATH=str(ROOT), ATTNRANK_PROGRESS="0")
    env.pop("ATTNRANK_SCHEDULER", None)
    r = subprocess.run([sys.executable, "-m", "attnrank_lite", *SWEEP, "--store", str(tmp_path / "s.sqlite")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert r.returncode == cli.EXIT["file system error"], r.stderr
    assert r.stderr.count("\n") == 1 and "parameter '--store'" in r.stderr, r.stderr
    assert "internal error" not in r.stderr
    assert law_store.StoreError  # the library's error that the command line turns into this line
