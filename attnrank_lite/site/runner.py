"""Execute one chapter notebook with papermill: validated parameters, atomic outputs, a run record."""
from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from .chapters import NOTEBOOK_DIR, get_chapter
from .spec import ParameterError

__all__ = ["resolve_parameters", "run_chapter", "RunFailed", "package_versions", "ParameterError"]

KEY_PACKAGES = ("numpy", "scipy", "matplotlib", "pandas", "torch", "transformers", "papermill",
                "jupyter-book", "sphinx", "sphinx-proof", "myst-nb")


class RunFailed(RuntimeError):
    """The notebook raised while executing; the message names the failing cell's error."""


def package_versions() -> dict:
    """Versions of the packages that shape the book's numbers and pages."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in KEY_PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def resolve_parameters(chapter: str, overrides: dict | None = None, profile: str = "book"):
    """Validate a chapter's parameters before any work.

    Returns
    -------
    spec : ChapterSpec
    values : dict
        The full, validated parameter set: the profile's values updated by ``overrides``.
    """
    spec = get_chapter(chapter)
    values = spec.profile(profile)
    values.update(spec.validate(overrides or {}, partial=True))
    return spec, spec.validate(values)


def _tag_injected_cell(path: Path) -> None:
    """Papermill does not copy tags onto its injected-parameters cell: give it the parameters cell's
    display tags so the page shows the values it ran with in the same style."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    tags = []
    for cell in nb.cells:
        t = cell.get("metadata", {}).get("tags", [])
        if "parameters" in t:
            tags = [x for x in t if x != "parameters"]
    for cell in nb.cells:
        t = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in t:
            for x in tags:
                if x not in t:
                    t.append(x)
    nbformat.write(nb, path)


#: figures must be embedded in the executed notebook whatever MPLBACKEND the caller has set
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


@contextmanager
def _environment(values: dict):
    """Set environment variables (inherited by the notebook kernel) and restore them afterwards."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_chapter(chapter: str, overrides: dict | None = None, profile: str = "book",
                outdir: str | os.PathLike = "runs", timeout: int | None = 1800,
                progress_bar: bool = False, log_output: bool = False) -> dict:
    """Execute a chapter notebook into ``outdir`` and return its run record.

    Everything is written into a temporary folder inside ``outdir`` and moved into place only
    after the notebook succeeded: ``outdir/<notebook>.ipynb``, ``outdir/results/<key>/*.csv`` and
    ``outdir/<stem>.run.json``. On failure nothing is left behind and :class:`RunFailed` is raised.

    Parameters
    ----------
    chapter : str
        Key, number or notebook name.
    overrides : dict
        Parameter values replacing the profile's.
    profile : {"quick", "book", "paper"}
    outdir : path
    timeout : int or None
        Per-cell timeout in seconds.
    """
    import papermill as pm

    spec, values = resolve_parameters(chapter, overrides, profile)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=outdir))
    try:
        out_nb = tmp / spec.notebook
        kernel_env = {"MPLBACKEND": INLINE_BACKEND}
        if not log_output:
            kernel_env["ATTNRANK_PROGRESS"] = "0"
        started = time.time()
        try:
            with _environment(kernel_env):
                pm.execute_notebook(
                    str(NOTEBOOK_DIR / spec.notebook), str(out_nb), parameters=values, cwd=str(tmp),
                    kernel_name="python3", progress_bar=progress_bar, log_output=log_output,
                    execution_timeout=timeout, report_mode=False,
                )
        except pm.PapermillExecutionError as exc:
            raise RunFailed(f"{spec.notebook} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}") from None
        seconds = time.time() - started
        _tag_injected_cell(out_nb)
        record = {
            "chapter": spec.key,
            "title": spec.title,
            "notebook": spec.notebook,
            "profile": profile,
            "parameters": values,
            "overrides": overrides or {},
            "seconds": round(seconds, 2),
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "versions": package_versions(),
            "results": sorted(p.relative_to(tmp).as_posix() for p in (tmp / "results").rglob("*.csv"))
            if (tmp / "results").exists() else [],
        }
        (tmp / f"{spec.stem}.run.json").write_text(json.dumps(record, indent=2))
        # move into place: results folder of this chapter replaced whole, files by os.replace
        src_res = tmp / "results"
        if src_res.exists():
            for sub in src_res.iterdir():
                dst = outdir / "results" / sub.name
                if dst.exists():
                    shutil.rmtree(dst)
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.replace(sub, dst)
        os.replace(tmp / f"{spec.stem}.run.json", outdir / f"{spec.stem}.run.json")
        os.replace(out_nb, outdir / spec.notebook)
        return record
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
