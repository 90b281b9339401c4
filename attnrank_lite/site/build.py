"""Build the website: execute every chapter with papermill, stage the sources, run Jupyter Book.

The build always executes the notebooks afresh (Jupyter Book's own execution and cache are
off), so a page can never show outputs from an older version of the package.

Nothing a user has is lost: the output folder is checked before any work
(:func:`attnrank_lite.site.outputs.prepare_output`), every chapter's parameters and memory
estimate are checked before the first notebook runs, and the whole build happens in a partial
folder inside it. ``OUT/html`` is replaced only once the new site is complete, by one atomic
exchange of folders; a failed or interrupted build leaves the previous site as it was.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import appendix, outputs, site_assets
from .chapters import get_chapter
from .paths import REPO, toc_notebooks
from .runner import package_versions, resolve_parameters, run_chapter, run_dir

__all__ = ["build_book", "BuildFailed"]

#: entries of a build folder written before the marker file existed (accepted as ours when it
#: also holds the old build's staging/ or jb/ folder: a lone html/ may be someone's own site)
LEGACY = frozenset({"html", "staging", "jb", "built-by-run.txt"})


class BuildFailed(RuntimeError):
    """Jupyter Book (Sphinx) failed; the previous site is unchanged."""


def build_book(profile: str = "book", out: str | os.PathLike = REPO / "_build",
               warnings_as_errors: bool = True, log=print) -> Path:
    """Execute all chapters with ``profile`` and build the HTML site into ``out/html``.

    Returns
    -------
    pathlib.Path
        ``out/html``.

    Raises
    ------
    ParameterError, TooLarge, OutputError
        Before any work.
    RunFailed, BuildFailed
        A notebook or the site build failed; ``out/html`` is unchanged.
    """
    specs = [get_chapter(stem) for stem in toc_notebooks()]
    for spec in specs:  # every chapter's parameters and memory, before any work
        resolve_parameters(spec.key, profile=profile)
    out = outputs.prepare_output(out, legacy=LEGACY, signature=frozenset({"staging", "jb"}))
    work = outputs.partial_dir(out, "build")
    try:
        return _build(profile, out, work, specs, warnings_as_errors, log)
    finally:
        outputs.remove_tree(work)


def _build(profile, out: Path, work: Path, specs, warnings_as_errors, log) -> Path:
    stage = work / "stage"
    stage.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(REPO / name, stage / name)
    shutil.copytree(REPO / "book", stage / "book")
    site_assets.prepare_stage_config(stage, log=log)  # launch buttons only with a repository URL
    site_assets.stage_mathjax(stage)  # MathJax served from the site (npm package), no CDN
    site_assets.write_favicon_ico(stage / "_extra" / "favicon.ico")
    records = []
    t0 = time.time()
    notebooks = stage / "notebooks"
    (notebooks / "results").mkdir(parents=True)
    for spec in specs:
        log(f"[attnrank] executing {spec.notebook} (profile {profile}) ...")
        rec = run_chapter(spec.key, profile=profile, outdir=work / "runs")
        log(f"[attnrank]   done in {rec['seconds']:.1f} s")
        records.append(rec)
        ran = run_dir(work / "runs", spec.key)
        os.replace(ran / spec.notebook, notebooks / spec.notebook)
        os.replace(ran / f"{spec.stem}.run.json", stage / "_extra" / f"{spec.stem}.run.json")
        if (ran / "results").exists():
            for sub in (ran / "results").iterdir():
                os.replace(sub, notebooks / "results" / sub.name)
    # results tables are published with the site, at the same relative path as in the notebook
    shutil.copytree(notebooks / "results", stage / "_extra" / "notebooks" / "results")
    summary = {"profile": profile, "versions": package_versions(), "chapters": records,
               "execution_seconds": round(time.time() - t0, 1)}
    (stage / "_extra" / "run_records.json").write_text(json.dumps(summary, indent=2))
    (stage / "book" / "_generated").mkdir(exist_ok=True)
    (stage / "book" / "_generated" / "run_records.json").write_text(json.dumps(summary, indent=2))
    appendix.write_generated_pages(stage, summary, log=log)  # theorem index, reproducibility appendix
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(stage), "--path-output",
           str(work / "jb"), "--builder", "html"]
    if warnings_as_errors:
        cmd += ["--warningiserror", "--keep-going"]
    log("[attnrank] " + " ".join(cmd[1:]))
    proc = subprocess.run(cmd, cwd=stage)
    new_html = work / "jb" / "_build" / "html"
    if proc.returncode != 0 or not (new_html / "index.html").is_file():
        raise BuildFailed(f"jupyter-book build failed (exit {proc.returncode}; its messages are above); "
                          f"the previous site in {out / 'html'} is unchanged")
    html = out / "html"
    outputs.replace_folder(new_html, html)  # the previous site is kept as OUT/.retired-html
    log(f"[attnrank] site built: {html / 'index.html'}")
    return html
