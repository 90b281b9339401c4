"""Safe on a user's machine: the held-back CLI attacks of issue 18, each refused in one line with
its documented exit status, and nothing written where it must not be.

Every command runs as a user runs it (``python -m attnrank_lite`` in a subprocess), so that the
whole standard error is checked, including what libraries print at exit.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnrank_lite.site import cli, outputs
from attnrank_lite.site.chapters import get_chapter

REPO = Path(__file__).resolve().parents[2]
CH01 = get_chapter("ch01")


def run_cli(*args, env=None, cwd=REPO, code=None, timeout=600):
    argv = [sys.executable, "-m", "attnrank_lite", *args] if code is None else [sys.executable, "-c", code, *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def only_line(res) -> str:
    """The whole standard error is one line starting with ``error:``."""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr[-2000:]
    assert len(lines[0]) < 400, lines[0][:400]
    return lines[0]


# ---------------------------------------------------------------- parameter values: exit 2, never 9


# (a leading space lets a value of minus signs past argparse, which would take it for an option)
@pytest.mark.parametrize("value", ["{{}}", " " + "-" * 50_000, " " + "-" * 50_000 + "1", "1+" * 20_000,
                                   "1+" * 20_000 + "1", "[" * 100_000])
def test_malformed_parameter_values_exit_2_in_one_short_line(tmp_path, value):
    res = run_cli("run", "ch01", "--profile", "quick", "-p", "eps", value, "-o", str(tmp_path / "o"))
    assert res.returncode == cli.EXIT["bad parameter"]
    assert "parameter 'eps'" in only_line(res)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("value", ["abc", "1,000", "G", "nan", "inf", "-inf", "-8G", "0", "999999T"])
def test_memory_limit_variable_is_validated_and_named(tmp_path, value):
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(tmp_path / "o"),
                  env={"ATTNRANK_MEMORY_LIMIT": value})
    assert res.returncode == cli.EXIT["bad parameter"]
    assert "ATTNRANK_MEMORY_LIMIT" in only_line(res)
    assert not (tmp_path / "o").exists()


def test_a_valid_memory_limit_still_refuses_what_does_not_fit(tmp_path):
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(tmp_path / "o"),
                  env={"ATTNRANK_MEMORY_LIMIT": "1K"})
    assert res.returncode == cli.EXIT["too large for this machine"] and "KiB" in only_line(res)


@pytest.mark.parametrize("args", [[], ["run"], ["run", "ch01", "-p", "eps"], ["run", "ch01", "--profile", "nope"],
                                  ["frobnicate"], ["build", "--no-such-flag"]])
def test_argparse_errors_are_one_line_with_a_hint(args):
    res = run_cli(*args)
    assert res.returncode == 2
    assert "--help" in only_line(res)


# ---------------------------------------------------------------- notebook failures: one line


STAND_IN = """
import sys
from pathlib import Path
import nbformat
from attnrank_lite.site import cli, runner
from attnrank_lite.site.chapters import get_chapter
spec = get_chapter("ch01")
src = nbformat.read(runner.NOTEBOOK_DIR / spec.notebook, as_version=4)
params = [c for c in src.cells if "parameters" in c.metadata.get("tags", [])]
folder = Path(sys.argv[1]) / "nbs"
folder.mkdir()
nb = nbformat.v4.new_notebook(cells=params + [nbformat.v4.new_code_cell(sys.argv[2])], metadata=src.metadata)
nbformat.write(nb, folder / spec.notebook)
runner.NOTEBOOK_DIR = folder
sys.exit(cli.main(sys.argv[3:]))
"""


def test_cell_timeout_is_one_line_and_exit_5(tmp_path):
    res = run_cli(str(tmp_path), "import time\ntime.sleep(60)", "run", "ch01", "--profile", "quick", "--timeout",
                  "3", "-o", str(tmp_path / "o"), code=STAND_IN)
    assert res.returncode == cli.EXIT["cell timeout"]
    assert "ran longer than the timeout of 3 s" in only_line(res)


@pytest.mark.parametrize("argv0", ["/nonexistent/python", sys.executable])
def test_kernel_that_cannot_start_is_exit_6_in_one_line(tmp_path, argv0):
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [argv0, "-c", "import sys; sys.exit(3)", "{connection_file}"]  # missing, or exits at once
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "broken", "language": "python"}))
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(tmp_path / "o"),
                  env={"JUPYTER_PATH": str(tmp_path / "jupyter")})
    assert res.returncode == cli.EXIT["kernel died"]
    line = only_line(res)
    assert "could not start" in line and "unchanged" not in line
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [outputs.MARKER, outputs.LOCK]


# ---------------------------------------------------------------- output folders


def test_ci_folder_is_protected_like_the_sources():
    assert (REPO / ".ci").is_dir()
    before = sorted(p.name for p in (REPO / ".ci").iterdir())
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(REPO / ".ci" / "out"))
    assert res.returncode == cli.EXIT["output folder refused"] and ".ci/" in only_line(res)
    assert sorted(p.name for p in (REPO / ".ci").iterdir()) == before


@pytest.mark.parametrize("command", [["run", "ch01", "--profile", "quick"], ["build", "--profile", "quick"]])
def test_empty_output_name_is_refused(tmp_path, command):
    (tmp_path / "mine.txt").write_text("x")
    res = run_cli(*command, "-o", "", cwd=tmp_path)
    assert res.returncode == cli.EXIT["output folder refused"] and "empty" in only_line(res)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_names_that_only_look_like_outputs_do_not_make_a_folder_ours(tmp_path):
    look = tmp_path / "look-alike"
    (look / "results").mkdir(parents=True)
    (look / "ch01").mkdir()
    (look / f"{CH01.stem}.run.json").write_text("x")
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(look))
    assert res.returncode == cli.EXIT["output folder refused"]
    assert "not empty and was not created by attnrank_lite" in only_line(res)
    assert sorted(p.name for p in look.iterdir()) == sorted(["ch01", f"{CH01.stem}.run.json", "results"])
    assert (look / f"{CH01.stem}.run.json").read_text() == "x"
