"""Build the website: every chapter executed (or reused from :mod:`.cache`, side by side within memory:
:mod:`.schedule`), the sources staged, Jupyter Book run in a partial folder, and ``OUT/html``
replaced by the complete new site in one atomic exchange (a failure leaves the previous site)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import appendix, outputs, site_assets
from . import pdf as pdf_book
from .cache import CACHE_ENV, DEFAULT_CACHE, ChapterCache
from .errors import BuildFailed
from .pagenote import add_run_note
from .paths import REPO, toc_notebooks
from .runner import check_run_output, package_versions, resolve_parameters
from .runtime import DEFAULT_MAX_MINUTES, check_runtime
from .schedule import execute_chapters

__all__ = ["build_book", "BuildFailed"]


def build_book(profile: str = "book", out: str | os.PathLike = REPO / "_build",
               warnings_as_errors: bool = True, log=print, jobs: int | None = None,
               cache: str | os.PathLike | bool | None = True,
               max_minutes: float | None = DEFAULT_MAX_MINUTES, student: bool = False,
               pdf: bool = False, pdf_api: bool = False) -> Path:
    """Execute all chapters with ``profile`` and build the site into ``out/html`` (returned). ``jobs``:
    chapters at once; ``cache``: the cache folder (True: default, False: none); ``max_minutes``: 0 or
    None, no limit; ``student``: no solutions; ``pdf``: also the book as one PDF (``pdf_api``: with the
    API reference). ParameterError, TooLarge, TooSlow, OutputError before any work; RunFailed or
    BuildFailed, ``out/html`` unchanged, after."""
    items = [resolve_parameters(stem, profile=profile) for stem in toc_notebooks()]  # before any work
    for spec, values in items:
        check_runtime(spec, values, max_minutes)
    store = ChapterCache(os.environ.get(CACHE_ENV) or DEFAULT_CACHE if cache is True else cache) if cache else None
    try:  # the tools the build needs, before any work: MathJax, and Chromium for the PDF (PdfFailed)
        site_assets.ensure_mathjax()
        if pdf:
            pdf_book.chromium()
    except RuntimeError as exc:
        raise BuildFailed(str(exc)) from exc
    out = check_run_output(out, "html")
    work = outputs.partial_dir(out, "build")
    try:
        return _build(profile, out, work, items, warnings_as_errors, log, jobs or os.cpu_count() or 1,
                      store, student, pdf, pdf_api)
    finally:
        outputs.release_partial(work)


def _build(profile, out: Path, work: Path, items, warnings_as_errors, log, jobs, store, student, pdf,
           pdf_api) -> Path:
    stage = work / "stage"
    stage.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(REPO / name, stage / name)
    shutil.copytree(REPO / "book", stage / "book")
    site_assets.prepare_stage_config(stage, log=log, student=student,  # launch buttons, solutions, PDF link
                                     book_pdf=pdf_book.PDF_NAME if pdf else "")
    site_assets.write_course_links(stage, out, pdf=pdf, student=student, pdf_name=pdf_book.PDF_NAME)
    site_assets.stage_mathjax(stage)  # MathJax served from the site (npm package), no CDN
    site_assets.write_favicon_ico(stage / "_extra" / "favicon.ico")
    t0 = time.time()
    notebooks = stage / "notebooks"
    (notebooks / "results").mkdir(parents=True)
    records = execute_chapters(items, profile, work / "runs", jobs=jobs, cache=store, log=log)
    for (spec, _), rec in zip(items, records):
        ran = work / "runs" / spec.key
        add_run_note(ran / spec.notebook, rec)  # the staged page says how it was produced
        os.replace(ran / spec.notebook, notebooks / spec.notebook)
        os.replace(ran / f"{spec.stem}.run.json", stage / "_extra" / f"{spec.stem}.run.json")
        for sub in (ran / "results").glob("*"):
            os.replace(sub, notebooks / "results" / sub.name)
    # results tables are published with the site, at the same relative path as in the notebook
    shutil.copytree(notebooks / "results", stage / "_extra" / "notebooks" / "results")
    summary = {"profile": profile, "versions": package_versions(), "chapters": records,
               "execution_seconds": round(time.time() - t0, 1)}
    (stage / "book" / "_generated").mkdir(exist_ok=True)
    for path in (stage / "_extra", stage / "book" / "_generated"):
        (path / "run_records.json").write_text(json.dumps(summary, indent=2))
    appendix.write_generated_pages(stage, summary, log=log)  # theorem index, reproducibility appendix
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(stage), "--path-output",
           str(work / "jb"), "--builder", "html", *(["--warningiserror", "--keep-going"] if warnings_as_errors else [])]
    log("[attnrank] " + " ".join(cmd[1:]))
    proc = subprocess.run(cmd, cwd=stage)
    new_html = work / "jb" / "_build" / "html"
    if proc.returncode != 0 or not (new_html / "index.html").is_file():
        raise BuildFailed(f"jupyter-book build failed (exit {proc.returncode}; its messages are above); "
                          f"the previous site in {out / 'html'} is unchanged")
    if pdf:  # printed from a one-page build of the same stage, published inside the site
        try:
            pdf_book.write_book_pdf(stage, work, new_html / pdf_book.PDF_NAME, log=log, api=pdf_api)
        except pdf_book.PdfFailed as exc:
            raise BuildFailed(f"{exc}; the previous site in {out / 'html'} is unchanged") from exc
    html = out / "html"
    outputs.replace_folder(new_html, html)  # one atomic exchange; the previous site goes with the work folder
    log(f"[attnrank] site built: {html / 'index.html'}")
    return html
