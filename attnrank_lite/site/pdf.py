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
the course page links.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["PDF_NAME", "chromium", "write_book_pdf", "PdfFailed"]

#: the PDF's file name at the root of the site
PDF_NAME = "attnrank-book.pdf"
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
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags")
        if tags:
            cell.metadata["tags"] = [_FOLDED.get(t, t) for t in tags]
    nbformat.write(nb, path)


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


def write_book_pdf(stage: Path, work: Path, dest: Path, log=print) -> Path:
    """Build ``stage`` as one HTML page and print it to ``dest`` with headless Chromium.

    Parameters
    ----------
    stage : path
        The staged book (configuration, pages, executed notebooks), as built into the site.
    work : path
        A scratch folder for the one-page build.
    dest : path
        The PDF to write.

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
                           "--no-pdf-header-footer", f"--print-to-pdf={dest}", page.as_uri()],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0 or not dest.is_file() or dest.stat().st_size == 0:
        raise PdfFailed(f"Chromium could not print the book (exit {proc.returncode}): "
                        + (proc.stderr.strip().splitlines() or ["no message"])[-1])
    return dest
