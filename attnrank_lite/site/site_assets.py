"""Static assets of the website that must not come from a CDN, and the staged build configuration.

The site renders its mathematics with MathJax 3 served **from the site itself**, so a reader
without internet access (or behind a firewall) still sees typeset formulas. MathJax
:data:`MATHJAX_VERSION` comes from the Python package ``django-static-mathjax`` (in the ``book``
extra and the lock file; it holds the npm package's files, ``es5/`` and its Apache-2.0
``LICENSE``, and needs nothing else), so no npm is needed. Where that package is missing, a copy
installed by npm into the ignored folder ``.mathjax/`` is used, and npm installs one as a last
resort. The files are copied, with MathJax's licence, into the staged book's ``_extra/mathjax/``,
which Sphinx copies verbatim to ``mathjax/`` at the root of the site (not into ``_static``:
Jupyter Book would add every script found there to every page). ``_config.yml`` points Sphinx's
``mathjax_path`` (a path relative to ``_static``) at ``../mathjax/tex-mml-chtml.js``.

Run ``python -m attnrank_lite.site.site_assets`` (the Makefile's ``mathjax`` target) to see which
copy is used; :func:`attnrank_lite.site.build.build_book` finds it on demand.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import yaml

from .paths import REPO

__all__ = ["MATHJAX_VERSION", "MATHJAX_ENTRY", "MATHJAX_PYPI", "python_mathjax", "ensure_mathjax", "stage_mathjax",
           "prepare_stage_config",
           "launch_buttons_enabled", "write_favicon_ico", "write_course_links", "STUDENT_LINK_MARK", "PDF_LINK_MARK",
           "package_version"]

#: the pinned npm release of MathJax served with the site
MATHJAX_VERSION = "3.2.2"
#: the Python package that ships it (pinned in pyproject.toml's book extra)
MATHJAX_PYPI = "django-static-mathjax==3.2.2.1"
#: the combined component the pages load (same as Jupyter Book's default CDN file)
MATHJAX_ENTRY = "tex-mml-chtml.js"
_PREFIX = REPO / ".mathjax"
# es5 entries copied to the site besides MATHJAX_ENTRY: the lazily loaded components
# (TeX extensions, fonts, accessibility, menu, speech rule engine)
_ES5_DIRS = ("a11y", "adaptors", "input", "output", "sre", "ui")


def _installed_version(prefix: Path) -> str | None:
    pkg = prefix / "node_modules" / "mathjax" / "package.json"
    try:
        return json.loads(pkg.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def python_mathjax() -> Path | None:
    """The ``es5`` folder of MathJax :data:`MATHJAX_VERSION` from the Python package
    (:data:`MATHJAX_PYPI`, import name ``mathjax``), or None when it is not installed."""
    try:
        spec = importlib.util.find_spec("mathjax")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        root = Path(location) / "static" / "mathjax"
        try:
            version = json.loads((root / "package.json").read_text())["version"]
        except (OSError, ValueError, KeyError):
            continue
        if version == MATHJAX_VERSION and (root / "es5" / MATHJAX_ENTRY).is_file():
            return root / "es5"
    return None


def ensure_mathjax(prefix: Path = _PREFIX, log=print) -> Path:
    """MathJax :data:`MATHJAX_VERSION`: from the Python package, else from ``prefix`` (npm), else
    installed there with npm.

    Returns
    -------
    pathlib.Path
        The package's ``es5`` folder (holding :data:`MATHJAX_ENTRY`).

    Raises
    ------
    RuntimeError
        None of the three is possible (the message says what to install, in one line).
    """
    es5 = python_mathjax()
    if es5 is not None:
        return es5
    prefix = Path(prefix)
    es5 = prefix / "node_modules" / "mathjax" / "es5"
    if _installed_version(prefix) == MATHJAX_VERSION and (es5 / MATHJAX_ENTRY).is_file():
        return es5
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            f"MathJax {MATHJAX_VERSION} for the offline-readable site is missing: pip install "
            f"{MATHJAX_PYPI} (part of the book extra: pip install '.[book]', or make install)")
    log(f"[attnrank] installing mathjax@{MATHJAX_VERSION} with npm into {prefix}")
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-save", "--no-audit", "--no-fund",
                           "--loglevel=error", f"mathjax@{MATHJAX_VERSION}"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or _installed_version(prefix) != MATHJAX_VERSION:
        raise RuntimeError(f"npm install of mathjax@{MATHJAX_VERSION} failed:\n{proc.stdout}\n{proc.stderr}")
    return es5


def stage_mathjax(stage: Path, es5: Path | None = None) -> Path:
    """Copy MathJax into ``stage/_extra/mathjax`` (published as ``mathjax/`` at the site root).

    Returns
    -------
    pathlib.Path
        The staged ``mathjax`` folder.
    """
    es5 = Path(es5) if es5 is not None else ensure_mathjax()
    dst = Path(stage) / "_extra" / "mathjax"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    shutil.copy2(es5 / MATHJAX_ENTRY, dst / MATHJAX_ENTRY)
    if (es5.parent / "LICENSE").is_file():  # Apache-2.0: the licence travels with the files
        shutil.copy2(es5.parent / "LICENSE", dst / "LICENSE")
    for name in _ES5_DIRS:
        if (es5 / name).is_dir():
            shutil.copytree(es5 / name, dst / name)
    return dst


def write_favicon_ico(path: Path) -> Path:
    """Write the site's icon as ``favicon.ico`` (for pages without an icon link, such as the root
    redirect page, browsers ask the server for ``/favicon.ico``). Same design as ``book/favicon.svg``.
    """
    from PIL import Image, ImageDraw

    size = 64
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    draw.rounded_rectangle((0, 0, size - 1, size - 1), radius=12, fill=(31, 78, 121, 255))
    # a white italic-ish "A": two strokes and a bar
    w = (255, 255, 255, 255)
    draw.line((20, 50, 33, 12), fill=w, width=6)
    draw.line((33, 12, 44, 50), fill=w, width=6)
    draw.line((25, 37, 41, 37), fill=w, width=5)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format="ICO", sizes=[(16, 16), (32, 32), (64, 64)])
    return path


def launch_buttons_enabled(config: dict) -> bool:
    """Launch buttons (Binder, Colab) need the public repository URL: ``repository.url`` in ``_config.yml``."""
    return bool(str((config.get("repository") or {}).get("url") or "").strip())


def package_version() -> str:
    """The package's version: ``version`` of the repository's ``pyproject.toml``, or the installed
    distribution's where there is no repository."""
    import tomllib

    project = REPO / "pyproject.toml"
    if project.is_file():
        return tomllib.loads(project.read_text())["project"]["version"]
    from importlib.metadata import version

    return version("attnrank-lite")


