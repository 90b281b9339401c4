"""Execute one chapter notebook with papermill into ``OUT/chNN/`` (notebook, run record, tables):
written in a partial folder and swapped into place in one atomic rename once the notebook succeeded."""
from __future__ import annotations

import ast
import json
import logging
import os
import platform
import sys
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from unittest import mock

import nbformat

from . import outputs
from .chapters import NOTEBOOK_DIR, get_chapter
from .errors import CellTimeout, KernelDied, RunFailed
from .memory import check_memory
from .paths import lock_record
from .spec import ParameterError

__all__ = ["resolve_parameters", "run_chapter", "RunFailed", "CellTimeout", "KernelDied", "package_versions",
           "machine_record", "ParameterError", "check_run_output", "is_plumbing", "KERNEL_ARGUMENTS"]

KEY_PACKAGES = ("numpy", "scipy", "matplotlib", "pandas", "torch", "transformers", "papermill",
                "jupyter-book", "sphinx", "sphinx-proof", "myst-nb")
#: the chapters' kernel saves figures at twice their resolution ("retina"), sharp on screens and in the PDF
KERNEL_ARGUMENTS = ("--InlineBackend.figure_formats=retina",)
#: first lines of the two parameter cells of an executed notebook, and the toggle of the folded one
DEFAULTS_HEADER, RUN_HEADER = "# Book defaults (this run's values are in the next cell)", "# Parameters of this run"
DEFAULTS_PROMPTS = {"code_prompt_show": "Show the book's default parameters",
                    "code_prompt_hide": "Hide the book's default parameters"}
#: the kernel's standard error and the libraries' log during a run (removed on success; --debug shows it)
KERNEL_LOG = ".kernel-stderr.log"
#: figures are embedded in the executed notebook whatever MPLBACKEND the caller has set
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
#: calls that make a cell plumbing: the parameter check and the glue of numbers into the text
PLUMBING_CALLS = frozenset({"validate_notebook_parameters", "glue"})


def package_versions() -> dict:
    """Versions of Python and of the packages that shape the book's numbers and pages."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(name):
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    return {"python": platform.python_version(), **{name: installed(name) for name in KEY_PACKAGES}}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def machine_record() -> dict:
    """The run record's ``machine`` (architecture, CPUs), ``cpu`` (model name), ``versions`` and ``lock``."""
    return {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "cpu": _cpu_model(),
            "versions": package_versions(), "lock": lock_record()}


def resolve_parameters(chapter: str, overrides: dict | None = None, profile: str = "book",
                       available_memory: float | None = None):
    """``(spec, values)``: the profile's values updated by ``overrides``, validated (ParameterError) and
    within the available memory (TooLarge), before any work."""
    spec = get_chapter(chapter)
    values = spec.validate({**spec.profile(profile), **spec.validate(overrides or {}, partial=True)})
    check_memory(spec, values, available_memory)
    return spec, values


def check_run_output(outdir: str | os.PathLike, key: str) -> Path:
    """The output folder, checked and created before any work (:class:`.OutputError`), absolute."""
    out = outputs.prepare_output(outdir)
    outputs.check_slot(out, key)
    return out


