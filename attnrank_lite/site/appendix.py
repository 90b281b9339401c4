"""The pages the website build generates into the staged book after every chapter ran (the committed
ones are placeholders): the theorem index (every statement box of the table of contents, its source
marker, proof and code) and the reproducibility appendix (from the run records)."""
from __future__ import annotations

import html
import pkgutil
import re
import subprocess
from dataclasses import dataclass, replace
from itertools import takewhile
from pathlib import Path

import nbformat
from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin

from .chapters import all_chapters, get_chapter
from .pagenote import machine_text, rerun_command
from .paths import REPO, toc_files
from .spec import ParameterError

__all__ = ["StatementBox", "MARKERS", "scan_markdown", "scan_toc", "toc_files", "toc_titles", "page_title",
           "render_theorem_index", "code_maps", "api_href",
           "render_reproducibility", "write_generated_pages", "GENERATED_PAGES", "API_GROUPS"]

#: the generated pages, as toc entries (without suffix)
GENERATED_PAGES = ("book/theorems", "book/reproducibility")
#: the subpackages with a page in the API reference (``book/api/<name>.md``)
API_GROUPS = ("engine", "basics", "laws", "quotient", "calibration")
#: source markers a statement box opens with, as (regex, canonical name)
MARKERS = (
    (re.compile(r"claim\s+of\s+the\s+paper", re.I), "Claim of the paper"),
    (re.compile(r"proved\s+here", re.I), "Proved here"),
    (re.compile(r"numerical\s+evidence\s+here", re.I), "Numerical evidence here"),
)
_OPEN = re.compile(r"^\{prf:(?P<kind>[a-zA-Z]+)\}[ \t]*(?P<title>.*?)\s*$")
_OPTION = re.compile(r"^\s*:(?P<key>[a-zA-Z_-]+):\s*(?P<value>.*?)\s*$")
_BOLD = re.compile(r"^\s*\*\*(?P<text>.+?)\*\*")


@dataclass(frozen=True)
class StatementBox:
    """One sphinx-proof box: ``kind`` (after ``prf:``), ``title``, ``label``, ``marker`` (of :data:`MARKERS`,
    in its first line), ``lead`` (opening bold phrase or first 80 characters), ``page``, ``has_proof``."""

    kind: str
    title: str
    label: str | None
    marker: str | None
    lead: str
    page: str
    has_proof: bool = False


def scan_markdown(text: str, page: str = "") -> list[StatementBox]:
    """Statement boxes of one MyST text (markdown-it's backtick or colon fences: three or more, closed by at
    least as many); a ``{prf:proof}`` box sets ``has_proof`` on the statement before it."""
    boxes: list[StatementBox] = []
    for tok in MarkdownIt("commonmark").use(colon_fence_plugin).parse(text):
        if tok.type not in ("fence", "colon_fence") or not (m := _OPEN.match(tok.info)):
            continue
        lines = tok.content.splitlines()
        options = [o.groups() for o in takewhile(bool, map(_OPTION.match, lines))]
        first = next((ln.strip() for ln in lines[len(options):] if ln.strip()), "")
        kind = {"thm": "theorem"}.get(m["kind"].lower(), m["kind"].lower())
        if kind == "proof":
            boxes[-1:] = [replace(b, has_proof=True) for b in boxes[-1:]]
            continue
        bold = _BOLD.match(first)
        boxes.append(StatementBox(kind, m["title"], dict(options).get("label") or None, page=page,
                                  marker=next((name for rx, name in MARKERS if rx.search(first)), None),
                                  lead=bold["text"] if bold else first[:80] + ("…" if len(first) > 80 else "")))
    return boxes


def _page_markdown(path: Path) -> str:
    if path.suffix != ".ipynb":
        return path.read_text()
    return "\n\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


