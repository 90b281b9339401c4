"""Write a chapter notebook from a percent-format script (a development aid, not used by the build).

Usage: python tools/py2nb.py SOURCE.py notebooks/NAME.ipynb

Cells start with ``# %%`` (code) or ``# %% [markdown]``; tags go on the marker line as
``# %% tags=["parameters"]``. Markdown cells are written as ``# `` comment lines. The notebook
is written without outputs (the build executes it).
"""
import ast
import re
import sys

import nbformat


def convert(text: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    cells, cur, kind, tags = [], [], None, []

    def flush():
        if kind is None:
            return
        body = "\n".join(cur).strip("\n")
        if kind == "markdown":
            body = "\n".join(re.sub(r"^# ?", "", line) for line in body.splitlines())
            cell = nbformat.v4.new_markdown_cell(body)
        else:
            cell = nbformat.v4.new_code_cell(body)
        if tags:
            cell.metadata["tags"] = tags
        cells.append(cell)

    for line in text.splitlines():
        m = re.match(r"^# %%(.*)$", line)
        if m:
            flush()
            rest = m.group(1)
            kind = "markdown" if "[markdown]" in rest else "code"
            t = re.search(r"tags=(\[.*?\])", rest)
            tags = ast.literal_eval(t.group(1)) if t else []
            cur = []
        elif kind is not None:
            cur.append(line)
    flush()
    for i, c in enumerate(cells):
        c["id"] = f"cell-{i:02d}"
    nb.cells = cells
    return nb


if __name__ == "__main__":
    src, dst = sys.argv[1:3]
    nbformat.write(convert(open(src).read()), dst)
