"""Static checks of the chapter notebooks: clean, parameterised, in sync with their specs."""
import ast
from pathlib import Path

import nbformat
import pytest
import yaml

from attnrank_lite.site.chapters import NOTEBOOK_DIR, all_chapters, get_chapter
from attnrank_lite.site.paths import toc_notebooks

NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
REPO = Path(__file__).resolve().parents[2]


def test_every_notebook_has_a_spec_and_is_in_the_toc():
    specs = {s.notebook for s in all_chapters()}
    files = {p.name for p in NOTEBOOKS}
    assert specs == files
    assert set(toc_notebooks()) <= {p.stem for p in NOTEBOOKS}
    assert {p.stem for p in NOTEBOOKS} <= set(toc_notebooks())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_clean_and_parameterised(path):
    nb = nbformat.read(path, as_version=4)
    spec = get_chapter(path.stem)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "commit without outputs"
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    tree = ast.parse(params[0].source)
    values = {}
    for node in tree.body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, "only literal assignments"
        values[node.targets[0].id] = ast.literal_eval(node.value)
    assert values == spec.defaults()
    nxt = code[code.index(params[0]) + 1].source
    assert f'validate_notebook_parameters("{spec.key}", globals())' in nxt


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_statement_boxes_say_where_they_come_from(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    boxes = text.split("```{prf:")[1:]
    assert boxes, "every chapter states something"
    for box in boxes:
        kind = box.split("}", 1)[0]
        if kind == "proof":
            continue
        body = box.split("```", 1)[0]
        assert any(m in body for m in ("Claim of the paper", "Proved here", "Numerical evidence here",
                                       "Definition")), box[:120]


def test_toc_lists_existing_files():
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    text = yaml.safe_dump(toc)
    for line in text.splitlines():
        if "file:" in line or line.startswith("root:"):
            f = line.split(":", 1)[1].strip()
            assert (REPO / f"{f}.md").exists() or (REPO / f"{f}.ipynb").exists(), f


#: characters of code that fit the site's code column without horizontal scrolling (measured in
#: Chromium at a 1280 px window: 77 fit, 78 overflow); the browser test checks the rendered pages
CODE_COLUMN = 76


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_lines_fit_the_column(path):
    nb = nbformat.read(path, as_version=4)
    long = [line for c in nb.cells if c.cell_type == "code" for line in c.source.splitlines()
            if len(line) > CODE_COLUMN]
    assert not long, f"code lines longer than {CODE_COLUMN} characters: {long[:3]}"


def _code_trees(path):
    nb = nbformat.read(path, as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            yield c, ast.parse(c.source)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_cell_defines_a_function(path):
    """Logic belongs in the package (with a test); a cell calls it."""
    defs = [n.name for _, tree in _code_trees(path) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert not defs, f"code cells define {defs}"


def _aliases(paths):
    """{module: {alias: [notebooks]}} of every ``import m as a`` / ``from p import m as a``."""
    out: dict = {}
    for path in paths:
        for _, tree in _code_trees(path):
            for n in ast.walk(tree):
                if isinstance(n, ast.Import):
                    pairs = [(a.name, a.asname) for a in n.names if a.asname]
                elif isinstance(n, ast.ImportFrom):
                    pairs = [(f"{n.module}.{a.name}", a.asname) for a in n.names if a.asname]
                else:
                    continue
                for mod, alias in pairs:
                    out.setdefault(mod, {}).setdefault(alias, []).append(path.stem)
    return out


def test_one_alias_per_module_across_chapters():
    """A reader moving between chapters meets each module under one name, and each name means
    one module."""
    aliases = _aliases(NOTEBOOKS)
    assert aliases, "no aliased imports found: the check would be empty"
    several = {m: a for m, a in aliases.items() if len(a) > 1}
    assert not several, f"modules imported under more than one alias: {several}"
    owners: dict = {}
    for mod, a in aliases.items():
        for alias in a:
            owners.setdefault(alias, set()).add(mod)
    shared = {a: m for a, m in owners.items() if len(m) > 1}
    assert not shared, f"one alias for several modules: {shared}"


def test_alias_check_can_fail(tmp_path):
    for name, alias in (("a", "sw"), ("b", "swp")):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(f"from attnrank_lite.laws import sweeps as {alias}")]
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
    aliases = _aliases(sorted(tmp_path.glob("*.ipynb")))
    assert aliases == {"attnrank_lite.laws.sweeps": {"sw": ["a"], "swp": ["b"]}}
