"""Issue 25: every chapter opened on Colab (or in any kernel without the package) says in its first
cell how to install the package, as a commented ``%pip install`` line; chapter 6 names the ``bert``
extra. The cell is all comments (the build runs it as a no-op) and hidden on the site."""
from __future__ import annotations

import re

import nbformat
import pytest

from attnrank_lite.site.chapters import NOTEBOOK_DIR

NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))


def test_every_chapter_is_checked():
    assert len(NOTEBOOKS) == 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_cell_says_how_to_install(path):
    cell = nbformat.read(path, as_version=4).cells[0]
    assert cell.cell_type == "code"
    lines = cell.source.splitlines()
    assert lines and all(line.startswith("#") for line in lines), "the install cell must be all comments"
    pips = [line for line in lines if re.match(r"#\s*%pip install ", line)]
    assert pips, "no commented %pip install line"
    extra = "[bert]" if path.name.startswith("06") else ""
    assert f'"attnrank-lite{extra} @ git+' in pips[0]
    assert "Colab" in lines[0]
    assert "remove-cell" in cell.metadata.get("tags", [])
