"""Issue 22, "chapters as thin as chapters 4 and 5": every chapter keeps its logic in the
package, so no code cell has more than 12 lines of logic (imports, comments and blank lines not
counted; the ``parameters`` cell holds values, not logic). The issue allows at most two such
cells in the whole book; the book has none, and each chapter is held to that."""
from __future__ import annotations

import ast

import nbformat
import pytest

from attnrank_lite.site.chapters import NOTEBOOK_DIR, all_chapters, get_chapter

CHAPTERS = [s.key for s in all_chapters()]

MAX_LOGIC_LINES = 12


def logic_lines(source: str) -> int:
    """Physical lines of a cell that are not blank, a comment or part of an import statement."""
    imports = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.update(range(node.lineno, node.end_lineno + 1))
    return sum(1 for i, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and i not in imports)


def test_logic_line_count_can_fail():
    src = "import numpy as np\nfrom a import (\n    b,\n)\n# note\n\nx = 1\ny = f(\n    x,\n)\n"
    assert logic_lines(src) == 4


def long_cells(key: str) -> dict[int, int]:
    """{cell index: lines of logic} of the chapter's code cells over the limit."""
    nb = nbformat.read(NOTEBOOK_DIR / get_chapter(key).notebook, as_version=4)
    return {i: logic_lines(c.source) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])
            and logic_lines(c.source) > MAX_LOGIC_LINES}


def test_every_chapter_is_checked():
    keys = CHAPTERS
    assert {"ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07"} <= set(keys)


@pytest.mark.parametrize("key", CHAPTERS)
def test_no_code_cell_has_more_than_12_lines_of_logic(key):
    long = long_cells(key)
    assert not long, f"{key}: cells with more than {MAX_LOGIC_LINES} lines of logic: {long}"
