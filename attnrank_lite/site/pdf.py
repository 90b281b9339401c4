"""The whole book as one PDF, printed by headless Chromium from a one-page HTML build.

``python -m attnrank_lite build --pdf`` builds the staged book a second time with Sphinx's
``singlehtml`` builder (every page, in reading order, in one HTML file, with the same executed
notebooks, figures and MathJax copy as the site; cells folded behind a toggle on the site are
left out) and prints that page with Chromium's
``--print-to-pdf``. Chromium runs the page's scripts first (``--virtual-time-budget``), so the
mathematics is typeset by MathJax before the page is printed. It works offline: nothing is
fetched, the page and MathJax are local files. (Jupyter Book's own ``pdfhtml`` builder needs a
browser downloaded by pyppeteer, which is not available here.)

The PDF is published inside the site as :data:`PDF_NAME` (``html/attnrank-book.pdf``), which
the course page and every page's download menu link.

For handouts: page numbers ("page N of M", a CSS ``@page`` footer of the site's stylesheet,
``static/attnrank.css``), an outline (bookmarks) from the headings (Chromium's
``--generate-pdf-document-outline``), each chapter on a new page, tables and code wrapped (the
stylesheet's print rules), plumbing cells left out (the parameter cells; the parameter check is
hidden on the site too), and the API reference left out unless ``api=True`` (``build --pdf-api``).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["PDF_NAME", "API_DOC", "chromium", "write_book_pdf", "PdfFailed", "toc_without"]

#: the PDF's file name at the root of the site
PDF_NAME = "attnrank-book.pdf"
#: the API reference's page in the table of contents (its sections are its four subpages)
API_DOC = "book/api"
#: Chromium's flags for printing: the outline from the headings; no header/footer of its own (the
#: stylesheet's @page footer numbers the pages)
PRINT_FLAGS = ("--no-pdf-header-footer", "--generate-pdf-document-outline")
#: milliseconds of page time Chromium grants the scripts (MathJax) before printing
SCRIPT_BUDGET_MS = 120_000


class PdfFailed(RuntimeError):
    """The one-page build or the printing failed; the message says which and what to install."""


def chromium() -> str:
    """The Chromium executable (Debian: ``chromium``), or :class:`PdfFailed` naming the package."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise PdfFailed("build --pdf needs Chromium to print the book: install it (Debian: apt-get install chromium; "
                    "make test's browser-deps target does) and rerun")


#: folded cells on the site (a toggle) are left out of the printed book: paper has no toggles,
#: and myst-nb's folding node has no singlehtml translation
_FOLDED = {"hide-input": "remove-input", "hide-output": "remove-output", "hide-cell": "remove-cell"}


def _fold_to_removed(path: Path) -> None:
    """Folded cells become removed ones; this run's parameter cell is left out of the print too
    (the note of each chapter page on how it was produced names the profile and the rerun command)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags")
        if tags:
            tags = [_FOLDED.get(t, t) for t in tags]
            if "injected-parameters" in tags and "remove-cell" not in tags:
                tags.append("remove-cell")
            cell.metadata["tags"] = tags
    nbformat.write(nb, path)


def toc_without(toc: dict, doc: str) -> dict:
    """The table of contents ``toc`` (a jb-book ``_toc.yml`` as a dict) without the entry ``doc``
    and its sections; empty parts are dropped."""
    import copy

    toc = copy.deepcopy(toc)

    def prune(entries):
        return [e for e in entries if not (isinstance(e, dict) and e.get("file") == doc)]

    for key in ("chapters", "sections"):
        if key in toc:
            toc[key] = prune(toc[key])
    if "parts" in toc:
        for part in toc["parts"]:
            part["chapters"] = prune(part.get("chapters", []))
        toc["parts"] = [part for part in toc["parts"] if part["chapters"]]
    return toc


def _single_page(index: Path) -> Path:
    """The one page to print. With a root page in a subfolder (``book/intro``) Jupyter Book writes
    a redirect as ``index.html`` and the page at ``book/intro.html``, whose links are relative to
    the site root; a copy at the root (``print.html``) finds its styles, scripts and images."""
    target = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', index.read_text(), re.I)
    if target is None:
        return index
    copy = index.with_name("print.html")
    copy.write_text((index.parent / target.group(1)).read_text())
    return copy


def write_book_pdf(stage: Path, work: Path, dest: Path, log=print, api: bool = False) -> Path:
    """Build ``stage`` as one HTML page and print it to ``dest`` with headless Chromium.

    Parameters
    ----------
    stage : path
        The staged book (configuration, pages, executed notebooks), as built into the site.
    work : path
        A scratch folder for the one-page build.
    dest : path
        The PDF to write.
    api : bool
        Keep the API reference (:data:`API_DOC` and its subpages); by default it is left out
        of the PDF (it is most of the pages and reads better on the site).

    Returns
    -------
    pathlib.Path
        ``dest``.
    """
    browser = chromium()
    printed = Path(work) / "pdf-stage"
    if printed.exists():
        shutil.rmtree(printed)
    shutil.copytree(stage, printed)
    for nb in (printed / "notebooks").glob("*.ipynb"):
        _fold_to_removed(nb)
    if not api:
        import yaml

        toc_file = printed / "_toc.yml"
        toc_file.write_text(yaml.safe_dump(toc_without(yaml.safe_load(toc_file.read_text()), API_DOC),
                                           sort_keys=False, allow_unicode=True))
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(printed), "--path-output", str(work / "jb-single"), "--builder", "singlehtml"]
    log("[attnrank] " + " ".join(cmd[1:]))
    proc = subprocess.run(cmd, cwd=printed, capture_output=True, text=True)
    page = work / "jb-single" / "_build" / "singlehtml" / "index.html"
    if proc.returncode != 0 or not page.is_file():
        raise PdfFailed(f"the one-page build for the PDF failed (exit {proc.returncode}): "
                        + (proc.stderr.strip().splitlines() or ["no message"])[-1])
    page = _single_page(page)
    dest = Path(dest)
    log(f"[attnrank] printing the book with {browser} -> {dest}")
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                           "--run-all-compositor-stages-before-draw", f"--virtual-time-budget={SCRIPT_BUDGET_MS}",
                           *PRINT_FLAGS, f"--print-to-pdf={dest}", page.as_uri()],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0 or not dest.is_file() or dest.stat().st_size == 0:
        raise PdfFailed(f"Chromium could not print the book (exit {proc.returncode}): "
                        + (proc.stderr.strip().splitlines() or ["no message"])[-1])
    return dest
