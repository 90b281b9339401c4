"""What the build adds to the staged book: MathJax served by the site (offline; from the Python package
``django-static-mathjax``), the icon, the configuration and the course page's links."""
from __future__ import annotations

import importlib.resources
import json
import shutil
import tomllib
from pathlib import Path

import yaml

from .paths import REPO

__all__ = ["MATHJAX_VERSION", "MATHJAX_ENTRY", "MATHJAX_PYPI", "ensure_mathjax", "stage_mathjax",
           "prepare_stage_config", "write_favicon_ico", "write_course_links", "STUDENT_LINK_MARK", "PDF_LINK_MARK"]

#: the release of MathJax served with the site, the Python package that ships it, the component the
#: pages load (Jupyter Book's default) and the lazily loaded ones (TeX extensions, fonts, a11y, menu)
MATHJAX_VERSION, MATHJAX_PYPI, MATHJAX_ENTRY = "3.2.2", "django-static-mathjax==3.2.2.1", "tex-mml-chtml.js"
_ES5_DIRS = ("a11y", "adaptors", "input", "output", "sre", "ui")
#: markers in book/course.md that the build replaces with links to what it produced
STUDENT_LINK_MARK, PDF_LINK_MARK = "<!-- attnrank:student-link -->", "<!-- attnrank:pdf-link -->"


def ensure_mathjax() -> Path:
    """The ``es5`` folder of MathJax :data:`MATHJAX_VERSION` (:data:`MATHJAX_PYPI`), or a RuntimeError."""
    try:
        root = Path(str(importlib.resources.files("mathjax"))) / "static" / "mathjax"
        if json.loads((root / "package.json").read_text())["version"] == MATHJAX_VERSION:
            return root / "es5"
    except (ImportError, OSError, ValueError, KeyError):
        pass
    raise RuntimeError(f"MathJax {MATHJAX_VERSION} for the offline-readable site is missing: pip install "
                       f"{MATHJAX_PYPI} (part of the book extra: pip install '.[book]', or make install)")


def stage_mathjax(stage: Path, es5: Path | None = None) -> Path:
    """Copy MathJax (entry, lazily loaded parts, licence) to ``stage/_extra/mathjax``, the site's ``mathjax/``."""
    es5, dst, keep = Path(es5 or ensure_mathjax()), Path(stage) / "_extra" / "mathjax", {MATHJAX_ENTRY, *_ES5_DIRS}
    shutil.copytree(es5, dst, dirs_exist_ok=True, ignore=lambda d, names: set(names) - keep if d == str(es5) else ())
    shutil.copy2(es5.parent / "LICENSE", dst)  # Apache-2.0: the licence travels with the files
    return dst


def write_favicon_ico(path: Path) -> Path:
    """``book/favicon.svg``'s design as ``favicon.ico``, which browsers ask for on pages without an icon link."""
    from PIL import Image, ImageDraw

    draw = ImageDraw.Draw(img := Image.new("RGBA", (64, 64), (0, 0, 0, 0)))
    draw.rounded_rectangle((0, 0, 63, 63), radius=12, fill=(31, 78, 121, 255))
    for line, width in (((20, 50, 33, 12), 6), ((33, 12, 44, 50), 6), ((25, 37, 41, 37), 5)):
        draw.line(line, fill=(255, 255, 255, 255), width=width)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format="ICO", sizes=[(16, 16), (32, 32), (64, 64)])
    return Path(path)


def prepare_stage_config(stage: Path, log=print, student: bool = False, book_pdf: str = "") -> dict:
    """Write and return the staged ``_config.yml``: the version, ``hide_solutions`` (``student``), the PDF
    ``book_pdf`` of the download menu, and no launch buttons without ``repository.url`` (logged)."""
    path = Path(stage) / "_config.yml"
    config = yaml.safe_load(path.read_text()) or {}
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx["attnrank_version"] = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    if student:
        sphinx["hide_solutions"] = True
    if book_pdf:
        sphinx["attnrank_book_pdf"] = book_pdf
    hosts = ("binderhub_url", "colab_url", "jupyterhub_url", "deepnote_url")
    if not str((config.get("repository") or {}).get("url") or "").strip():
        if any((launch := config.setdefault("launch_buttons", {})).get(k) for k in hosts):
            log("[attnrank] note: repository.url is empty in _config.yml, so the Binder/Colab launch "
                "buttons are left out (see book/rerun.md)")
        launch.update(dict.fromkeys(hosts, ""), thebe=False)
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return config


def write_course_links(stage: Path, out: Path, *, pdf: bool, student: bool, pdf_name: str) -> dict:
    """Link on the staged course page the handouts that exist (the PDF, a student edition built beside)."""
    page = Path(stage) / "book" / "course.md"
    links = {"pdf": bool(pdf), "student": not student and (Path(out) / "student/html/index.html").is_file()}
    text = page.read_text().replace(STUDENT_LINK_MARK, ' Built beside this site, it is here: <a href="../../'
                                    'student/html/index.html">the student edition</a>.' if links["student"] else "")
    page.write_text(text.replace(PDF_LINK_MARK, f' This site was built with it: <a href="../{pdf_name}">download '
                                 f'{pdf_name}</a> (also in the download menu of every page).' if pdf else
                                 " This site was built without `--pdf`, so it has no PDF."))
    return links


if __name__ == "__main__":
    print(ensure_mathjax())