def is_plumbing(source: str) -> bool:
    """Whether a code cell is plumbing (its input is removed from the page): imports,
    ``validate_notebook_parameters(...)`` and ``glue(...)`` calls (also in a ``for`` loop), not imports alone."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False

    def ok(stmt) -> bool:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(stmt, (ast.Expr, ast.Assign)) and isinstance(stmt.value, ast.Call):
            return getattr(stmt.value.func, "id", getattr(stmt.value.func, "attr", None)) in PLUMBING_CALLS
        return isinstance(stmt, ast.For) and not stmt.orelse and all(ok(s) for s in stmt.body)

    return bool(body) and all(ok(s) for s in body) and not all(
        isinstance(s, (ast.Import, ast.ImportFrom)) for s in body)


def _tidy(path: Path, notebook: str) -> None:
    """An executed notebook ready for its page: the defaults cell folded, papermill's injected cell shown
    under :data:`RUN_HEADER`, plumbing cells' input removed, papermill's paths made relative."""
    nb = nbformat.read(path, as_version=4)
    injected = any("injected-parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells)
    for cell in nb.cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if injected and "parameters" in tags:
            if "hide-input" not in tags:
                tags.append("hide-input")
            cell.metadata["mystnb"] = {**cell.metadata.get("mystnb", {}), **DEFAULTS_PROMPTS}
            cell.source = DEFAULTS_HEADER + "\n" + cell.source
        elif "injected-parameters" in tags:
            tags[:] = [t for t in tags if t not in ("remove-cell", "remove-input", "hide-input", "hide-cell")]
            body = "\n".join(line for line in cell.source.splitlines() if line.strip() != "# Parameters")
            cell.source = RUN_HEADER + "\n" + body.strip()
        elif cell.cell_type == "code" and is_plumbing(cell.source) and not {"remove-input", "remove-cell"} & {*tags}:
            tags.append("remove-input")
    if "papermill" in nb.metadata:
        nb.metadata.papermill.update(input_path=f"notebooks/{notebook}", output_path=notebook)
    nbformat.write(nb, path)


def _stop_kernels() -> None:
    """Kill this process's notebook kernels (child processes, at any depth, running ipykernel)."""
    import psutil

    for child in psutil.Process().children(recursive=True):
        try:
            if any("ipykernel" in part for part in child.cmdline()):
                child.kill()
        except psutil.Error:
            continue


@contextmanager
def _output_to_file(path: Path):
    """File descriptor 2 (the kernel's) and the Jupyter libraries' log records go to ``path`` (a failure
    stays one line; ``--debug`` shows them); ``sys.stderr`` (papermill's progress bar) keeps the terminal."""
    try:
        real = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):  # no sys.stderr, or one without a file descriptor
        real = False
    if real:
        sys.stderr.flush()
    saved, old = os.dup(2), sys.stderr
    with open(path, "w") as f:
        os.dup2(f.fileno(), 2)
    if real:
        sys.stderr = open(os.dup(saved), "w", buffering=1, encoding=old.encoding, errors="backslashreplace")
    handler = logging.FileHandler(path, delay=True)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s: %(message)s"))
    names = ("papermill", "nbclient", "traitlets", "jupyter_client")
    loggers = {lg: lg.propagate for lg in map(logging.getLogger, names)}
    for lg in loggers:
        lg.addHandler(handler)
        lg.propagate = False
    try:
        yield
    finally:
        for lg, propagate in loggers.items():
            lg.removeHandler(handler)
            lg.propagate = propagate
        handler.close()
        if real:
            sys.stderr.close()
            sys.stderr = old
        os.dup2(saved, 2)
        os.close(saved)


def _execute(**kwargs) -> None:
    """``papermill.execute_notebook`` in a worker thread (in the main thread nbclient would take over
    SIGINT/SIGTERM): on an interrupt the kernel is stopped, the worker joined and the interrupt re-raised."""
    import papermill as pm

    box: dict = {}

    def work():
        try:
            pm.execute_notebook(**kwargs)
        except BaseException as exc:  # handed to the calling thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="attnrank-papermill", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except BaseException:
        # stop the kernel again and again until the worker gives up: an interrupt during start-up
        # comes before the kernel exists, and the worker would otherwise start it and run on
        deadline = time.monotonic() + 60
        while worker.is_alive() and time.monotonic() < deadline:
            _stop_kernels()
            worker.join(0.1)
        raise
    if "error" in box:
        raise box["error"]


def _read_saved(path: Path):
    """The notebook as far as papermill saved it, or None (never written, or cut short)."""
    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return None


def _failed_cell(path: Path) -> str:
    """``cell N`` (counting code cells, as In [N]) running when execution stopped."""
    nb = _read_saved(path)
    code = [c for c in nb.cells if c.cell_type == "code"] if nb is not None else []
    started = [i for i, c in enumerate(code, 1)
               if c.get("metadata", {}).get("papermill", {}).get("status", "pending") != "pending"]
    return f"cell {started[-1]}" if started else "an unknown cell"


def _with_log(err: RunFailed, log: Path) -> RunFailed:
    """``err`` carrying the last 60 lines of the kernel log as ``kernel_log`` (for ``--debug``)."""
    try:
        err.kernel_log = "\n".join(log.read_text(errors="replace").splitlines()[-60:])
    except OSError:
        err.kernel_log = ""
    return err


