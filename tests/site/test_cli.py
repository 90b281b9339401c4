"""The command line and parameter validation: bad input fails at once, outputs are atomic."""
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attnrank_lite.site import outputs, runner
from attnrank_lite.site.chapters import NOTEBOOK_DIR, all_chapters, get_chapter
from attnrank_lite.site.params import ParameterError, validate_notebook_parameters

REPO = Path(__file__).resolve().parents[2]


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "attnrank_lite", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, timeout=600)


def test_list_names_every_chapter_and_parameter():
    out = cli("list")
    assert out.returncode == 0, out.stderr
    for spec in all_chapters():
        assert spec.notebook in out.stdout
        for p in spec.params:
            assert f"{p.name} = {p.default!r}" in out.stdout


@pytest.mark.parametrize("args,needle", [
    (["-p", "bta", "3"], "unknown parameter 'bta'"),
    (["-p", "eps", "abc"], "parameter 'eps' must be a number >= 1e-06 and <= 0.999; got 'abc'"),
    (["-p", "eps", "1.5"], "parameter 'eps' must be a number"),
    (["-p", "n", "3.5"], "parameter 'n' must be an integer"),
    (["-p", "eps_values", "[0.1, -1]"], "parameter 'eps_values' must be a list"),
    (["-p", "blocks", "100"], "parameter 'blocks' must be at most n = 48"),
    (["--profile", "huge"], "invalid choice: 'huge'"),
])
def test_bad_parameters_fail_before_any_work(tmp_path, args, needle):
    out_dir = tmp_path / "out"
    res = cli("run", "ch01", *args, "-o", str(out_dir))
    assert res.returncode == 2
    assert needle in res.stderr
    assert not out_dir.exists()  # nothing half-written


def test_unknown_parameter_message_lists_allowed_names(tmp_path):
    res = cli("run", "ch01", "-p", "bta", "3", "-o", str(tmp_path / "o"))
    for p in get_chapter("ch01").params:
        assert p.name in res.stderr


def test_unknown_chapter(tmp_path):
    res = cli("run", "no-such-chapter", "-o", str(tmp_path / "o"))
    assert res.returncode == 2 and "unknown chapter 'no-such-chapter'" in res.stderr


def test_run_writes_notebook_tables_and_record(tmp_path):
    # the quick profile made smaller still: this test checks the files a run leaves, not its numbers
    small = ("-p", "n_circle", "64", "-p", "split_factors", "[1, 4]", "-p", "n_trials", "20")
    res = cli("run", "1", "--profile", "quick", *small, "-p", "eps", "0.3", "-o", str(tmp_path))
    assert res.returncode == 0, res.stderr
    run = tmp_path / "ch01"
    nb = nbformat.read(run / "01_approximation_rank.ipynb", as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "eps = 0.3" in injected[0].source
    assert injected[0].source.startswith("# Parameters of this run\n")  # shown once, as this run's
    defaults = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert "hide-input" in defaults[0].metadata.tags and "eps = 0.25" in defaults[0].source  # folded
    rec = json.loads((run / "01_approximation_rank.run.json").read_text())
    assert rec["parameters"]["eps"] == 0.3 and rec["profile"] == "quick"
    assert rec["parameters"]["n"] == get_chapter("ch01").profiles["quick"]["n"]
    assert rec["results"] and all((run / r).exists() for r in rec["results"])
    sha = subprocess.run(["sha256sum", str(REPO / "requirements.txt")], capture_output=True, text=True).stdout
    assert rec["lock"] == {"file": "requirements.txt", "sha256": sha.split()[0]}  # the lock file it came from
    assert not list(tmp_path.glob(".partial-*"))


def test_failing_notebook_leaves_nothing_behind(tmp_path, monkeypatch):
    src = nbformat.read(NOTEBOOK_DIR / "01_approximation_rank.ipynb", as_version=4)
    src.cells.insert(4, nbformat.v4.new_code_cell("raise RuntimeError('boom in the middle')"))
    fake = tmp_path / "nbs"
    fake.mkdir()
    nbformat.write(src, fake / "01_approximation_rank.ipynb")
    monkeypatch.setattr(runner, "NOTEBOOK_DIR", fake)
    out = tmp_path / "out"
    with pytest.raises(runner.RunFailed, match="boom in the middle"):
        runner.run_chapter("ch01", profile="quick", outdir=out)
    assert sorted(p.name for p in out.iterdir()) == [outputs.MARKER, outputs.LOCK]  # marker and lock, nothing else


def test_notebook_validation_rejects_stray_and_bad_values():
    ns = dict(get_chapter("ch01").defaults())
    assert validate_notebook_parameters("ch01", ns).eps == 0.25
    with pytest.raises(ParameterError, match="unknown parameter.*'betaa'"):
        validate_notebook_parameters("ch01", {**ns, "betaa": 2.0})
    with pytest.raises(ParameterError, match="parameter 'beta' must be"):
        validate_notebook_parameters("ch01", {**ns, "beta": -1.0})
    with pytest.raises(ParameterError, match="missing"):
        validate_notebook_parameters("ch01", {k: v for k, v in ns.items() if k != "seed"})


def test_profiles_are_valid_for_every_chapter():
    for spec in all_chapters():
        for prof in ("quick", "book", "paper"):
            spec.validate(spec.profile(prof))
