"""The API reference: one page per subpackage, naming every module, and the theorem index's code
paths linking to entries that exist in the built site."""
from __future__ import annotations

import inspect
import pkgutil
import re
from importlib import import_module
from pathlib import Path

import pytest

from attnrank_lite.site import appendix
from attnrank_lite.site.paths import REPO, toc_files

#: names of package functions that the chapters also use for other things: a table column
#: (``verdict``)
NOT_LINKED = frozenset({"verdict"})
#: inline code that is exactly one identifier, not already inside a role (no ``}`` before it)
_MENTION = re.compile(r"(?<![}\w`])`([A-Za-z_]\w*)`(?!`)")


def api_names() -> dict[str, str]:
    """Public functions and classes of the documented subpackages whose name is unique across
    them: ``{name: dotted path in the defining module}``."""
    seen: dict[str, set[str]] = {}
    for group in appendix.API_GROUPS:
        pkg = import_module(f"attnrank_lite.{group}")
        for info in pkgutil.iter_modules(pkg.__path__):
            mod = import_module(f"{pkg.__name__}.{info.name}")
            for name, obj in vars(mod).items():
                if (not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                        and obj.__module__ == mod.__name__):
                    seen.setdefault(name, set()).add(f"{mod.__name__}.{name}")
    return {name: paths.pop() for name, paths in seen.items() if len(paths) == 1 and name not in NOT_LINKED}


def _prose_lines(text: str):
    """Indices of the lines of a markdown cell outside code fences and directive options."""
    fence = None
    for i, line in enumerate(text.split("\n")):
        s = line.lstrip()
        m = re.match(r"(`{3,}|~{3,})(.*)", s)
        if m:
            if fence is None and not m.group(2).startswith("{"):
                fence = m.group(1)  # a code block: skip until it closes
            elif fence is not None and s.startswith(fence) and not m.group(2).strip():
                fence = None
            continue
        if fence is None and not s.startswith(":"):
            yield i


def link_first_mentions(cells: list[str], names: dict[str, str]) -> list[str]:
    """The markdown ``cells`` of one chapter with each name's first mention made a ``{py:obj}`` link
    (what the chapters are checked to do: a reader goes from the page to the docstring)."""
    done: set[str] = set()
    out = []
    for text in cells:
        lines = text.split("\n")

        def repl(m):
            name = m.group(1)
            if name in names and name not in done:
                done.add(name)
                return f"{{py:obj}}`{name} <{names[name]}>`"
            return m.group(0)

        for i in _prose_lines(text):
            lines[i] = _MENTION.sub(repl, lines[i])
        done.update(re.findall(r"\{py:obj\}`(\w+) <", text))
        out.append("\n".join(lines))
    return out


@pytest.mark.parametrize("group", appendix.API_GROUPS)
def test_each_subpackage_page_documents_every_module(group):
    page = (REPO / "book" / "api" / f"{group}.md").read_text()
    pkg = import_module(f"attnrank_lite.{group}")
    modules = {m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.ispkg}
    documented = set(re.findall(rf"^\.\. automodule:: attnrank_lite\.{group}\.(\w+)$", page, re.M))
    assert documented == modules
    assert f"book/api/{group}" in toc_files()


def test_api_href_only_for_documented_subpackages():
    assert appendix.api_href("attnrank_lite.laws.fitting.fit_slope") == \
        "api/laws.html#attnrank_lite.laws.fitting.fit_slope"
    assert appendix.api_href("attnrank_lite.site.cli.main") is None
    # a name re-exported by the package links to the module that defines (and documents) it
    assert appendix.api_href("attnrank_lite.rank_bracket") == \
        "api/engine.html#attnrank_lite.engine.bracket.rank_bracket"


@pytest.mark.xdist_group("book")
def test_theorem_index_links_land_on_api_entries(built_site: Path):
    index = (built_site / "book" / "theorems.html").read_text()
    links = re.findall(r'href="(api/(\w+)\.html)#([\w.]+)"', index)
    assert len(links) >= 10
    pages = {}
    for href, group, anchor in links:
        html = pages.setdefault(href, (built_site / "book" / href).read_text())
        assert f'id="{anchor}"' in html, anchor


def test_chapters_link_their_first_mention_of_a_package_function():
    import nbformat

    names = api_names()
    assert names["rank_bracket"] == "attnrank_lite.engine.bracket.rank_bracket"
    linked = 0
    for nb_path in sorted((REPO / "notebooks").glob("0*.ipynb")):
        md = [c.source for c in nbformat.read(nb_path, 4).cells if c.cell_type == "markdown"]
        assert link_first_mentions(md, names) == md, f"{nb_path.name}: an unlinked first mention"
        for name, target in re.findall(r"\{py:obj\}`(\w+) <([\w.]+)>`", "\n".join(md)):
            mod, _, attr = target.rpartition(".")
            assert attr == name and getattr(import_module(mod), attr) is not None
            assert appendix.api_href(target) is not None
            linked += 1
    assert linked >= 10


def test_linking_can_fail_and_skips_code():
    names = {"rank_bracket": "attnrank_lite.engine.bracket.rank_bracket"}
    cells = ["Use `rank_bracket` here.\n\n```python\n`rank_bracket`\n```", "Again `rank_bracket`."]
    out = link_first_mentions(cells, names)
    assert out[0].startswith("Use {py:obj}`rank_bracket <attnrank_lite.engine.bracket.rank_bracket>` here.")
    assert "```python\n`rank_bracket`\n```" in out[0] and out[1] == cells[1]
