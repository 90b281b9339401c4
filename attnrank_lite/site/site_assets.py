"""What the build adds to the staged book: MathJax served by the site, its icon, the staged
configuration and the course page's links.

MathJax :data:`MATHJAX_VERSION` comes from the Python package ``django-static-mathjax`` (book
extra, lock file): no CDN, no npm, so the site reads offline. It is copied with its Apache-2.0
licence into ``_extra/mathjax/``, which Sphinx publishes as ``mathjax/`` at the site root
(``_config.yml``'s ``mathjax_path`` points there). ``python -m attnrank_lite.site.site_assets``
(``make mathjax``) prints the folder used.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import tomllib
from pathlib import Path

import yaml

from .paths import REPO

__all__ = ["MATHJAX_VERSION", "MATHJAX_ENTRY", "MATHJAX_PYPI", "ensure_mathjax", "stage_mathjax",
           "prepare_stage_config", "write_favicon_ico", "write_course_links", "STUDENT_LINK_MARK", "PDF_LINK_MARK",
           "package_version"]

#: the pinned release of MathJax served with the site, and the Python package that ships it
MATHJAX_VERSION = "3.2.2"
MATHJAX_PYPI = "django-static-mathjax==3.2.2.1"
#: the combined component the pages load (Jupyter Book's default CDN file)
MATHJAX_ENTRY = "tex-mml-chtml.js"
#: es5 folders copied besides it: the lazily loaded components (TeX extensions, fonts, a11y, menu, speech)
_ES5_DIRS = ("a11y", "adaptors", "input", "output", "sre", "ui")
#: markers in book/course.md that the build replaces with links to what it produced
STUDENT_LINK_MARK = "<!-- attnrank:student-link -->"
PDF_LINK_MARK = "<!-- attnrank:pdf-link -->"


def ensure_mathjax() -> Path:
    """The ``es5`` folder of MathJax :data:`MATHJAX_VERSION` from :data:`MATHJAX_PYPI` (import name
    ``mathjax``); a one-line RuntimeError naming what to install when it is missing."""
    spec = importlib.util.find_spec("mathjax")
    for location in spec.submodule_search_locations or [] if spec else []:
        root = Path(location) / "static" / "mathjax"
        try:
            if json.loads((root / "package.json").read_text())["version"] == MATHJAX_VERSION:
                return root / "es5"  # the npm package's files, as published
        except (OSError, ValueError, KeyError):
            continue
    raise RuntimeError(f"MathJax {MATHJAX_VERSION} for the offline-readable site is missing: pip install "
                       f"{MATHJAX_PYPI} (part of the book extra: pip install '.[book]', or make install)")


def stage_mathjax(stage: Path, es5: Path | None = None) -> Path:
    """Copy MathJax (entry, lazily loaded components, licence) into ``stage/_extra/mathjax``; that folder."""
    es5, dst = Path(es5 or ensure_mathjax()), Path(stage) / "_extra" / "mathjax"
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    shutil.copy2(es5 / MATHJAX_ENTRY, dst)
    if (es5.parent / "LICENSE").is_file():  # Apache-2.0: the licence travels with the files
        shutil.copy2(es5.parent / "LICENSE", dst)
    for name in _ES5_DIRS:
        shutil.copytree(es5 / name, dst / name)
    return dst


def write_favicon_ico(path: Path) -> Path:
    """Write ``book/favicon.svg``'s design (a white "A" on blue) as ``favicon.ico``, which browsers ask
    for on pages without an icon link (the root redirect page)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    draw.rounded_rectangle((0, 0, 63, 63), radius=12, fill=(31, 78, 121, 255))
    for line, width in (((20, 50, 33, 12), 6), ((33, 12, 44, 50), 6), ((25, 37, 41, 37), 5)):
        draw.line(line, fill=(255, 255, 255, 255), width=width)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format="ICO", sizes=[(16, 16), (32, 32), (64, 64)])
    return Path(path)


def package_version() -> str:
    """``version`` of the repository's ``pyproject.toml``, or the installed distribution's outside a checkout."""
    if (REPO / "pyproject.toml").is_file():
        return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    from importlib.metadata import version

    return version("attnrank-lite")


def prepare_stage_config(stage: Path, log=print, student: bool = False, book_pdf: str = "") -> dict:
    """Write the staged ``_config.yml`` for this build and return it: the package version for the
    footer (``attnrank_version``), ``hide_solutions`` for the ``student`` edition, the whole-book
    PDF ``book_pdf`` for the download menu (``attnrank_book_pdf``; empty: none), and, without
    ``repository.url`` (the theme cannot build launch links then), no Binder/Colab buttons (logged)."""
    path = Path(stage) / "_config.yml"
    config = yaml.safe_load(path.read_text()) or {}
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx["attnrank_version"] = package_version()
    if student:
        sphinx["hide_solutions"] = True
    if book_pdf:
        sphinx["attnrank_book_pdf"] = book_pdf
    if not str((config.get("repository") or {}).get("url") or "").strip():
        launch, hosts = config.setdefault("launch_buttons", {}), ("binderhub_url", "colab_url", "jupyterhub_url",
                                                                  "deepnote_url")
        if any(launch.get(k) for k in hosts):
            log("[attnrank] note: repository.url is empty in _config.yml, so the Binder/Colab launch "
                "buttons are left out (see book/rerun.md)")
        launch.update(dict.fromkeys(hosts, ""), thebe=False)
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return config


def write_course_links(stage: Path, out: Path, *, pdf: bool, student: bool, pdf_name: str) -> dict:
    """Replace the staged course page's two markers with links to the handouts this build has: the
    PDF ``pdf_name`` at the site root when ``pdf`` (else a sentence that there is none), and the
    student edition when ``out/student/html/index.html`` exists and this is not it (else nothing).
    Returns ``{"pdf": bool, "student": bool}``, the links written."""
    page = Path(stage) / "book" / "course.md"
    links = {"pdf": bool(pdf), "student": not student and (Path(out) / "student/html/index.html").is_file()}
    if not page.is_file():
        return {"pdf": bool(pdf), "student": False}
    text = page.read_text().replace(STUDENT_LINK_MARK, ' Built beside this site, it is here: <a href="../../'
                                    'student/html/index.html">the student edition</a>.' if links["student"] else "")
    page.write_text(text.replace(PDF_LINK_MARK, f' This site was built with it: <a href="../{pdf_name}">download '
                                 f'{pdf_name}</a> (also in the download menu of every page).' if pdf else
                                 " This site was built without `--pdf`, so it has no PDF."))
    return links


if __name__ == "__main__":
    print(ensure_mathjax())
