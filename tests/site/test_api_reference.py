"""The API reference: one page per subpackage, naming every module, and the theorem index's code
paths linking to entries that exist in the built site."""
from __future__ import annotations

import pkgutil
import re
from importlib import import_module
from pathlib import Path

import pytest

from attnrank_lite.site import appendix
from attnrank_lite.site.paths import REPO, toc_files


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

    from attnrank_lite.site.api_links import api_names, link_first_mentions

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
    from attnrank_lite.site.api_links import link_first_mentions

    names = {"rank_bracket": "attnrank_lite.engine.bracket.rank_bracket"}
    cells = ["Use `rank_bracket` here.\n\n```python\n`rank_bracket`\n```", "Again `rank_bracket`."]
    out = link_first_mentions(cells, names)
    assert out[0].startswith("Use {py:obj}`rank_bracket <attnrank_lite.engine.bracket.rank_bracket>` here.")
    assert "```python\n`rank_bracket`\n```" in out[0] and out[1] == cells[1]