def run_chapter(chapter: str, overrides: dict | None = None, profile: str = "book",
                outdir: str | os.PathLike = "runs", timeout: int | None = 1800,
                progress_bar: bool = False, log_output: bool = False) -> dict:
    """Execute a chapter notebook (key, number or name) into ``outdir/<key>/``; its run record.

    ``overrides`` replace the ``profile``'s values; ``timeout`` per cell, in seconds (None: no limit).
    Raises ParameterError, TooLarge or OutputError before any work; RunFailed, CellTimeout or
    KernelDied, naming the chapter and the cell, when the notebook fails (the previous run kept).
    """
    import papermill as pm
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
        raise ParameterError(f"timeout must be a positive number of seconds (or None); got {timeout!r}")
    spec, values = resolve_parameters(chapter, overrides, profile)
    out = check_run_output(outdir, spec.key)
    tmp = outputs.partial_dir(out, spec.key)
    where = f"{spec.key} ({spec.notebook})"
    try:
        out_nb, log = tmp / spec.notebook, tmp / KERNEL_LOG
        kernel_env = {"MPLBACKEND": INLINE_BACKEND, **({} if log_output else {"ATTNRANK_PROGRESS": "0"})}
        started, cpu0 = time.time(), sum(os.times()[:4])  # CPU of this process and its reaped children (the kernel)
        try:
            with mock.patch.dict(os.environ, kernel_env), _output_to_file(log):
                _execute(input_path=str(NOTEBOOK_DIR / spec.notebook), output_path=str(out_nb),
                         parameters=values, cwd=str(tmp), kernel_name="python3",
                         progress_bar={"desc": f"{spec.key} cells"} if progress_bar else False,
                         log_output=log_output, execution_timeout=timeout, report_mode=False,
                         extra_arguments=list(KERNEL_ARGUMENTS))
        except pm.PapermillExecutionError as exc:
            raise _with_log(RunFailed(f"{where} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}"),
                            log) from exc
        except CellTimeoutError as exc:
            # nbclient leaves a polling task pending, which asyncio reports at exit: noise after the one line
            logging.getLogger("asyncio").disabled = True
            raise _with_log(CellTimeout(f"{where}: {_failed_cell(out_nb)} ran longer than the timeout of "
                                        f"{timeout} s; raise --timeout or choose smaller parameters"), log) from exc
        except DeadKernelError as exc:
            raise _with_log(KernelDied(f"{where}: the notebook's kernel died in {_failed_cell(out_nb)} (out of "
                                       "memory, or killed from outside); try smaller parameters"), log) from exc
        except (OSError, RuntimeError, NoSuchKernel) as exc:  # its command is missing, it died at once, no spec
            nb = _read_saved(out_nb)  # unless a cell ran (papermill marks every cell "completed" when it fails)
            if nb is not None and any(c.get("execution_count") is not None for c in nb.cells if c.cell_type == "code"):
                raise
            raise _with_log(KernelDied(f"{where}: the notebook kernel 'python3' could not start "
                                       f"({type(exc).__name__}: {exc}); check that ipykernel is installed "
                                       "(python -m ipykernel install --user)"), log) from exc
        seconds, cpu = time.time() - started, sum(os.times()[:4]) - cpu0
        log.unlink(missing_ok=True)
        _tidy(out_nb, spec.notebook)
        results = tmp / "results"
        record = {
            "chapter": spec.key, "title": spec.title, "notebook": spec.notebook, "profile": profile,
            "parameters": values, "overrides": overrides or {},
            "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            **machine_record(),
            "results": sorted(p.relative_to(tmp).as_posix() for p in results.rglob("*.csv")),
            "certificates": sorted(p.relative_to(tmp).as_posix() for p in results.rglob("*_certificates.zip")),
            "certificates_omitted": sorted(p.read_text().strip() for p in results.rglob("*_certificates.omitted")),
        }
        (tmp / f"{spec.stem}.run.json").write_text(json.dumps(record, indent=2))
        outputs.replace_folder(tmp, out / spec.key)  # notebook, record, tables: one rename
        return record
    finally:
        outputs.release_partial(tmp)
