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
    assert appendix.api_href("attnrank_lite.rank_bracket") is None


@pytest.mark.xdist_group("book")
def test_theorem_index_links_land_on_api_entries(built_site: Path):
    index = (built_site / "book" / "theorems.html").read_text()
    links = re.findall(r'href="(api/(\w+)\.html)#([\w.]+)"', index)
    assert len(links) >= 10
    pages = {}
    for href, group, anchor in links:
        html = pages.setdefault(href, (built_site / "book" / href).read_text())
        assert f'id="{anchor}"' in html, anchor
