"""Issue 25: search result titles without raw TeX, a visible version and a changelog page."""
from __future__ import annotations

import json
import re
import tomllib

import pytest

import attnrank_lite
from attnrank_lite.site import sphinx_ext
from attnrank_lite.site.paths import REPO


@pytest.mark.parametrize("tex, plain", [
    (r"\ell_1", "ℓ₁"),
    ("(d-1)/2", "(d−1)/2"),
    (r"\operatorname{rank}_\varepsilon", "rank_ε"),
    (r"Brackets against \beta: slope d/2", "Brackets against β: slope d/2"),
    (r"The constants the \Theta hides", "The constants the Θ hides"),
    (r"Tolerance-indexed dimension r(\tau)", "Tolerance-indexed dimension r(τ)"),
    (r"The max-row-\ell_1 approximation rank", "The max-row-ℓ₁ approximation rank"),
])
def test_plain_tex(tex, plain):
    assert sphinx_ext.plain_tex(tex) == plain


def test_html_title_loses_its_math_markup():
    title = ('2. Spherical self-attention: the <span class="math notranslate nohighlight">\\((d-1)/2\\)</span> law')
    assert sphinx_ext._plain_html_title(title) == "2. Spherical self-attention: the (d−1)/2 law"


def test_changelog_names_the_package_version():
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert attnrank_lite.__version__ == version
    text = (REPO / "book" / "changelog.md").read_text()
    first = re.search(r"^## (\S+)", text, re.M)
    assert first and first.group(1) == version  # the newest entry is this version
    assert "file: " + sphinx_ext.CHANGELOG_DOC in (REPO / "_toc.yml").read_text()
    footer = sphinx_ext.version_footer(version, lambda doc: f"../{doc}.html")
    assert f"version {version}" in footer and 'href="../book/changelog.html"' in footer


def _search_index(html) -> dict:
    s = (html / "searchindex.js").read_text()
    return json.loads(s[s.index("(") + 1:s.rindex(")")])


@pytest.mark.book
@pytest.mark.xdist_group("book")
def test_built_site_search_titles_and_footer(built_site):
    index = _search_index(built_site)
    raw = re.compile(r"\\[A-Za-z(]|\\\(|\$")
    assert not [t for t in index["titles"] if raw.search(t)]
    assert not [t for t in index["alltitles"] if raw.search(t)]
    assert any("(d−1)/2" in t for t in index["titles"])
    for page in ("book/intro.html", "notebooks/01_approximation_rank.html", "search.html"):
        html = (built_site / page).read_text()
        assert f"attnrank-lite version {attnrank_lite.__version__}" in html, page
    assert (built_site / "book" / "changelog.html").is_file()
