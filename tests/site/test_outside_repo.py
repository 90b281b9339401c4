"""Chapter 1 runs outside the repository, in a plain Jupyter kernel without myst-nb (as in Colab,
Binder or a user's own Jupyter with only the package installed): glue falls back to showing the
value, and the results tables land relative to the run's folder."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from attnrank_lite.site.chapters import NOTEBOOK_DIR, get_chapter
from attnrank_lite.site.glue import glue

REPO = Path(__file__).resolve().parents[2]

#: a sitecustomize that makes ``import myst_nb`` fail in every Python started with it on the path,
#: and notes each refusal in a file (so the test knows the chapter really asked and was refused)
HIDE_MYST_NB = '''
import os, sys

class _HideMystNb:
    def find_spec(self, name, path=None, target=None):
        if name == "myst_nb" or name.startswith("myst_nb."):
            with open(os.environ["ATTNRANK_TEST_HIDDEN_LOG"], "a") as fh:
                fh.write(name + "\\n")
            raise ImportError(f"No module named {name!r} (hidden by the test)")
        return None

sys.meta_path.insert(0, _HideMystNb())
'''


def test_chapter_1_runs_in_a_kernel_without_myst_nb_outside_the_repository(tmp_path):
    spec = get_chapter("ch01")
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE_MYST_NB)
    work = tmp_path / "elsewhere"  # a user's folder: only the notebook, no repository around it
    work.mkdir()
    shutil.copy2(NOTEBOOK_DIR / spec.notebook, work / spec.notebook)
    hidden_log = tmp_path / "hidden.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hide), str(REPO)]),
           "ATTNRANK_TEST_HIDDEN_LOG": str(hidden_log), "MPLBACKEND": "module://matplotlib_inline.backend_inline",
           "ATTNRANK_PROGRESS": "0"}
    # the quick profile made smaller still (as in test_outputs.SMALL): this checks where glue and
    # tables go without myst-nb, not the numbers
    values = {**spec.profile("quick"), "n_circle": 64, "split_factors": [1, 4], "n_trials": 20}
    params = [x for name, value in values.items() for x in ("-y", json.dumps({name: value}))]
    res = subprocess.run([sys.executable, "-m", "papermill", spec.notebook, "out.ipynb", "-k", "python3",
                          "--no-progress-bar", *params], cwd=work, env=env, capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    assert hidden_log.read_text().splitlines()[0] == "myst_nb"  # the kernel asked for myst-nb and was refused
    nb = nbformat.read(work / "out.ipynb", as_version=4)
    texts = [o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if o.get("output_type") == "stream"]
    prose = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    in_prose = set(re.findall(r"\{glue:text\}`([A-Za-z0-9_]+)", prose))
    shown = {line.split(": ", 1)[0] for t in texts for line in t.splitlines() if ": " in line}
    assert in_prose and in_prose <= shown  # every number glued into the prose is shown under its name
    tables = sorted(p.relative_to(work).as_posix() for p in (work / "results" / "ch01").glob("*.csv"))
    assert tables and all(t.startswith("results/ch01/") for t in tables)  # relative to the run


def test_glue_without_myst_nb_shows_the_value(monkeypatch, capsys):
    import attnrank_lite.site.glue as g

    monkeypatch.setattr(g, "_myst_glue", None)
    glue("n_points", 1024, display=False)
    assert capsys.readouterr().out == "n_points: 1024\n"
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda v: shown.append(v))
    glue("table", [1, 2], display=True)
    glue("hidden_table", [3], display=False)
    glue("ratio", 0.5, display=True)
    assert shown == [[1, 2]] and capsys.readouterr().out == "ratio: 0.5\n"


def test_glue_code_without_myst_nb_shows_the_text(monkeypatch, capsys):
    import attnrank_lite.site.glue as g

    monkeypatch.setattr(g, "_myst_glue", None)
    g.glue_code("command", "python -m attnrank_lite sweep --d 2")
    assert capsys.readouterr().out == "command: python -m attnrank_lite sweep --d 2\n"


def test_glue_code_glues_inline_code(monkeypatch):
    import attnrank_lite.site.glue as g

    seen = []
    monkeypatch.setattr(g, "_myst_glue", lambda name, value, display: seen.append((name, value.data, display)))
    g.glue_code("a", "run --x 1")
    g.glue_code("b", "echo `date`")
    assert seen == [("a", "` run --x 1 `", False), ("b", "`` echo `date` ``", False)]
