"""Each chapter page and the reproducibility page say how the run was produced (issue 16)."""
import nbformat

from attnrank_lite.site import appendix, pagenote, runner
from attnrank_lite.site.chapters import get_chapter


def _rec(key="ch02", nb="02_spherical_law.ipynb", cache=None):
    rec = {"chapter": key, "title": "t", "notebook": nb, "profile": "book",
           "parameters": get_chapter(key).defaults(), "seconds": 71.4, "finished": "2026-12-03T09:00:00+00:00",
           "machine": "x86_64, 2 CPUs", "cpu": "Example CPU 9000", "results": []}
    if cache:
        rec["cache"] = cache
    return rec


def test_page_note_is_appended_once_with_profile_time_machine_and_command(tmp_path):
    path = tmp_path / "02_spherical_law.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"),
                                         nbformat.v4.new_code_cell("x = 1")])
    nbformat.write(nb, path)
    pagenote.add_run_note(path, _rec())
    pagenote.add_run_note(path, _rec(cache="reused"))  # a second staging replaces, never repeats
    cells = nbformat.read(path, as_version=4).cells
    notes = [c for c in cells if pagenote.NOTE_TAG in c.metadata.get("tags", [])]
    assert len(notes) == 1 and cells[-1] is notes[0] and len(cells) == 3
    text = notes[0].source
    assert "`book` profile" in text and "**71.4 s**" in text
    assert "x86_64, 2 CPUs (Example CPU 9000)" in text
    assert "python -m attnrank_lite run ch02 --profile quick" in text
    assert "reused from the build's cache" in text and "2026-12-03T09:00:00+00:00" in text


def test_fresh_run_note_does_not_claim_the_cache():
    assert "cache" not in pagenote.run_note(_rec())


def test_machine_record_names_the_machine():
    rec = runner.machine_record()
    assert isinstance(rec["cpu"], str) and rec["cpu"].strip() and "\n" not in rec["cpu"]
    assert rec["machine"].endswith(" CPUs") and rec["versions"]["python"].count(".") == 2
    assert pagenote.machine_text({"machine": "m"}) == "m"  # an older record, without the model


def test_reproducibility_page_lists_every_chapter_with_time_machine_and_quick_command():
    keys = [("ch0%d" % i, get_chapter("ch0%d" % i).notebook) for i in range(1, 7)]
    recs = [_rec(k, nb, cache="reused" if k == "ch03" else None) for k, nb in keys]
    summary = {"profile": "book", "versions": {"numpy": "2.4.6"}, "chapters": recs, "execution_seconds": 1.0}
    text = appendix.render_reproducibility(summary, {})
    rows = [ln for ln in text.splitlines() if ln.startswith("| ch0")]
    assert len(rows) == 6
    for (k, _), row in zip(keys, rows):
        assert f"`python -m attnrank_lite run {k} --profile quick`" in row
        assert "71.4 s" in row
        assert "Example CPU 9000" in row
        assert ("reused" in row) == (k == "ch03")
