"""Every certificate bundle of the built (quick-profile) site, rechecked (issue 26).

Each ``*_certificates.zip`` under ``notebooks/results/`` is unzipped and every ``.npz`` in it
rechecked twice: by ``python -m attnrank_lite verify --independent`` (``verify`` and the
independent checker must agree, else exit 11) and by :func:`attnrank_lite.checker.check_file`
directly. A refusal, a failure or a disagreement fails the test. The bundles must be linked from
their table and from the page's "How this page was produced" box, and keep within the size budget
of :mod:`attnrank_lite.site.results`. ``ATTNRANK_SITE_HTML`` points the tests at a site built
elsewhere (as in ``test_site_browser.py``).
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attnrank_lite.checker import check_file
from attnrank_lite.engine.certificate_file import verify_file
from attnrank_lite.site.results import BUNDLE_BUDGET_BYTES, SITE_BUDGET_BYTES

pytestmark = pytest.mark.xdist_group("book")
REPO = Path(__file__).resolve().parents[2]
#: the tables whose certificates the quick build must publish (chapter folder, table)
EXPECTED = [("ch01", "eps_sweep"), ("ch02", "circle_brackets"), ("ch02", "sphere_brackets"),
            ("ch02", "d4_brackets"), ("ch02", "configurations"), ("ch02", "n_sweep"),
            ("ch03", "ball_brackets"), ("ch03", "uniform_brackets"), ("ch03", "fixed_n_brackets"),
            ("ch03", "sphere_vs_ball"), ("ch04", "r_half_law_brackets"), ("ch06", "brackets_per_sequence")]


@pytest.fixture(scope="module")
def site_html(request) -> Path:
    """The site's ``html`` folder: ``ATTNRANK_SITE_HTML`` when set, else the ``built_site`` build."""
    given = os.environ.get("ATTNRANK_SITE_HTML")
    if given:
        return Path(given).expanduser().resolve()
    return request.getfixturevalue("built_site")


@pytest.fixture(scope="module")
def unpacked(site_html, tmp_path_factory) -> dict:
    """``{bundle path: [extracted .npz files]}`` for every bundle of the site."""
    out = {}
    root = tmp_path_factory.mktemp("certificates")
    for z in sorted((site_html / "notebooks" / "results").rglob("*_certificates.zip")):
        dest = root / z.parent.name / z.stem
        with zipfile.ZipFile(z) as zf:
            names = zf.namelist()
            assert all(n.endswith(".npz") and not n.startswith(("/", "..")) and ".." not in n for n in names), z
            zf.extractall(dest)
        out[z] = sorted(dest.rglob("*.npz"))
        assert out[z], f"{z}: an empty bundle"
    return out


def test_every_bracket_table_has_its_bundle_within_budget(site_html, unpacked):
    results = site_html / "notebooks" / "results"
    for chapter, table in EXPECTED:
        assert (results / chapter / f"{table}.csv").is_file(), (chapter, table)
        bundle = results / chapter / f"{table}_certificates.zip"
        omitted = results / chapter / f"{table}_certificates.omitted"
        assert bundle.is_file() or omitted.is_file(), f"{chapter}/{table}: no bundle and no reason why"
    sizes = [z.stat().st_size for z in unpacked]
    assert all(s <= BUNDLE_BUDGET_BYTES for s in sizes)
    assert sum(sizes) <= SITE_BUDGET_BYTES
    assert not list(results.rglob(".certificates")), "the certificates' working folder was published"


def test_bundles_are_linked_from_the_table_and_the_page_note(site_html, unpacked):
    for z in unpacked:
        chapter = z.parent.name
        page = next((site_html / "notebooks").glob(f"{chapter[2:]}_*.html"))
        html = page.read_text()
        href = f'href="results/{chapter}/{z.name}"'
        # one link under the table, one in the "How this page was produced" box
        assert html.count(href) >= 2, f"{page.name}: {z.name} linked {html.count(href)} time(s)"


def test_verify_and_the_independent_checker_agree_on_every_file(unpacked):
    files = [f for fs in unpacked.values() for f in fs]
    assert files
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "attnrank_lite", "verify", "--independent", *map(str, files)],
                          capture_output=True, text=True, env=env, timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert len(lines) == len(files)
    assert all(line.endswith("; independent checker agrees") for line in lines), done.stdout[-4000:]
    for f in files:  # and in this process, the two verdicts side by side
        assert verify_file(f).ok and check_file(f).ok, f


def test_page_note_names_bundles_and_omitted_tables():
    from attnrank_lite.site.pagenote import certificates_text, run_note

    rec = {"certificates": ["results/ch02/circle_brackets_certificates.zip"],
           "certificates_omitted": ["sphere_brackets: 4 files, 8.2 MB, over this table's budget of 3.3 MB"]}
    text = certificates_text(rec)
    assert '<a href="results/ch02/circle_brackets_certificates.zip" download>' in text
    assert "verify --independent" in text and "sphere_brackets: 4 files" in text
    assert certificates_text({}) == ""  # a record of a page without bracket tables (or an older one)
    note = run_note({**rec, "profile": "quick", "notebook": "02.ipynb", "seconds": 1.0, "chapter": "ch02"})
    assert "circle_brackets_certificates.zip" in note
