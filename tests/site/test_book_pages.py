"""Hand-written pages of ``book/`` (issue 22, findings 8, 11 and 12)."""
from __future__ import annotations

import re

from attnrank_lite.site.paths import REPO

BOOK = REPO / "book"


def _prose(text: str) -> str:
    """The page without its fenced code blocks."""
    return re.sub(r"```.*?```", "", text, flags=re.S)


def test_rerun_page_types_no_run_time_by_hand():
    """Run times come from run records (the generated reproducibility page), never typed."""
    prose = _prose((BOOK / "rerun.md").read_text())
    timings = re.findall(r"\b\d+(?:\.\d+)?\s*(?:s|sec|seconds|min|minutes)\b", prose)
    assert timings == []
    assert "{doc}`reproducibility`" in prose


def test_notation_page_lists_the_symbols_with_several_meanings():
    page = (BOOK / "notation.md").read_text()
    table = page.split("## Symbols with more than one meaning", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| $")]
    firsts = [row.split("|")[1] for row in rows]
    for symbol, meanings in ((r"\tau", 3), (r"\sigma", 2), (r"\kappa", 1), ("$K", 2), ("$s", 3)):
        assert sum(symbol in f for f in firsts) >= meanings, symbol


def test_intro_marks_the_associations_as_the_books_reading():
    intro = (BOOK / "intro.md").read_text()
    item = intro.split("6. **A real model**", 1)[1].split("\n\n", 1)[0]
    assert "positive associations with finite constructive rank upper certificates" in item
    assert "*The book's reading, not the abstract's:*" in item
    # the tau of the sphere's lower side is defined where the intro uses it
    row = next(line for line in intro.splitlines() if "thm-sphere-lower" in line)
    assert r"\tau>0$ is the proof's cap scale" in row and "h n^{1/(d-1)}" in row


def test_certify_page_five_lines_run_as_printed(tmp_path, monkeypatch, capsys):
    """The page's first Python block, run as printed on a small head, writes a file that the
    page's command verifies (issue 26: a new user certifying their own matrix from the docs)."""
    import numpy as np

    from attnrank_lite.site import cli
    from attnrank_lite.site.paths import toc_files

    page = (BOOK / "certify.md").read_text()
    assert "book/certify" in toc_files()
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    assert len([line for line in code.splitlines() if line.strip()]) == 4  # + the verify command: five
    command = re.search(r"```bash\n(python -m attnrank_lite verify head.npz)\n", page).group(1)
    rng = np.random.default_rng(0)
    monkeypatch.chdir(tmp_path)
    scope = {"Q": rng.normal(size=(120, 8)), "K": rng.normal(size=(100, 8)), "beta": 8 ** -0.5}
    exec(compile(code, "certify.md", "exec"), scope)
    assert cli.main(command.split()[3:]) == 0
    line = capsys.readouterr().out.strip()
    b = scope["b"]
    assert line == (f"head.npz: verified: {b.lower} <= rank_0.25(A) <= {b.upper}, n = 120, m = 100, "
                    f"kinds {b.lower_kind}/subspace")


def test_rerun_page_gives_the_committed_stores_own_command():
    # the sweep example is the command that computed the committed store (its last run), with
    # the store path shortened: no other setting is needed to reproduce it (issue 23, sixth round)
    from attnrank_lite.laws.law_store import read_runs

    store = REPO / "attnrank_lite" / "laws" / "data" / "laws_paper.sqlite"
    recorded = read_runs(store)["command"].iloc[-1]
    page = (BOOK / "rerun.md").read_text(encoding="utf-8").replace("\\\n", " ")
    typed, = [" ".join(line.split()) for line in page.splitlines()
              if line.startswith("python -m attnrank_lite sweep --d")]
    assert typed == recorded.replace(str(store.relative_to(REPO)), "laws.sqlite")