def prepare_stage_config(stage: Path, log=print, student: bool = False, book_pdf: str = "") -> dict:
    """Adjust the staged ``_config.yml`` for the build and return it.

    ``book_pdf``: the file name of the whole-book PDF this build prints at the site root (empty:
    none); set as the Sphinx option ``attnrank_book_pdf``, which puts it in every page's download
    menu (:mod:`attnrank_lite.site.sphinx_ext`).

    Without ``repository.url`` the theme cannot build launch links (it would fail on every
    notebook page), so the Binder/Colab URLs are blanked in the staged copy and a note is logged.
    ``student``: sphinx-exercise's ``hide_solutions`` is switched on (the exercises stay, with
    their numbers; every ``{solution}`` is left out of the pages).
    """
    path = Path(stage) / "_config.yml"
    config = yaml.safe_load(path.read_text()) or {}
    sphinx = config.setdefault("sphinx", {}) or {}
    sphinx.setdefault("config", {})["attnrank_version"] = package_version()  # every page's footer
    config["sphinx"] = sphinx
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    if student or book_pdf:
        sphinx = config.setdefault("sphinx", {}) or {}
        if student:
            sphinx.setdefault("config", {})["hide_solutions"] = True
        if book_pdf:
            sphinx.setdefault("config", {})["attnrank_book_pdf"] = book_pdf
        config["sphinx"] = sphinx
        path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    if not launch_buttons_enabled(config):
        launch = config.setdefault("launch_buttons", {}) or {}
        if any(launch.get(k) for k in ("binderhub_url", "colab_url", "jupyterhub_url", "deepnote_url")):
            log("[attnrank] note: repository.url is empty in _config.yml, so the Binder/Colab launch "
                "buttons are left out (see book/rerun.md)")
        for k in ("binderhub_url", "colab_url", "jupyterhub_url", "deepnote_url"):
            launch[k] = ""
        launch["thebe"] = False
        config["launch_buttons"] = launch
        path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return config


#: markers in book/course.md that the build replaces with links to what it produced
STUDENT_LINK_MARK = "<!-- attnrank:student-link -->"
PDF_LINK_MARK = "<!-- attnrank:pdf-link -->"


def write_course_links(stage: Path, out: Path, *, pdf: bool, student: bool, pdf_name: str) -> dict:
    """Link, on the staged course page, only the handouts this build produced or found.

    The course page (``book/course.md``) names the student edition and the PDF with the commands
    that make them and carries two markers. The build replaces them:

    * the PDF marker, when this build prints the PDF (``pdf``), with a link to ``pdf_name`` at
      the root of this site, else with a sentence that this site was built without it;
    * the student-edition marker, when ``out/student/html/index.html`` exists (a student build
      beside this site, as ``-o OUT/student`` writes it) and this is not itself the student
      build, with a link to it; else with nothing.

    Parameters
    ----------
    stage : path
        The staged book.
    out : path
        The build's output folder (the site goes to ``out/html``).
    pdf, student : bool
        Whether this build prints the PDF, and whether it is the student build.
    pdf_name : str
        The PDF's file name at the site root.

    Returns
    -------
    dict
        ``{"pdf": bool, "student": bool}``: which links were written.
    """
    page = Path(stage) / "book" / "course.md"
    links = {"pdf": bool(pdf), "student": False}
    if not page.is_file():
        return links
    text = page.read_text()
    student_site = Path(out) / "student" / "html" / "index.html"
    if not student and student_site.is_file():
        links["student"] = True
        text = text.replace(STUDENT_LINK_MARK, ' Built beside this site, it is here: '
                            '<a href="../../student/html/index.html">the student edition</a>.')
    else:
        text = text.replace(STUDENT_LINK_MARK, "")
    if pdf:
        text = text.replace(PDF_LINK_MARK, f' This site was built with it: <a href="../{pdf_name}">'
                            f'download {pdf_name}</a> (also in the download menu of every page).')
    else:
        text = text.replace(PDF_LINK_MARK, " This site was built without `--pdf`, so it has no PDF.")
    page.write_text(text)
    return links


if __name__ == "__main__":
    print(ensure_mathjax())
