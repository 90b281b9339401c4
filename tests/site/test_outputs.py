"""Nothing a user has is ever lost; every failure is one clear line; refuse what cannot finish.

The command line is run as a user runs it (``python -m attnrank_lite`` in a subprocess), with
real signals for the interrupt tests; the failure modes of a notebook (error, timeout, dead
kernel) use small stand-in notebooks for chapter 1 so that each takes a few seconds.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from attnrank_lite.site import build, cli, memory, outputs, runner
from attnrank_lite.site.chapters import NOTEBOOK_DIR, get_chapter
from attnrank_lite.site.memory import TooLarge, ball_grid_points, check_memory, largest_need
from attnrank_lite.site.params import ParameterError, validate_notebook_parameters
from attnrank_lite.site.results import save_table

REPO = Path(__file__).resolve().parents[2]
CH01 = get_chapter("ch01")
#: chapter 1's quick profile made smaller still (a third of its CPU): these runs check the files a
#: run leaves behind, not its numbers
SMALL = ("-p", "n_circle", "64", "-p", "split_factors", "[1, 4]", "-p", "n_trials", "20")


def run_cli(*args, env=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "attnrank_lite", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=timeout, env={**os.environ, **(env or {})})


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` (hidden ones included) -> sha256."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr, stderr
    return lines[0]


#: the tests that use ``previous_run`` run on one xdist worker, so that the run is made once
ON_PREVIOUS_RUN = pytest.mark.xdist_group("previous-run")


@pytest.fixture(scope="module")
def previous_run(tmp_path_factory):
    """A complete quick run of chapter 1 (the 'previous outputs' a user has)."""
    out = tmp_path_factory.mktemp("previous") / "runs"
    old = os.umask(0o022)
    try:
        res = run_cli("run", "ch01", "--profile", "quick", *SMALL, "-o", str(out))
    finally:
        os.umask(old)
    assert res.returncode == 0, res.stderr
    return out


# ---------------------------------------------------------------- refusing output folders


@pytest.mark.parametrize("where", ["", "notebooks", "book", "attnrank_lite", "notebooks/new-sub", ".ci"])
@pytest.mark.parametrize("command", ["run", "build"])
def test_output_inside_the_sources_is_refused(where, command):
    before = snapshot(REPO / "notebooks")
    args = ["run", "ch01", "--profile", "quick"] if command == "run" else ["build", "--profile", "quick"]
    res = run_cli(*args, "-o", str(REPO / where))
    assert res.returncode == cli.EXIT["output folder refused"], res.stderr
    line = one_error_line(res.stderr)
    assert "sources" in line or "is the repository" in line
    assert snapshot(REPO / "notebooks") == before  # the committed notebooks are untouched
    assert not (REPO / "notebooks" / "new-sub").exists()


def test_non_empty_folder_not_ours_is_refused(tmp_path):
    mine = tmp_path / "my-notes"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(mine))
    assert res.returncode == cli.EXIT["output folder refused"]
    assert "not empty and was not created by attnrank_lite" in one_error_line(res.stderr)
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    assert (mine / "thesis.tex").read_text() == "precious"


def test_empty_folder_is_adopted_and_marked(tmp_path):
    out = outputs.prepare_output(tmp_path)
    assert (out / outputs.MARKER).is_file()
    (out / "ch01").mkdir()
    assert outputs.prepare_output(tmp_path) == out  # ours now, even though not empty


@pytest.mark.parametrize("case", ["file", "under a file", "cannot be created"])
def test_unusable_output_folder_is_one_line_before_any_work(tmp_path, case):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = {"file": blocker, "under a file": blocker / "sub",
              "cannot be created": Path("/proc/attnrank-cannot-write-here")}[case]
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(target))
    assert res.returncode == cli.EXIT["output folder refused"], res.stderr
    line = one_error_line(res.stderr)
    assert str(target) in line and "choose another folder" in line
    assert blocker.read_text() == "x"


def test_read_only_folder_message(tmp_path, monkeypatch):
    # root may write anywhere, so the permission itself is simulated; the decision is ours
    monkeypatch.setattr(outputs.os, "access", lambda path, mode: False)
    with pytest.raises(outputs.OutputError, match="is not writable"):
        outputs.prepare_output(tmp_path)
    with pytest.raises(outputs.OutputError, match="cannot be created: .* is not writable"):
        outputs.prepare_output(tmp_path / "new")


def test_chapter_slot_that_is_a_file_is_refused_before_any_work(tmp_path):
    out = outputs.prepare_output(tmp_path / "runs")
    (out / "ch01").write_text("not a run")
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(out))
    assert res.returncode == cli.EXIT["output folder refused"]
    assert "is a file, not an output folder" in one_error_line(res.stderr)
    assert "executed" not in res.stdout  # refused before the notebook ran, not after
    assert sorted(p.name for p in out.iterdir()) == [outputs.MARKER, "ch01"]  # no partial folder made
    assert (out / "ch01").read_text() == "not a run"


HOLD_PARTIAL = """
import sys, time
from pathlib import Path
from attnrank_lite.site import outputs
tmp = outputs.partial_dir(Path(sys.argv[1]), "ch01")
(tmp / "table.csv").write_text("work")
print(tmp, flush=True)
time.sleep(120)
"""


def test_a_partial_folder_is_live_while_its_writer_holds_the_folder_lock(tmp_path):
    """Whatever pid or name it carries, a partial folder is left alone while its writer holds the
    output folder's lock (another writer waits), and removed by the next writer once that writer
    was killed outright (kill -9: no cleanup of its own)."""
    from filelock import FileLock, Timeout

    out = outputs.prepare_output(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_PARTIAL, str(out)], stdout=subprocess.PIPE, text=True,
                              cwd=REPO)
    try:
        live = Path(holder.stdout.readline().strip())
        with pytest.raises(Timeout):
            FileLock(str(out / outputs.LOCK)).acquire(timeout=0.5)  # a second writer has to wait
        outputs.prepare_output(out)
        assert (live / "table.csv").read_text() == "work"
    finally:
        holder.kill()
        holder.wait()
    assert live.is_dir()  # nothing cleaned it up ...
    new = outputs.partial_dir(out, "ch01")
    try:
        assert not live.exists() and new.is_dir()  # ... until the next writer came
    finally:
        outputs.release_partial(new)
    assert sorted(p.name for p in out.iterdir()) == [outputs.MARKER, outputs.LOCK]


def test_a_partial_folder_goes_when_its_process_exits_before_its_own_cleanup(tmp_path):
    """A signal can land right after the folder is made, before the caller's try/finally (a loaded
    machine made this happen at the start of a run): the process still removes it as it exits."""
    out = outputs.prepare_output(tmp_path / "runs")
    code = "import sys; from attnrank_lite.site import outputs; outputs.partial_dir(sys.argv[1], 'ch01'); 1 / 0"
    res = subprocess.run([sys.executable, "-c", code, str(out)], cwd=REPO, capture_output=True, text=True)
    assert "ZeroDivisionError" in res.stderr and not list(out.glob(".partial-*"))


WRITER = """
import sys
from pathlib import Path
from attnrank_lite.site import outputs
out = Path(sys.argv[1])
for k in range(int(sys.argv[2])):
    outputs.prepare_output(out)
    new = outputs.partial_dir(out, "ch01")
    (new / "run.json").write_text(sys.argv[3] + str(k))
    try:
        outputs.replace_folder(new, out / "ch01")
    finally:
        outputs.release_partial(new)
