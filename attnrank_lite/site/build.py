"""Build the website: execute every chapter with papermill, stage the sources, run Jupyter Book.

The build always executes the notebooks afresh (Jupyter Book's own execution and cache are
off), so a page can never show outputs from an older version of the package.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import appendix, site_assets
from .chapters import get_chapter
from .paths import REPO, toc_notebooks
from .runner import package_versions, run_chapter

__all__ = ["build_book"]



def build_book(profile: str = "book", out: str | os.PathLike = REPO / "_build",
               warnings_as_errors: bool = True, log=print) -> Path:
    """Execute all chapters with ``profile`` and build the HTML site into ``out/html``.

    Returns
    -------
    pathlib.Path
        ``out/html``.
    """
    out = Path(out).resolve()
    stage = out / "staging"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(REPO / name, stage / name)
    shutil.copytree(REPO / "book", stage / "book")
    site_assets.prepare_stage_config(stage, log=log)  # launch buttons only with a repository URL
    site_assets.stage_mathjax(stage)  # MathJax served from the site (npm package), no CDN
    site_assets.write_favicon_ico(stage / "_extra" / "favicon.ico")
    records = []
    t0 = time.time()
    for stem in toc_notebooks():
        spec = get_chapter(stem)
        log(f"[attnrank] executing {spec.notebook} (profile {profile}) ...")
        rec = run_chapter(spec.key, profile=profile, outdir=stage / "notebooks")
        log(f"[attnrank]   done in {rec['seconds']:.1f} s")
        records.append(rec)
    # results tables are published with the site, at the same relative path as in the notebook
    extra = stage / "_extra" / "notebooks"
    if (stage / "notebooks" / "results").exists():
        shutil.copytree(stage / "notebooks" / "results", extra / "results")
    (stage / "_extra").mkdir(exist_ok=True)
    for f in (stage / "notebooks").glob("*.run.json"):
        os.replace(f, stage / "_extra" / f.name)
    summary = {"profile": profile, "versions": package_versions(), "chapters": records,
               "execution_seconds": round(time.time() - t0, 1)}
    (stage / "_extra" / "run_records.json").write_text(json.dumps(summary, indent=2))
    (stage / "book" / "_generated").mkdir(exist_ok=True)
    (stage / "book" / "_generated" / "run_records.json").write_text(json.dumps(summary, indent=2))
    appendix.write_generated_pages(stage, summary, log=log)  # theorem index, reproducibility appendix
    html = out / "html"
    if html.exists():
        shutil.rmtree(html)
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(stage), "--path-output", str(out / "jb"),
           "--builder", "html"]
    if warnings_as_errors:
        cmd += ["--warningiserror", "--keep-going"]
    log("[attnrank] " + " ".join(cmd[1:]))
    proc = subprocess.run(cmd, cwd=stage)
    if proc.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed (exit {proc.returncode})")
    shutil.move(str(out / "jb" / "_build" / "html"), str(html))
    log(f"[attnrank] site built: {html / 'index.html'}")
    return html
