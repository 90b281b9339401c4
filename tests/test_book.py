"""The website: built once (quick profile, every chapter executed afresh by papermill)."""
import json
import re
from datetime import datetime, timezone

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