def page_title(markdown: str) -> str | None:
    """The first level-1 heading of a page's markdown (MyST, may contain math), or None."""
    m = re.search(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$", markdown, re.M)
    return m.group(1) if m else None


def _resolve(root: Path, entry: str) -> Path | None:
    return next((p for s in ("", ".ipynb", ".md") if (p := Path(root) / (entry + s)).is_file()), None)


def _pages(root: Path, toc_path: Path | None):
    """``(entry without suffix, markdown)`` of every page of the table of contents found under ``root``."""
    for entry in toc_files(toc_path or Path(root) / "_toc.yml"):
        if (path := _resolve(root, entry)) is not None:
            yield (entry.rsplit(".", 1)[0] if entry.endswith((".md", ".ipynb")) else entry), _page_markdown(path)


def toc_titles(root: Path, toc_path: Path | None = None) -> dict[str, str]:
    """Toc entry -> page title (first level-1 heading) for every page found under ``root``."""
    return {entry: title for entry, md in _pages(root, toc_path) if (title := page_title(md))}


def scan_toc(root: Path, toc_path: Path | None = None) -> list[StatementBox]:
    """Statement boxes of the pages of the table of contents under ``root`` but :data:`GENERATED_PAGES`."""
    return [b for page, md in _pages(root, toc_path) if page not in GENERATED_PAGES for b in scan_markdown(md, page)]


def _heading(page: str, titles: dict | None, level: str, prefix: str = "") -> list[str]:
    """A heading with the page's title and a link to the page, or the ``{doc}`` link when no title is known."""
    target = page.split("/", 1)[1] if page.startswith("book/") else "../" + page
    title = (titles or {}).get(page)
    if title is None:
        return [f"{level} {prefix}{{doc}}`{target}`", ""]
    return [f"{level} {prefix}{title}", "", "{doc}`Open the page <" + target + ">`", ""]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def code_maps() -> dict[str, list[str]]:
    """Statement label -> dotted paths of its code, from every chapter spec's ``code`` map."""
    out: dict[str, list[str]] = {}
    for spec in all_chapters():
        for label, paths in spec.code.items():
            out.setdefault(label, []).extend(paths)
    return out


def api_href(path: str) -> str | None:
    """The API reference's address (from ``book/theorems.html``) of a dotted path, re-exported names at
    their defining module, or None outside :data:`API_GROUPS`."""
    try:
        obj = pkgutil.resolve_name(path)
        path = f"{obj.__module__}.{obj.__qualname__}"
    except (ImportError, AttributeError, ValueError):
        pass
    parts = path.split(".")
    if len(parts) >= 3 and parts[0] == "attnrank_lite" and parts[1] in API_GROUPS:
        return f"api/{parts[1]}.html#{html.escape(path, quote=True)}"
    return None


def _code_cell(paths: list[str] | None) -> str:
    """One path per line, breakable after its dots (``<wbr>``), each linked to its API entry."""
    cells = []
    for p in paths or []:
        code = ('<code class="docutils literal notranslate">'
                + html.escape(p.removeprefix("attnrank_lite.")).replace(".", ".<wbr>") + "</code>")
        href = api_href(p)
        cells.append(code if href is None else f'<a class="reference internal" href="{href}">{code}</a>')
    return "<br>".join(cells) or "—"


def render_theorem_index(boxes: list[StatementBox], titles: dict | None = None,
                         code: dict | None = None) -> str:
    """MyST markdown of the theorem index; ``titles``: toc entry -> title, ``code``: label -> dotted paths."""
    code = code_maps() if code is None else code
    counts = {name: sum(b.marker == name for b in boxes) for _, name in MARKERS}
    n_def = sum(b.kind == "definition" and b.marker is None for b in boxes)
    unmarked = [b for b in boxes if b.marker is None and b.kind != "definition"]
    out = [
        "# Theorem index",
        "",
        "Every statement box of the book, in reading order, with where it comes from. This page is",
        "generated by the build from the chapters themselves (`attnrank_lite/site/appendix.py`).",
        "",
        "* **Claim of the paper** — a sentence of the paper's abstract {cite}`attnrank2026`, quoted in the box.",
        "  A mathematical claim sits in a theorem box, an empirical one (the BERT calibration) in an",
        "  observation box. The claim as the abstract states it is not proved in the book, so its Proof",
        "  column is '—'; where the box names *the book's reading* of the claim and that reading is",
        "  proved, the proof belongs to the **Proved here** box it names (for example the residual",
        "  bound read into the interaction-subspace claim), and says exactly what it covers.",
        "* **Proved here** — the book's own statement, with its proof on the page (a conditional",
        "  statement says so in its title and its first line).",
        "* **Numerical evidence here** — checked on the instances the chapter computes, not proved.",
        "* Definitions fix notation and say where they come from.",
        "* **Code**: the functions of the package `attnrank_lite` that implement or check the statement",
        "  (paths relative to the package).",
        "",
        f"In all: {len(boxes)} boxes — {counts['Claim of the paper']} claims of the paper, "
        f"{counts['Proved here']} proved here, {counts['Numerical evidence here']} numerical evidence, "
        f"{n_def} definitions" + (f", {len(unmarked)} without a source marker." if unmarked else "."),
        "",
    ]
    pages: dict[str, list[StatementBox]] = {}
    for b in boxes:
        pages.setdefault(b.page, []).append(b)
    for page, group in pages.items():
        out += _heading(page, titles, "##")
        out += ["| Statement | Title | Source | Proof on the page | Code |", "|---|---|---|---|---|"]
        for b in group:
            name = "{prf:ref}`" + b.label + "`" if b.label else f"{b.kind.capitalize()} (no label)"
            source = (f"**{b.marker}**" if b.marker else _cell(b.lead) if b.kind == "definition"
                      else "**no source marker**")
            proof = "yes" if b.has_proof else ("**missing**" if b.marker == "Proved here" else "—")
            out.append(f"| {name} | {_cell(b.title) or '—'} | {source} | {proof} | "
                       f"{_code_cell(code.get(b.label) if b.label else None)} |")
        out.append("")
    if not boxes:
        out += ["No statement boxes were found in the pages of the table of contents.", ""]
    return "\n".join(out)


def _git_state(repo: Path) -> str:
    try:
        def git(*args):
            return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()

        dirty = git("status", "--porcelain", "--untracked-files=no")
        return f"`{git('rev-parse', '--short=12', 'HEAD')}`" + (" with uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def _fmt(value) -> str:
    return "`" + _cell(repr(value)) + "`"


def _links(files, nbdir: str, extra_root: Path | None) -> list[str]:
    """Links to the run's files that exist in ``extra_root``."""
    return [f'<a href="../{nbdir}/{t}">{Path(t).name}</a>' for t in files
            if extra_root is None or (Path(extra_root) / nbdir / t).is_file()]


def render_reproducibility(summary: dict, pages: dict[str, str], extra_root: Path | None = None,
                           git_state: str = "unknown", titles: dict | None = None) -> str:
    """MyST markdown of the reproducibility appendix from the build's run ``summary``; ``pages``: notebook
    file -> toc entry, ``titles``: toc entry -> title; only files in ``extra_root`` are linked."""
    profile = summary.get("profile", "?")
    chapters = summary.get("chapters", [])
    n_reused = sum(rec.get("cache") == "reused" for rec in chapters)
    out = [
        "# Reproducibility",
        "",
        "This page is generated by the build that produced this site (`attnrank_lite/site/appendix.py`), from",
        "the run record each executed notebook leaves behind, so it always describes the pages you are",
        "reading. {doc}`rerun` explains how to rerun any chapter with other parameters.",
        "",
        f"* Profile: **{profile}** (`quick`, `book` = the defaults, or `paper`).",
        f"* Source: commit {git_state}.",
        f"* Machine: {machine_text(chapters[0]) if chapters else 'unknown'}.",
        f"* Notebook execution, all chapters: {summary.get('execution_seconds', 0):.1f} s"
        + (f" ({n_reused} of {len(chapters)} reused from the build's cache)." if n_reused else "."),
        "* Raw records: <a href=\"../run_records.json\">run_records.json</a>.",
        "",
        "## Package versions",
        "",
        "| Package | Version |",
        "|---|---|",
        *(f"| {name} | {ver} |" for name, ver in summary.get("versions", {}).items()),
        "",
        "## Chapters",
        "",
    ]
    if not chapters:
        out += ["No chapter was executed in this build.", ""]
    else:
        out += ["| Chapter | Profile | Run time | Machine | Rerun it with the quick profile |", "|---|---|---|---|---|"]
        for rec in chapters:
            how = " (reused from the build cache)" if rec.get("cache") == "reused" else ""
            out.append(f"| {rec['chapter']} | `{rec.get('profile', profile)}` | {rec['seconds']:.1f} s{how} | "
                       f"{machine_text(rec)} | `{rerun_command(rec['chapter'])}` |")
        out.append("")
    for rec in chapters:
        page, stem = pages.get(rec["notebook"]), Path(rec["notebook"]).stem
        out += (_heading(page, titles, "###", prefix=f"{rec['chapter']}: ") if page
                else [f"### {rec['chapter']}: {rec.get('title', rec['notebook'])}", ""])
        reused = (" (reused from the build's cache: same notebook, parameters, package and versions)"
                  if rec.get("cache") == "reused" else "")
        out += [f"Executed with profile `{rec.get('profile', profile)}` in **{rec['seconds']:.1f} s** "
                f"on {machine_text(rec)} (finished {rec.get('finished', '?')}){reused}. "
                f"Run record: <a href=\"../{stem}.run.json\">{stem}.run.json</a>.", ""]
        try:
            defaults = get_chapter(rec["chapter"]).defaults()
        except ParameterError:  # a record of a chapter that no longer exists: show values only
            defaults = {}
        out += ["| Parameter | Value in this build | Book default |", "|---|---|---|"]
        for name, value in rec.get("parameters", {}).items():
            mark = " (changed)" if name in defaults and defaults[name] != value else ""
            out.append(f"| `{name}` | {_fmt(value)}{mark} | {_fmt(defaults.get(name, '?'))} |")
        cmd = f"python -m attnrank_lite run {rec['chapter']} --profile {rec.get('profile', profile)} -o runs"
        out += ["", "Rerun exactly this:", "", "```bash", cmd, "```", ""]
        nbdir = Path(page).parent.as_posix() if page else "notebooks"
        tables = _links(rec.get("results", []), nbdir, extra_root)
        out.append("Results tables (CSV): " + (", ".join(tables) if tables else "none") + ".")
        bundles = _links(rec.get("certificates", []), nbdir, extra_root)
        if bundles or rec.get("certificates_omitted"):
            out += ["", "Certificates of its bracket tables (zips of `.npz` files; recheck with "
                    "`python -m attnrank_lite verify --independent`, see {doc}`rerun`): "
                    + (", ".join(bundles) if bundles else "none") + "."
                    + "".join(f" Not published: {o}." for o in rec.get("certificates_omitted", []))]
        out.append("")
    return "\n".join(out)


def write_generated_pages(stage: Path, summary: dict, log=print) -> dict[str, Path]:
    """Write ``book/theorems.md`` and ``book/reproducibility.md`` into the staged book, logging each box
    without a source marker; ``{"theorems": path, "reproducibility": path}``."""
    stage = Path(stage)
    boxes = scan_toc(stage)
    for b in boxes:
        if b.marker is None and b.kind != "definition":
            log(f"[attnrank] note: {b.page}: {b.kind} {b.label or b.title!r} has no source marker "
                "(Claim of the paper / Proved here / Numerical evidence here)")
    pages = {Path(e).name + ".ipynb": e for e in toc_files(stage / "_toc.yml") if e.startswith("notebooks/")}
    titles = toc_titles(stage)
    theorems, repro = stage / "book" / "theorems.md", stage / "book" / "reproducibility.md"
    theorems.write_text(render_theorem_index(boxes, titles))
    repro.write_text(render_reproducibility(summary, pages, extra_root=stage / "_extra",
                                            git_state=_git_state(REPO), titles=titles))
    return {"theorems": theorems, "reproducibility": repro}
