"""The whole book as one PDF (``build --pdf``): the staged book built as one page (``singlehtml``) and
printed by headless Chromium once MathJax ran; folded and parameter cells left out, and the API
reference unless ``api=True`` (``--pdf-api``)."""
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
#: Chromium's printing flags: an outline from the headings, no header/footer of its own
PRINT_FLAGS = ("--no-pdf-header-footer", "--generate-pdf-document-outline")
#: milliseconds of page time Chromium grants the scripts (MathJax) before printing
SCRIPT_BUDGET_MS = 120_000
#: folded cells (a toggle on the site) are removed from the print: paper has no toggles
_FOLDED = {"hide-input": "remove-input", "hide-output": "remove-output", "hide-cell": "remove-cell"}


class PdfFailed(RuntimeError):
    """The one-page build or the printing failed; the message says which and what to install."""


def chromium() -> str:
    """The Chromium executable (Debian: ``chromium``), or :class:`PdfFailed` naming the package."""
    if path := next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None):
        return path
    raise PdfFailed("build --pdf needs Chromium to print the book: install it (Debian: apt-get install chromium; "
                    "make test's browser-deps target does) and rerun")


def _fold_to_removed(path: Path) -> None:
    """Folded cells become removed ones, and so does this run's parameter cell (see the run note)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if tags := cell.get("metadata", {}).get("tags"):
            tags = [_FOLDED.get(t, t) for t in tags]
            extra = "injected-parameters" in tags and "remove-cell" not in tags
            cell.metadata["tags"] = tags + ["remove-cell"] * extra
    nbformat.write(nb, path)


def toc_without(toc, doc: str):
    """A ``_toc.yml`` read ``toc`` without the entry ``doc`` and its sections; emptied lists dropped."""
    if isinstance(toc, dict):
        return {k: v for k, v in ((k, toc_without(v, doc)) for k, v in toc.items()) if v != []}
    if isinstance(toc, list):
        kept = [toc_without(e, doc) for e in toc if not (isinstance(e, dict) and e.get("file") == doc)]
        return [e for e in kept if e != {} and not (isinstance(e, dict) and set(e) <= {"caption"})]
    return toc


def _single_page(index: Path) -> Path:
    """The page to print: for a redirecting ``index.html`` (root page in a subfolder) its target copied
    to the root as ``print.html``, where its relative links find styles, scripts and images."""
    target = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', index.read_text(), re.I)
    if target is None:
        return index
    copy_ = index.with_name("print.html")
    copy_.write_text((index.parent / target.group(1)).read_text())
    return copy_


def _run(cmd, what: str, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise PdfFailed(f"{what} (exit {proc.returncode}): " + (proc.stderr.strip().splitlines() or ["no message"])[-1])
    return proc


def write_book_pdf(stage: Path, work: Path, dest: Path, log=print, api: bool = False) -> Path:
    """Build the staged book ``stage`` as one page in the scratch folder ``work``, print it to
    ``dest`` (returned) with headless Chromium; ``api``: keep the API reference (:data:`API_DOC`)."""
    browser = chromium()
    printed = Path(work) / "pdf-stage"
    shutil.rmtree(printed, ignore_errors=True)
    shutil.copytree(stage, printed)
    for nb in (printed / "notebooks").glob("*.ipynb"):
        _fold_to_removed(nb)
    if not api:
        import yaml

        toc_file = printed / "_toc.yml"
        toc_file.write_text(yaml.safe_dump(toc_without(yaml.safe_load(toc_file.read_text()), API_DOC),
                                           sort_keys=False, allow_unicode=True))
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(printed), "--path-output",
           str(work / "jb-single"), "--builder", "singlehtml"]
    log("[attnrank] " + " ".join(cmd[1:]))
    _run(cmd, "the one-page build for the PDF failed", cwd=printed)
    page = work / "jb-single" / "_build" / "singlehtml" / "index.html"
    if not page.is_file():
        raise PdfFailed("the one-page build for the PDF failed: it wrote no index.html")
    dest = Path(dest)
    log(f"[attnrank] printing the book with {browser} -> {dest}")
    _run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
          "--run-all-compositor-stages-before-draw", f"--virtual-time-budget={SCRIPT_BUDGET_MS}", *PRINT_FLAGS,
          f"--print-to-pdf={dest}", _single_page(page).as_uri()], "Chromium could not print the book", timeout=1800)
    if not dest.is_file() or dest.stat().st_size == 0:
        raise PdfFailed("Chromium could not print the book: it wrote no PDF")
    return dest
