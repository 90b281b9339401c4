"""The website: built once (quick profile, every chapter executed afresh by papermill)."""
import json
import re
from datetime import datetime, timezone
from html import unescape

import pytest

from attnrank_lite.site.paths import toc_notebooks

pytestmark = pytest.mark.xdist_group("book")
STARTED = datetime.now(timezone.utc)


def test_index_and_every_chapter_page_exist(built_site):
    assert (built_site / "index.html").exists()
    for stem in toc_notebooks():
        assert (built_site / "notebooks" / f"{stem}.html").exists(), stem


def test_chapter_one_page_renders_boxes_math_figures_and_tables(built_site):
    html = (built_site / "notebooks" / "01_approximation_rank.html").read_text()
    assert html.count('class="proof') >= 8  # definitions, propositions, proofs (sphinx-proof)
    assert "Proposition" in html and "Definition" in html
    assert html.count("math notranslate") > 20
    imgs = re.findall(r'<img[^>]+src="([^"]+)"', html)
    assert len(imgs) >= 3
    for src in imgs:
        assert (built_site / "notebooks" / src).resolve().exists(), src
    links = re.findall(r'href="(results/ch01/[^"]+\.csv)"', html)
    assert links and all((built_site / "notebooks" / h).exists() for h in links)
    assert "Traceback" not in html


def test_every_notebook_was_executed_by_this_build(built_site):
    records = json.loads((built_site / "run_records.json").read_text())
    assert records["profile"] == "quick"
    ran = {r["notebook"].rsplit(".", 1)[0]: r for r in records["chapters"]}
    assert set(ran) == set(toc_notebooks())
    for r in ran.values():
        assert datetime.fromisoformat(r["finished"]) >= STARTED.replace(microsecond=0)
        assert r["profile"] == "quick"


def _cell_div(html: str, tag: str) -> str:
    """The opening of the page's code cell carrying notebook tag ``tag`` (up to its code block)."""
    m = re.search(r'<div class="cell [^"]*\btag_' + re.escape(tag) + r'\b[^"]*"', html)
    assert m, f"no cell tagged {tag}"
    end = html.find('<div class="highlight', m.start())
    return html[m.start():end]


def test_parameters_are_shown_once_as_those_of_this_run(built_site):
    """Each chapter shows its parameter values once, under "Parameters of this run"; the book's
    defaults cell is folded behind a toggle (issue 11, "the page a reader sees")."""
    for stem in toc_notebooks():
        html = (built_site / "notebooks" / f"{stem}.html").read_text()
        assert html.count("Parameters of this run") == 1, stem
        defaults = _cell_div(html, "parameters")
        assert "tag_hide-input" in defaults and "<details" in defaults, stem
        assert "Show the book's default parameters" in unescape(defaults).replace("\u2019", "'"), stem
        injected = _cell_div(html, "injected-parameters")
        assert "<details" not in injected, stem  # this run's values are not folded


def test_every_chapter_page_says_how_it_was_produced(built_site):
    """Issue 16: the page's profile, run time and machine, and the quick rerun command."""
    records = json.loads((built_site / "run_records.json").read_text())
    for rec in records["chapters"]:
        page = (built_site / "notebooks" / rec["notebook"].replace(".ipynb", ".html")).read_text()
        html = unescape(re.sub(r"<[^>]+>", "", page))  # text only: code is split into highlighted spans
        assert "How this page was produced" in html, rec["chapter"]
        assert f"python -m attnrank_lite run {rec['chapter']} --profile quick" in html
        assert f"{rec['seconds']:.1f} s" in html and f"{rec['profile']}" in html
    repro = unescape(re.sub(r"<[^>]+>", "", (built_site / "book" / "reproducibility.html").read_text()))
    for rec in records["chapters"]:
        assert f"python -m attnrank_lite run {rec['chapter']} --profile quick" in repro


def test_the_book_tests_share_one_xdist_worker(request):
    """Under ``--dist loadgroup`` (``make test``) every test of the "book" group runs on one
    worker, so the site is built once while the other worker runs the rest (see conftest)."""
    if not getattr(request.config.option, "loadgroup", False):  # set in xdist's workers
        pytest.skip("only meaningful under pytest -n N --dist loadgroup (make test)")
    assert request.node.nodeid.endswith("@book"), request.node.nodeid


def test_a_glued_command_is_shown_as_typed(built_site):
    """Chapter 7 quotes the stored sweep's command in its prose: as code, with its ``--``
    options intact (glued as plain text, Sphinx's typography made them en dashes)."""
    import re

    html = (built_site / "notebooks" / "07_laws_at_scale.html").read_text()
    codes = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<code[^>]*>(.*?)</code>", html, re.S)]
    assert any(c.startswith("python -m attnrank_lite sweep --d 2 3 4 5 6") and "--store" in c
               for c in codes), [c for c in codes if "sweep" in c]
    assert "sweep \u2013d" not in html
