"""The package's import graph, read from the source with ``ast`` (nothing is imported).

Three rules of the layout:

* imports run one way through the concern subpackages, ``site`` -> ``calibration`` ->
  ``quotient`` -> ``laws`` -> ``basics`` -> ``engine``: a module may import its own subpackage and those
  after it, never one before it (the top-level ``__init__`` and ``__main__`` sit
  above all of them);
* in particular the mathematics (every module outside ``attnrank_lite/site/``, except the
  entry point ``__main__.py`` that hands the command line to ``site.cli``) imports nothing from
  the book machinery in ``attnrank_lite/site/``;
* no module imports itself back through a chain of imports (no loop, at module level or inside
  a function).
"""
from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "attnrank_lite"
SITE = "attnrank_lite.site"
#: the command-line entry point ``python -m attnrank_lite``: a one-line delegation to ``site.cli``
ENTRY = "attnrank_lite.__main__"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_edges(path: Path, name: str, modules: set[str]) -> set[str]:
    """Modules of the package that the module ``name`` (source at ``path``) imports anywhere."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from X import y`` imports X, or the submodule X.y when y is a module
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
        else:
            continue
        for t in targets:
            # the longest module of the package that the dotted target names
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def import_graph(root: Path = PKG) -> dict[str, set[str]]:
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    modules = set(files)
    return {name: import_edges(path, name, modules) for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state:
            found = visit(u)
            if found:
                return found
    return None


def site_imports_from_mathematics(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((u, v) for u, vs in graph.items() for v in vs
                  if u != ENTRY and not _in_site(u) and _in_site(v))


#: the concern subpackages, from the top (may import all after it) to the bottom (imports none);
#: ``checker``, the independent checker of certificate files, sits below the engine and imports
#: nothing from the package at all (see ``test_checker_is_independent``)
LAYERS = ("site", "calibration", "quotient", "laws", "basics", "engine", "checker")
CHECKER = "attnrank_lite.checker"


def layer_of(name: str) -> int | None:
    """Index in ``LAYERS`` of the subpackage holding module ``name``; None above all layers."""
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return None


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Edges (importer, imported) that run against the layer order."""
    bad = []
    for u, vs in graph.items():
        lu = layer_of(u)
        for v in vs:
            lv = layer_of(v)
            if lu is not None and (lv is None or lv < lu):
                bad.append((u, v))
    return sorted(bad)


def _in_site(name: str) -> bool:
    return name == SITE or name.startswith(SITE + ".")


def test_graph_reads_the_real_package():
    graph = import_graph()
    assert "attnrank_lite.site.runner" in graph and "attnrank_lite.engine.attention" in graph
    # known edges, relative and absolute forms
    assert "attnrank_lite.site.chapters" in graph["attnrank_lite.site.params"]
    assert "attnrank_lite.site.spec" in graph["attnrank_lite.site.chapters.ch01"]
    assert "attnrank_lite.site.cli" in graph["attnrank_lite.__main__"]


def test_mathematics_imports_nothing_from_site():
    assert site_imports_from_mathematics(import_graph()) == []


def test_imports_run_one_way_through_the_layers():
    graph = import_graph()
    assert upward_imports(graph) == []
    # every module of the mathematics sits in one of the layers (nothing loose at the top)
    loose = sorted(m for m in graph if layer_of(m) is None
                   and m not in ("attnrank_lite", ENTRY))
    assert loose == [], f"modules outside the concern subpackages: {loose}"


def test_no_import_loop():
    assert find_cycle(import_graph()) is None


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def toy(tmp_path):
    root = tmp_path / "attnrank_lite"
    _write(root, "__init__.py", "from .engine.norms import row_l1\n")
    _write(root, "engine/__init__.py", "")
    _write(root, "engine/norms.py", "import numpy as np\n")
    _write(root, "laws/__init__.py", "")
    _write(root, "laws/geometry.py", "from ..engine.norms import row_l1\n")
    _write(root, "site/__init__.py", "")
    _write(root, "site/spec.py", "")
    _write(root, "site/params.py", "from .chapters import get_chapter\n")
    _write(root, "site/chapters/__init__.py", "from ..spec import ChapterSpec\n")
    return root


def test_checks_can_fail_on_a_loop_and_on_a_forbidden_import(toy):
    assert find_cycle(import_graph(toy)) is None
    assert site_imports_from_mathematics(import_graph(toy)) == []
    # the old loop: the chapters registry importing params, inside a function
    _write(toy, "site/chapters/__init__.py",
           "from ..spec import ChapterSpec\n\ndef f():\n    from ..params import validate\n")
    cycle = find_cycle(import_graph(toy))
    assert cycle is not None and {"attnrank_lite.site.params", "attnrank_lite.site.chapters"} <= set(cycle)
    # the mathematics reaching into the machinery, in absolute form
    _write(toy, "engine/norms.py", "from attnrank_lite.site.spec import Param\n")
    assert site_imports_from_mathematics(import_graph(toy)) == [
        ("attnrank_lite.engine.norms", "attnrank_lite.site.spec")]


def test_contributing_module_map_matches_the_tree():
    """CONTRIBUTING.md names every module of the package, and every file it names exists."""
    import re

    text = (PKG.parent / "CONTRIBUTING.md").read_text()
    named = set(re.findall(r"`([\w/]+\.py)`", text))
    modules = {p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py")
               if p.name != "__init__.py" and "chapters" not in p.parts}
    missing = sorted(m for m in modules if m not in named and m.rsplit("/", 1)[-1] not in named)
    assert not missing, f"modules missing from CONTRIBUTING.md's layout: {missing}"
    files = set()
    for top, dirs, names in os.walk(PKG.parent):  # the checkout, not .venv or build folders
        dirs[:] = [d for d in dirs if not d.startswith((".", "_build", "__pycache__"))]
        files |= {Path(top, n).relative_to(PKG.parent).as_posix() for n in names if n.endswith(".py")}
    stale = sorted(n for n in named if "NN" not in n
                   and not any(f == n or f.endswith("/" + n) for f in files))
    assert not stale, f"CONTRIBUTING.md names files that do not exist: {stale}"


def test_checker_is_independent():
    """The independent checker imports nothing from the package outside itself, and no module of
    the mathematics imports it (only the command line compares the two)."""
    graph = import_graph()
    inside = {m for m in graph if m == CHECKER or m.startswith(CHECKER + ".")}
    assert {f"{CHECKER}.reader", f"{CHECKER}.conditions", f"{CHECKER}.instance"} <= inside
    outward = sorted((u, v) for u in inside for v in graph[u] if v not in inside)
    assert outward == [], f"the checker imports from the package: {outward}"
    users = sorted(u for u, vs in graph.items() if u not in inside and not _in_site(u) and vs & inside)
    assert users == [], f"modules of the mathematics importing the checker: {users}"
    # and the rule can fail: a checker module importing the engine is an upward edge
    bad = {**graph, f"{CHECKER}.reader": graph[f"{CHECKER}.reader"] | {"attnrank_lite.engine.checks"}}
    assert (f"{CHECKER}.reader", "attnrank_lite.engine.checks") in upward_imports(bad)