"""


def test_writers_released_at_once_queue_on_the_folder_lock(tmp_path):
    out = outputs.prepare_output(tmp_path / "runs")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(out), "10", f"w{i}-"], stderr=subprocess.PIPE,
                              text=True, cwd=REPO) for i in range(4)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errors
    assert (out / "ch01" / "run.json").read_text().endswith("9")  # the last replacement of some writer
    assert {p.name for p in out.iterdir()} == {outputs.MARKER, outputs.LOCK, "ch01"}


@ON_PREVIOUS_RUN
def test_symlinked_chapter_folder_is_refused_and_nothing_is_claimed(tmp_path, previous_run):
    """A link inside OUT is refused before any work (a swap through it would act on its target),
    and the message does not claim anything about outputs it did not protect."""
    out = outputs.prepare_output(tmp_path / "runs")
    target = tmp_path / "elsewhere"
    shutil.copytree(previous_run / "ch01", target)
    before = snapshot(target)
    (out / "ch01").symlink_to(target, target_is_directory=True)
    res = run_cli("run", "ch01", "--profile", "quick", "-o", str(out))
    assert res.returncode == cli.EXIT["output folder refused"]
    line = one_error_line(res.stderr)
    assert "symbolic link" in line and "unchanged" not in line
    assert snapshot(target) == before


def test_removing_leftover_partial_folders_never_follows_a_link(tmp_path):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    out = outputs.prepare_output(tmp_path / "out")
    (out / ".partial-ch01-abc").symlink_to(target, target_is_directory=True)
    outputs.release_partial(outputs.partial_dir(out, "ch01"))
    assert (target / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("lock_existed", [False, True])
def test_an_interrupt_inside_partial_dir_leaves_no_lock_and_no_folder(tmp_path, monkeypatch, lock_existed):
    """SIGTERM (raised as an exception by the command line) between taking the lock and returning
    the folder: the lock is released, a lock file this call created is removed, no folder stays."""
    out = outputs.prepare_output(tmp_path / "out")
    if lock_existed:
        (out / outputs.LOCK).touch()
    before = sorted(p.name for p in out.iterdir())

    def interrupted(self, *args, **kwargs):
        raise cli.Terminated()

    monkeypatch.setattr(Path, "mkdir", interrupted)
    with pytest.raises(cli.Terminated):
        outputs.partial_dir(out, "ch01")
    monkeypatch.undo()
    assert sorted(p.name for p in out.iterdir()) == before
    assert not outputs._HELD
    from filelock import FileLock

    FileLock(str(out / outputs.LOCK)).acquire(timeout=0)  # nobody holds it any more


# ---------------------------------------------------------------- replacing outputs together


def test_replacing_keeps_a_whole_version_at_every_moment(tmp_path, monkeypatch):
    """The folder at ``dst`` is never moved away (the swap is one atomic exchange), and a reader who
    holds the previous version when it is replaced still reads it whole."""
    dst = tmp_path / "ch01"
    names = ["nb.ipynb", "run.json", "table.csv"]

    def version(k):
        new = outputs.partial_dir(tmp_path, "ch01")
        for name in names:
            (new / name).write_text(str(k))
        made.append(new)
        return new

    made = []

    def contents(fd):
        out = {}
        for name in sorted(os.listdir(fd)):
            f = os.open(name, os.O_RDONLY, dir_fd=fd)
            out[name] = os.read(f, 16).decode()
            os.close(f)
        return out

    outputs.replace_folder(version(0), dst)
    renames, real_rename = [], os.rename
    monkeypatch.setattr(outputs.os, "rename", lambda a, b: (renames.append(Path(a)), real_rename(a, b)))
    held = os.open(dst, os.O_RDONLY)  # a reader inside version 0
    try:
        outputs.replace_folder(version(1), dst)
        assert dst not in renames  # never a moment without dst: exchanged, not moved aside
        assert contents(held) == dict.fromkeys(names, "0")  # the held version, whole
    finally:
        os.close(held)
    fd = os.open(dst, os.O_RDONLY)
    try:
        assert contents(fd) == dict.fromkeys(names, "1")
    finally:
        os.close(fd)
    assert {p.read_text() for p in made[1].iterdir()} == {"0"}  # the exchange left the previous one here
    outputs.replace_folder(version(2), dst)
    for new in made:
        outputs.release_partial(new)  # what run_chapter does after the exchange
    assert {p.read_text() for p in dst.iterdir()} == {"2"}
    assert not list(tmp_path.glob(".partial-*"))


@ON_PREVIOUS_RUN
def test_rerun_replaces_notebook_record_and_tables_together(previous_run, tmp_path):
    out = tmp_path / "runs"
    shutil.copytree(previous_run, out)
    res = run_cli("run", "ch01", "--profile", "quick", *SMALL, "-p", "eps", "0.3", "-o", str(out))
    assert res.returncode == 0, res.stderr
    run = out / "ch01"
    rec = json.loads((run / f"{CH01.stem}.run.json").read_text())
    nb = nbformat.read(run / CH01.notebook, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])][0]
    assert rec["parameters"]["eps"] == 0.3 and "eps = 0.3" in injected.source
    eps_rows = pd.read_csv(run / "results" / "ch01" / "exact_cases.csv")["eps"]
    assert 0.3 in set(eps_rows) and 0.25 not in set(eps_rows)  # the tables of the new run
    assert sorted(p.name for p in out.iterdir()) == [outputs.MARKER, outputs.LOCK, "ch01"]


@ON_PREVIOUS_RUN
def test_files_have_normal_permissions(previous_run):
    run = previous_run / "ch01"
    csvs = list(run.rglob("*.csv"))
    assert csvs
    for p in csvs + [run / CH01.notebook, run / f"{CH01.stem}.run.json"]:
        assert p.stat().st_mode & 0o777 == 0o644, p
    for d in [run, *(p for p in run.rglob("*") if p.is_dir())]:
        assert d.stat().st_mode & 0o777 == 0o755, d


def test_save_table_uses_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = save_table(pd.DataFrame({"a": [1.5]}), "t", str(tmp_path), show=False)
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]  # no temporary file left


# ---------------------------------------------------------------- real signals to a real run


def _wait_for(out: Path, proc, moment: str, seconds=120) -> None:
    """Until the run's partial folder exists ("start": the kernel is starting) or holds its first
    results table ("executing": the notebook is half-way)."""
    pattern = ".partial-*" if moment == "start" else ".partial-*/results/ch01/*.csv"
    deadline = time.time() + seconds
    while time.time() < deadline:
        if list(out.glob(pattern)):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError(f"the run never reached {moment!r}")


@ON_PREVIOUS_RUN
@pytest.mark.parametrize("moment", ["start", "executing"])
@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_leaves_previous_outputs_and_no_partial_folder(previous_run, tmp_path, sig, status, moment):
    out = tmp_path / "runs"
    shutil.copytree(previous_run, out)
    before = snapshot(out)
    proc = subprocess.Popen([sys.executable, "-m", "attnrank_lite", "run", "ch01", "--profile", "quick",
                             "-p", "eps", "0.3", "-o", str(out)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _wait_for(out, proc, moment)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == status, err
    line = one_error_line(err)
    assert signal.Signals(sig).name in line and "unchanged" in line
    assert snapshot(out) == before
    assert not list(out.glob(".partial-*"))


# ---------------------------------------------------------------- one clear line per failure


def _stand_in(tmp_path: Path, body: str) -> Path:
    """Chapter 1's notebook cut to its parameters cell, followed by ``body`` (cell 3 once papermill
    has injected its parameters cell as cell 2)."""
    src = nbformat.read(NOTEBOOK_DIR / CH01.notebook, as_version=4)
    params = [c for c in src.cells if "parameters" in c.metadata.get("tags", [])]
    nb = nbformat.v4.new_notebook(cells=params + [nbformat.v4.new_code_cell(body)], metadata=src.metadata)
    folder = tmp_path / "nbs"
    folder.mkdir()
    nbformat.write(nb, folder / CH01.notebook)
    return folder


@pytest.mark.parametrize("body,kind,needle", [
    ("raise ValueError('boom in cell three')", "cell failed", "failed in cell 3: ValueError: boom in cell three"),
    ("import time\ntime.sleep(60)", "cell timeout", "cell 3 ran longer than the timeout of 3 s"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "kernel died", "kernel died in cell 3"),
])
def test_notebook_failures_are_one_line_with_their_own_status(tmp_path, monkeypatch, capsys, body, kind, needle):
    monkeypatch.setattr(runner, "NOTEBOOK_DIR", _stand_in(tmp_path, body))
    out = tmp_path / "out"
    status = cli.main(["run", "ch01", "--profile", "quick", "--timeout", "3", "-o", str(out)])
    err = capsys.readouterr().err
    assert status == cli.EXIT[kind]
    line = one_error_line(err)
    assert needle in line and "ch01" in line
    assert sorted(p.name for p in out.iterdir()) == [outputs.MARKER, outputs.LOCK]  # nothing half-written
    # --debug adds the traceback
    status = cli.main(["run", "ch01", "--profile", "quick", "--timeout", "3", "-o", str(out), "--debug"])
    assert status == cli.EXIT[kind] and "Traceback" in capsys.readouterr().err


def test_exit_statuses_are_distinct():
    assert len(set(cli.EXIT.values())) == len(cli.EXIT)
    assert cli.EXIT["interrupted (SIGINT)"] == 130


@pytest.mark.parametrize("value", ["0", "-5", "abc"])
def test_timeout_must_be_positive(tmp_path, value):
    res = run_cli("run", "ch01", "--timeout", value, "-o", str(tmp_path / "o"))
    assert res.returncode == 2
    assert "--timeout" in res.stderr and "positive" in res.stderr or "whole number" in res.stderr
    assert not (tmp_path / "o").exists()
    with pytest.raises(ParameterError, match="timeout must be a positive"):
        runner.run_chapter("ch01", profile="quick", outdir=tmp_path / "o", timeout=0)


# ---------------------------------------------------------------- site build


@pytest.fixture
def tiny_build(monkeypatch):
    """The build with no chapters and a stand-in for the jupyter-book command."""
    monkeypatch.setattr(build, "toc_notebooks", lambda: [])
    monkeypatch.setattr(build.site_assets, "stage_mathjax", lambda stage: None)
    calls = {"ok": True}

    def fake_jupyter_book(cmd, cwd):
        out = Path(cmd[cmd.index("--path-output") + 1]) / "_build" / "html"
        out.mkdir(parents=True)
        (out / "index.html").write_text("new site" if calls["ok"] else "half")
        return subprocess.CompletedProcess(cmd, 0 if calls["ok"] else 2)

    monkeypatch.setattr(build, "subprocess", types.SimpleNamespace(run=fake_jupyter_book))
    return calls


def test_failed_build_keeps_the_previous_site(tmp_path, tiny_build):
    out = tmp_path / "site"
    html = build.build_book(profile="quick", out=out, log=lambda *_: None)
    assert (html / "index.html").read_text() == "new site"
    (html / "index.html").write_text("previous site")
    tiny_build["ok"] = False
    with pytest.raises(build.BuildFailed, match="previous site .* is unchanged"):
        build.build_book(profile="quick", out=out, log=lambda *_: None)
    assert (html / "index.html").read_text() == "previous site"
    assert sorted(p.name for p in out.iterdir()) == [outputs.MARKER, outputs.LOCK, "html"]  # no partial folder
    tiny_build["ok"] = True
    build.build_book(profile="quick", out=out, log=lambda *_: None)
    assert (html / "index.html").read_text() == "new site"
    assert sorted(p.name for p in out.iterdir()) == [outputs.MARKER, outputs.LOCK, "html"]


@pytest.mark.parametrize("entries", [["index.html"], ["html"], ["html", "notes.txt"]])
def test_build_refuses_a_foreign_folder(tmp_path, tiny_build, entries):
    for name in entries:
        (tmp_path / name).mkdir() if "." not in name else (tmp_path / name).write_text("someone's")
    with pytest.raises(outputs.OutputError, match="not empty"):
        build.build_book(profile="quick", out=tmp_path, log=lambda *_: None)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(entries)


def test_build_refuses_a_folder_that_only_looks_like_an_old_build(tmp_path, tiny_build):
    for name in ("html", "staging", "jb"):
        (tmp_path / name).mkdir()
    with pytest.raises(outputs.OutputError, match="not empty and was not created by attnrank_lite"):
        build.build_book(profile="quick", out=tmp_path, log=lambda *_: None)
    assert not (tmp_path / outputs.MARKER).exists()


# ---------------------------------------------------------------- refuse what cannot finish


def test_ball_grid_estimate_bounds_the_real_grid():
    from attnrank_lite.laws.geometry import gaussian_ball

    for d, beta, s in [(1, 1000.0, 1.0), (2, 256.0, 1.0), (2, 64.0, 0.5), (3, 64.0, 1.0), (3, 16.0, 0.5)]:
        n = gaussian_ball(d, beta, spacing_factor=s)[0].shape[0]
        est = ball_grid_points(d, beta, s)
        assert n <= est <= 2.5 * n, (d, beta, s, n, est)


def test_memory_refusal_names_parameter_estimate_and_limit():
    spec = get_chapter("ch03")
    values = spec.validate({**spec.defaults(), "betas": [64.0, 100000.0]})
    need = largest_need(spec, values)
    assert need.param == "betas" and need.bytes > 46 * 2 ** 30  # one 78,540^2 float64 matrix is 46 GiB
    with pytest.raises(TooLarge, match=r"parameter 'betas' needs about .* GiB .* more than the 8\.0 GiB"):
        check_memory(spec, values, available=8 * 2 ** 30)
    d3 = spec.validate({**spec.defaults(), "include_d3": True, "d3_betas": [8.0, 10000.0]})
    assert largest_need(spec, d3).param == "d3_betas" and largest_need(spec, d3).bytes > 2e12
    for s in (get_chapter(k) for k in ("ch01", "ch02", "ch03", "ch04", "ch05", "ch06")):
        for prof in ("quick", "book", "paper"):  # every profile fits in 8 GiB
            check_memory(s, s.validate(s.profile(prof)), available=8 * 2 ** 30)


def test_memory_refusal_before_any_work(tmp_path):
    res = run_cli("run", "ch03", "-p", "betas", "[64.0, 100000.0]", "-o", str(tmp_path / "o"),
                  env={"ATTNRANK_MEMORY_LIMIT": "16G"})
    assert res.returncode == cli.EXIT["too large for this machine"]
    line = one_error_line(res.stderr)
    assert "'betas'" in line and "GiB" in line and "16.0 GiB available" in line
    assert not (tmp_path / "o").exists()


def test_a_containers_cgroup_limit_caps_the_available_memory(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNRANK_MEMORY_LIMIT", raising=False)
    monkeypatch.setattr(memory, "CGROUP", tmp_path)
    (tmp_path / "memory.max").write_text(f"{2 * 2 ** 20}\n")
    (tmp_path / "memory.current").write_text(f"{2 ** 20}\n")
    assert memory.available_memory() == 2 ** 20  # the cgroup's headroom, far below the machine's
    (tmp_path / "memory.max").write_text("max\n")  # a cgroup without a limit
    assert memory.available_memory() > 2 ** 20


def test_notebook_validation_checks_memory_and_underscore_names(monkeypatch):
    ns = dict(CH01.defaults())
    with pytest.raises(ParameterError, match="unknown parameter.*'_eps'"):
        validate_notebook_parameters("ch01", {**ns, "_eps": 0.1})
    ipython = {"_": None, "__": None, "___": None, "_i": "", "_ii": "", "_iii": "", "_i3": "", "_7": 1,
               "_ih": [], "_oh": {}, "_dh": [], "_exit_code": 0, "__name__": "__main__", "In": [], "Out": {}}
    assert validate_notebook_parameters("ch01", {**ns, **ipython}).eps == ns["eps"]
    monkeypatch.setenv("ATTNRANK_MEMORY_LIMIT", "1M")
    with pytest.raises(TooLarge, match="split_factors"):
        validate_notebook_parameters("ch01", ns)


def test_papermill_underscore_parameter_is_caught_by_the_notebook(tmp_path):
    import papermill as pm

    with pytest.raises(pm.PapermillExecutionError, match="unknown parameter.*'_n'"):
        pm.execute_notebook(str(NOTEBOOK_DIR / CH01.notebook), str(tmp_path / "out.ipynb"),
                            parameters={"_n": 5}, cwd=str(tmp_path), kernel_name="python3", progress_bar=False)


_BUILD_SCRIPT = r'''
import sys, time, types
from pathlib import Path
from attnrank_lite.site import build, cli
build.toc_notebooks = lambda: []
build.site_assets.stage_mathjax = lambda stage: None

def slow_jupyter_book(cmd, cwd):  # stands in for Sphinx: half a site, then a long wait
    html = Path(cmd[cmd.index("--path-output") + 1]) / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("half a site")
    (Path(sys.argv[2]) / "sphinx-started").write_text("")
    time.sleep(60)
    return types.SimpleNamespace(returncode=0)

build.subprocess = types.SimpleNamespace(run=slow_jupyter_book)
sys.exit(cli.main(["build", "--profile", "quick", "-o", sys.argv[1]]))
'''


@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_site_build_keeps_the_previous_site(tmp_path, sig, status):
    out = outputs.prepare_output(tmp_path / "site")
    (out / "html").mkdir()
    (out / "html" / "index.html").write_text("previous site")
    before = snapshot(out)
    flag = tmp_path / "flags"
    flag.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _BUILD_SCRIPT, str(out), str(flag)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (flag / "sphinx-started").exists():
        assert proc.poll() is None and time.time() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "previous site" in one_error_line(err) and "unchanged" in err
    assert {k: v for k, v in snapshot(out).items() if k != outputs.LOCK} == before
    assert sorted(p.name for p in out.iterdir()) == [outputs.MARKER, outputs.LOCK, "html"]
