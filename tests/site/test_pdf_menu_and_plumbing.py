"""Issue 25: the whole book's PDF in every page's download menu, and plumbing cells hidden."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

import attnrank_lite
from attnrank_lite.site import site_assets, sphinx_ext
from attnrank_lite.site.runner import is_plumbing


def _context():
    menu = {"type": "group", "label": "download-buttons", "buttons": [{"label": "download-source-button"}]}
    return {"pathto": lambda name, resource=0: f"../{name}", "header_buttons": [menu]}, menu


@pytest.mark.parametrize("pdf_name", ["", "attnrank-book.pdf"])
def test_download_menu_offers_the_book_pdf_only_when_built(pdf_name):
    app = SimpleNamespace(config=SimpleNamespace(attnrank_book_pdf=pdf_name))
    context, menu = _context()
    sphinx_ext._book_pdf_button(app, "book/intro", "page.html", context, None)
    added = [b for b in menu["buttons"] if b["label"] == "download-book-pdf-button"]
    if pdf_name:
        assert len(added) == 1 and added[0]["url"] == f"../{pdf_name}" and added[0]["type"] == "link"
    else:
        assert added == []


def test_build_sets_the_pdf_option_only_with_pdf(tmp_path):
    import yaml

    from attnrank_lite.site.paths import REPO

    for book_pdf in ("", "attnrank-book.pdf"):
        stage = tmp_path / (book_pdf or "none")
        stage.mkdir()
        (stage / "_config.yml").write_text((REPO / "_config.yml").read_text())
        site_assets.prepare_stage_config(stage, log=lambda *_: None, book_pdf=book_pdf)
        config = yaml.safe_load((stage / "_config.yml").read_text())["sphinx"]["config"]
        assert config.get("attnrank_book_pdf", "") == book_pdf
        assert config["attnrank_version"] == attnrank_lite.__version__  # pyproject.toml's, by another test


@pytest.mark.parametrize("source, plumbing", [
    ('from attnrank_lite.site.params import validate_notebook_parameters\n\n'
     'P = validate_notebook_parameters("ch01", globals())', True),
    ("for key, text in nums.items():\n    glue(key, text, display=False)", True),
    ("glue('x', 1, display=False)", True),
    ("import numpy as np", False),  # an import alone is code a reader may want to see
    ("x = compute()\nglue('x', x, display=False)", False),
    ("for k in ks:\n    print(k)", False),
    ("P = validate_notebook_parameters(", False),  # not Python
])
def test_plumbing_cells(source, plumbing):
    assert is_plumbing(source) is plumbing


@pytest.mark.parametrize("flags, pdf, api", [([], False, False), (["--pdf"], True, False),
                                             (["--pdf-api"], True, True), (["--pdf", "--pdf-api"], True, True)])
def test_build_pdf_flags(monkeypatch, tmp_path, flags, pdf, api):
    """``--pdf`` prints the book without the API reference; ``--pdf-api`` keeps it (and implies --pdf)."""
    from attnrank_lite.site import build, cli

    seen = {}
    monkeypatch.setattr(build, "build_book", lambda **kw: seen.update(kw))
    assert cli.main(["build", "--profile", "quick", "-o", str(tmp_path / "o"), *flags]) == 0
    assert seen["pdf"] is pdf and seen["pdf_api"] is api
