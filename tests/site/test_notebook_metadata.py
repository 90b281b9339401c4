"""Issue 22, finding 16: an executed (downloadable) notebook names no path of the machine that built
it. Papermill records ``input_path`` and ``output_path`` as given, the absolute paths of the source
notebook and of the run folder; :func:`attnrank_lite.site.runner.run_chapter` rewrites them
relative to the repository."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from attnrank_lite.site import runner
from attnrank_lite.site.chapters import NOTEBOOK_DIR, get_chapter
from attnrank_lite.site.paths import REPO

CH01 = get_chapter("ch01")


def _short_chapter(tmp_path: Path) -> Path:
    """Chapter 1's notebook cut to its parameters cell and one cheap cell (a real papermill run)."""
    src = nbformat.read(NOTEBOOK_DIR / CH01.notebook, as_version=4)
    params = [c for c in src.cells if "parameters" in c.metadata.get("tags", [])]
    nb = nbformat.v4.new_notebook(cells=params + [nbformat.v4.new_code_cell("x = n + 1")],
                                  metadata=src.metadata)
    folder = tmp_path / "nbs"
    folder.mkdir()
    nbformat.write(nb, folder / CH01.notebook)
    return folder


def test_executed_notebook_carries_no_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "NOTEBOOK_DIR", _short_chapter(tmp_path))
    out = tmp_path / "out"
    runner.run_chapter("ch01", profile="quick", outdir=out, timeout=120)
    path = out / "ch01" / CH01.notebook
    meta = json.loads(path.read_text())["metadata"]["papermill"]
    assert meta["input_path"] == f"notebooks/{CH01.notebook}"
    assert meta["output_path"] == CH01.notebook
    assert meta["parameters"]["n"] == CH01.profile("quick")["n"]  # the rest of the metadata is kept
    text = path.read_text()
    for where in {str(tmp_path), str(REPO), str(Path.home())}:
        assert where not in text, where


def test_a_notebook_papermill_did_not_save_names_no_cell(tmp_path, monkeypatch):
    """Only what ``nbformat.read`` raises for a missing or cut-short file means "no notebook";
    any other error is not swallowed."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("y")])
    nb.cells[0].execution_count, nb.cells[1].metadata["papermill"] = 1, {"status": "running"}
    nbformat.write(nb, tmp_path / "saved.ipynb")
    assert runner._failed_cell(tmp_path / "saved.ipynb") == "cell 2"
    assert runner._read_saved(tmp_path / "saved.ipynb").cells[0].execution_count == 1
    assert runner._read_saved(tmp_path / "none.ipynb") is None
    cut = tmp_path / "cut.ipynb"
    cut.write_text((tmp_path / "saved.ipynb").read_text()[:40])
    assert runner._read_saved(cut) is None
    assert runner._failed_cell(cut) == runner._failed_cell(tmp_path / "none.ipynb") == "an unknown cell"
    monkeypatch.setattr(runner.nbformat, "read", lambda *a, **k: {}["bug"])
    with pytest.raises(KeyError):
        runner._failed_cell(tmp_path / "saved.ipynb")
