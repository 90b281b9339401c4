"""Course material: numbered exercises with solutions (sphinx-exercise), the student build without
solutions, and the whole book as one PDF printed by headless Chromium.

A small real book is built with the project's own configuration (the same extensions, MathJax
copy and staging code as the site) and the exercises section of chapter 1, so that each check
takes seconds; the full site's exercises are checked on the site the book tests build.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib
import nbformat
import pytest
import yaml

from attnrank_lite.site import pdf, site_assets
from attnrank_lite.site.chapters import NOTEBOOK_DIR
from attnrank_lite.site.paths import REPO, toc_notebooks

pytestmark = pytest.mark.book

#: a sentence of each solution of chapter 1's exercises 1 and 3 (what a student must not see)
SOLUTION_TEXT = ("is invertible", "rank}BP")


def _exercises_of(notebook: str) -> str:
    nb = nbformat.read(NOTEBOOK_DIR / notebook, as_version=4)
    cell = next(c.source for c in nb.cells if c.cell_type == "markdown" and "## Exercises" in c.source)
    return cell[cell.index("## Exercises"):]


def _mini_book(root: Path, student: bool) -> Path:
    stage = root / "stage"
    (stage / "book").mkdir(parents=True)
    shutil.copy2(REPO / "_config.yml", stage / "_config.yml")
    shutil.copy2(REPO / "book" / "references.bib", stage / "book" / "references.bib")
    shutil.copy2(REPO / "book" / "favicon.svg", stage / "book" / "favicon.svg")
    (stage / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: exercises\n")
    (stage / "intro.md").write_text("# A small book\n\nThe error is $\\varepsilon = \\max_i\\sum_j |A_{ij}-B_{ij}|$."
                                    "\n\n![a figure](figure.png)\n")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    fig.savefig(stage / "figure.png")
    plt.close(fig)
    text = _exercises_of("01_approximation_rank.ipynb").replace("{prf:ref}`prop-exact-cases`", "the exact cases")
    (stage / "exercises.md").write_text("# Exercises of chapter 1\n\n" + text)
    site_assets.prepare_stage_config(stage, log=lambda *_: None, student=student)
    site_assets.stage_mathjax(stage)
    return stage


def _build_html(stage: Path, root: Path) -> str:
    res = subprocess.run([str(Path(sys.executable).with_name("jupyter-book")), "build", str(stage), "--path-output",
                          str(root / "jb"), "--builder", "html", "--warningiserror", "--keep-going"],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    return (root / "jb" / "_build" / "html" / "exercises.html").read_text()


def test_exercises_are_numbered_with_solutions_and_the_student_build_has_none(tmp_path):
    full = _build_html(_mini_book(tmp_path / "full", student=False), tmp_path / "full")
    student = _build_html(_mini_book(tmp_path / "student", student=True), tmp_path / "student")
    n = len(re.findall(r"^````\{exercise\}", _exercises_of("01_approximation_rank.ipynb"), re.M))
    numbers = [f"Exercise {k}" for k in range(1, n + 1)]
    for html in (full, student):
        assert all(x in html for x in numbers)  # the same numbered exercises in both
    assert all(s in full for s in SOLUTION_TEXT) and "Solution to" in full
    assert not any(s in student for s in SOLUTION_TEXT) and "Solution to" not in student
    assert yaml.safe_load((tmp_path / "student" / "stage" / "_config.yml").read_text())["sphinx"]["config"][
        "hide_solutions"] is True


@pytest.mark.browser
def test_pdf_of_a_book_has_typeset_math_and_its_figure(tmp_path):
    if shutil.which("pdftotext") is None or shutil.which("pdfimages") is None:
        pytest.skip("poppler-utils (pdftotext, pdfimages) not installed; make test installs them")
    try:
        pdf.chromium()
    except pdf.PdfFailed as exc:
        pytest.skip(str(exc))
    stage = _mini_book(tmp_path, student=False)
    out = pdf.write_book_pdf(stage, tmp_path, tmp_path / pdf.PDF_NAME, log=lambda *_: None)
    assert out.read_bytes()[:5] == b"%PDF-"
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout
    assert "A small book" in text and "Exercise 1" in text and "Solution to Exercise 1" in text
    assert "\\varepsilon" not in text and "\\max" not in text  # MathJax typeset it: no raw TeX left
    assert "ε" in text
    images = subprocess.run(["pdfimages", "-list", str(out)], capture_output=True, text=True).stdout
    assert len(images.strip().splitlines()) >= 3  # header lines and at least the figure


def _pdf_pages(path: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True).stdout
    return text.split("\f")[:-1] if text.endswith("\f") else text.split("\f")


def _pdf_outline(path: Path) -> list[tuple[int, str]]:
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-stdout", "-q", str(path)], capture_output=True,
                         text=True).stdout
    outline = xml[xml.find("<outline"):] if "<outline" in xml else ""
    return [(int(p), re.sub(r"<[^>]+>", "", t).strip()) for p, t in
            re.findall(r'<item page="(\d+)"[^>]*>(.*?)</item>', outline, re.S)]


@pytest.mark.browser
def test_pdf_for_handouts_numbers_pages_has_an_outline_and_leaves_out_the_api(tmp_path):
    """Issue 25: the PDF had no page numbers, no outline, chapters starting mid-page, and the API
    reference as half its pages. A small book (root page, exercises chapter, an API page) printed by
    the book's own code: every page says "page N of M", the outline lists the chapters at the
    pages they start on, each chapter starts at the top of a page, the API page is left out."""
    for tool in ("pdftotext", "pdftohtml"):
        if shutil.which(tool) is None:
            pytest.skip(f"poppler-utils ({tool}) not installed; make test installs them")
    try:
        pdf.chromium()
    except pdf.PdfFailed as exc:
        pytest.skip(str(exc))
    stage = _mini_book(tmp_path, student=False)
    (stage / "book" / "api.md").write_text("# API reference of the small book\n\nEvery function.\n")
    (stage / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: exercises\n"
                                    "  - file: book/api\n")
    out = pdf.write_book_pdf(stage, tmp_path, tmp_path / pdf.PDF_NAME, log=lambda *_: None)
    pages = _pdf_pages(out)
    n = len(pages)
    assert n >= 2
    for k, page in enumerate(pages, start=1):
        assert re.search(rf"page {k} of {n}\s*$", page.strip()), f"page {k}: no page number: {page[-200:]!r}"
    text = "\n".join(pages)
    assert "API reference of the small book" not in text  # left out by default
    first = [k for k, page in enumerate(pages, start=1) if "Exercises of chapter 1" in page]
    assert first and first[0] >= 2, "the chapter does not start on a page of its own"
    assert pages[first[0] - 1].strip().startswith("Exercises of chapter 1")  # at the top of its page
    outline = _pdf_outline(out)
    titles = [t for _, t in outline]
    assert any("A small book" in t for t in titles) and any("Exercises of chapter 1" in t for t in titles), outline
    assert dict((t, p) for p, t in outline)["Exercises of chapter 1"] == first[0]


def test_api_reference_is_left_out_of_the_pdf_toc_unless_kept():
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    files = lambda t: re.findall(r"'file': '([^']+)'", str(t))  # noqa: E731
    assert pdf.API_DOC in files(toc) and "book/api/engine" in files(toc)
    pruned = pdf.toc_without(toc, pdf.API_DOC)
    assert not [f for f in files(pruned) if f.startswith("book/api")]
    assert set(files(pruned)) == {f for f in files(toc) if not f.startswith("book/api")}
    assert files(toc).count(pdf.API_DOC) == 1  # the original is untouched


@pytest.mark.xdist_group("book")
def test_built_site_numbers_the_exercises_of_every_chapter(built_site):
    numbers = []
    for stem in toc_notebooks():
        html = (built_site / "notebooks" / f"{stem}.html").read_text()
        found = sorted({int(k) for k in re.findall(r'class="caption-number">Exercise (\d+)', html)})
        labels = re.findall(r'id="ex-ch\d\d-\d+"', html)
        assert found and len(found) == len(labels), stem  # every exercise numbered and labelled
        numbers += found
    assert numbers == list(range(1, len(numbers) + 1))  # numbered through the book, in reading order


def test_the_printed_page_is_the_root_page_when_the_root_is_in_a_subfolder(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    (tmp_path / "book" / "intro.html").write_text('<link href="_static/a.css"><p>the whole book</p>')
    page = pdf._single_page(tmp_path / "index.html")
    assert page.parent == tmp_path and page.read_text() == (tmp_path / "book" / "intro.html").read_text()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "index.html").write_text("<p>root page</p>")
    assert pdf._single_page(plain / "index.html") == plain / "index.html"


def test_course_page_names_the_student_build_and_the_pdf():
    course = (REPO / "book" / "course.md").read_text()
    assert "--student" in course and pdf.PDF_NAME in course
    assert site_assets.STUDENT_LINK_MARK in course and site_assets.PDF_LINK_MARK in course
    assert "<a href" not in course  # links only from the build, to what it produced


def _staged_course(tmp_path: Path) -> Path:
    stage = tmp_path / "stage"
    (stage / "book").mkdir(parents=True)
    shutil.copy2(REPO / "book" / "course.md", stage / "book" / "course.md")
    return stage


@pytest.mark.parametrize("pdf_built", [False, True])
@pytest.mark.parametrize("student_beside", [False, True])
def test_course_page_links_only_what_exists(tmp_path, pdf_built, student_beside):
    """Issue 25: the course page linked the student build and the PDF whether or not they existed."""
    stage, out = _staged_course(tmp_path), tmp_path / "out"
    if student_beside:
        (out / "student" / "html").mkdir(parents=True)
        (out / "student" / "html" / "index.html").write_text("<p>student edition</p>")
    links = site_assets.write_course_links(stage, out, pdf=pdf_built, student=False, pdf_name=pdf.PDF_NAME)
    text = (stage / "book" / "course.md").read_text()
    assert links == {"pdf": pdf_built, "student": student_beside}
    assert "attnrank:" not in text  # both markers replaced
    assert (f'href="../{pdf.PDF_NAME}"' in text) is pdf_built
    assert ("built without `--pdf`" in text) is not pdf_built
    href = 'href="../../student/html/index.html"'
    assert (href in text) is student_beside
    # the page sits at html/book/course.html: its links resolve to the files checked above
    page_dir = out / "html" / "book"
    if student_beside:
        assert (page_dir / "../../student/html/index.html").resolve().is_file()
    # the student build itself does not link a student edition
    stage2 = _staged_course(tmp_path / "s")
    site_assets.write_course_links(stage2, out, pdf=False, student=True, pdf_name=pdf.PDF_NAME)
    assert href not in (stage2 / "book" / "course.md").read_text()
