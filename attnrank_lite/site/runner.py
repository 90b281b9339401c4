"""Execute one chapter notebook with papermill: validated parameters, atomic outputs, a run record.

Layout of an output folder ``OUT`` (``python -m attnrank_lite run chNN -o OUT``)::

    OUT/.attnrank-output                 marker: this folder is ours (see outputs.py)
    OUT/chNN/NN_slug.ipynb               the executed notebook
    OUT/chNN/NN_slug.run.json            its run record (parameters, versions, time, tables)
    OUT/chNN/results/chNN/*.csv          its results tables (the notebook links them relatively)

A run writes ``OUT/.partial-chNN-XXXX/`` (holding the lock ``OUT/.attnrank-output.lock``) and,
once the notebook has succeeded and the run record is written, exchanges it with ``OUT/chNN`` in
one atomic step (:func:`outputs.replace_folder`):
the three parts of a run are always replaced together, a reader finds the previous run or the
new one, never a mix and never nothing, and an interrupt at any moment leaves the previous run
as it was and no partial folder behind.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from . import outputs
from .chapters import NOTEBOOK_DIR, get_chapter
from .errors import CellTimeout, KernelDied, RunFailed
from .memory import check_memory
from .pagenote import cpu_model
from .paths import lock_record
from .spec import ParameterError

__all__ = ["resolve_parameters", "run_chapter", "RunFailed", "CellTimeout", "KernelDied", "package_versions",
           "ParameterError", "check_run_output", "run_dir", "is_plumbing", "KERNEL_ARGUMENTS"]

KEY_PACKAGES = ("numpy", "scipy", "matplotlib", "pandas", "torch", "transformers", "papermill",
                "jupyter-book", "sphinx", "sphinx-proof", "myst-nb")




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


def resolve_parameters(chapter: str, overrides: dict | None = None, profile: str = "book",
                       available_memory: float | None = None):
    """Validate a chapter's parameters before any work, memory estimate included.

    Returns
    -------
    spec : ChapterSpec
    values : dict
        The full, validated parameter set: the profile's values updated by ``overrides``.

    Raises
    ------
    ParameterError
        A wrong name or value; :class:`~attnrank_lite.site.memory.TooLarge` when the estimated
        memory exceeds what is available.
    """
    spec = get_chapter(chapter)
    values = spec.profile(profile)
    values.update(spec.validate(overrides or {}, partial=True))
    values = spec.validate(values)
    check_memory(spec, values, available_memory)
    return spec, values


def run_dir(outdir: str | os.PathLike, key: str) -> Path:
    """The folder of a chapter's run inside an output folder."""
    return Path(outdir) / key


def check_run_output(outdir: str | os.PathLike, key: str) -> Path:
    """Check (and create) the output folder of a run before any work; return it, absolute.

    Raises :class:`~attnrank_lite.site.outputs.OutputError` with a one-line reason (see
    :func:`~attnrank_lite.site.outputs.prepare_output` and :func:`~attnrank_lite.site.outputs.check_slot`).
    """
    out = outputs.prepare_output(outdir)
    outputs.check_slot(out, key)
    return out


def _mark_parameters_once(path: Path) -> None:
    """Show the parameters once on the page, as those of this run, the defaults folded away.

    Papermill keeps the notebook's ``parameters`` cell (the book defaults) and adds an
    ``injected-parameters`` cell after it with the values of this run (and no display tags: it
    copies none). The defaults cell gets ``hide-input`` (folded behind a toggle "Show the book's
    default parameters" on the page) and a first line saying what it is; the injected cell keeps
    its input visible under the heading comment ``# Parameters of this run``.
    """
    nb = nbformat.read(path, as_version=4)
    if not any("injected-parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells):
        return
    for cell in nb.cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "parameters" in tags:
            if "hide-input" not in tags:
                tags.append("hide-input")
            cell.metadata["mystnb"] = {**cell.metadata.get("mystnb", {}), **DEFAULTS_PROMPTS}
            cell.source = DEFAULTS_HEADER + "\n" + cell.source
        elif "injected-parameters" in tags:
            for t in ("remove-cell", "remove-input", "hide-input", "hide-cell"):
                if t in tags:
                    tags.remove(t)
            body = "\n".join(line for line in cell.source.splitlines() if line.strip() != "# Parameters")
            cell.source = RUN_HEADER + "\n" + body.strip()
    nbformat.write(nb, path)


#: calls that make a cell plumbing: the parameter check and the glue of numbers into the text
PLUMBING_CALLS = frozenset({"validate_notebook_parameters", "glue"})


def _call_name(node) -> str | None:
    import ast

    if isinstance(node, ast.Call):
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return None


def is_plumbing(source: str) -> bool:
    """Whether a code cell is plumbing: imports, ``P = validate_notebook_parameters(...)`` and
    ``glue(...)`` calls (also in a ``for`` loop) and nothing else.

    Such a cell computes nothing a reader needs to see; its input is hidden on the page and in
    the PDF (``remove-input``) by :func:`_hide_plumbing`.
    """
    import ast

    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False

    def ok(stmt) -> bool:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(stmt, (ast.Expr, ast.Assign)):
            return _call_name(stmt.value) in PLUMBING_CALLS
        if isinstance(stmt, ast.For):
            return not stmt.orelse and all(ok(s) for s in stmt.body)
        return False

    return bool(body) and all(ok(s) for s in body) and any(not isinstance(s, (ast.Import, ast.ImportFrom))
                                                           for s in body)


def _hide_plumbing(path: Path) -> None:
    """Tag plumbing cells (:func:`is_plumbing`) ``remove-input`` in an executed notebook."""
    nb = nbformat.read(path, as_version=4)
    changed = False
    for cell in nb.cells:
        if cell.cell_type != "code" or not is_plumbing(cell.source):
            continue
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if not {"remove-input", "remove-cell"} & set(tags):
            tags.append("remove-input")
            changed = True
    if changed:
        nbformat.write(nb, path)


def _relative_papermill_paths(path: Path, notebook: str) -> None:
    """Name the notebook relative to the repository in papermill's metadata, not by this machine's paths.

    Papermill records ``metadata.papermill.input_path`` and ``output_path`` as given, here the
    absolute paths of the source notebook and of the partial output folder of this machine; a
    downloaded notebook would carry them. They become ``notebooks/NN_slug.ipynb`` (the source,
    relative to the repository root) and ``NN_slug.ipynb`` (the executed notebook beside its run
    record). The rest of papermill's metadata (parameters, versions, timings) is kept.
    """
    nb = nbformat.read(path, as_version=4)
    meta = nb.metadata.get("papermill")
    if meta is None:
        return
    meta["input_path"] = f"notebooks/{notebook}"
    meta["output_path"] = notebook
    nbformat.write(nb, path)


#: command-line options of the chapters' IPython kernel: figures are saved at twice their
#: resolution ("retina" PNG: twice the pixels, shown at the 1x size the output's metadata gives),
#: sharp on high-density screens and in the printed PDF
KERNEL_ARGUMENTS = ("--InlineBackend.figure_formats=retina",)

#: first lines of the two parameter cells in an executed notebook (see _mark_parameters_once)
DEFAULTS_HEADER = "# Book defaults (this run's values are in the next cell)"
RUN_HEADER = "# Parameters of this run"
#: the toggle of the folded defaults cell on the page (myst-nb cell-level configuration)
DEFAULTS_PROMPTS = {"code_prompt_show": "Show the book's default parameters",
                    "code_prompt_hide": "Hide the book's default parameters"}


#: the kernel's own standard error during a run (removed on success; shown by --debug on failure)
KERNEL_LOG = ".kernel-stderr.log"

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


def _child_kernels() -> list:
    """This process's notebook kernels: its child processes (at any depth) running ipykernel."""
    import psutil

    kernels = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any("ipykernel" in part for part in child.cmdline()):
                kernels.append(child)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return kernels


def _stop_kernels() -> None:
    import psutil

    for kernel in _child_kernels():
        try:
            kernel.kill()
        except psutil.Error:
            pass


@contextmanager
def _logs_to_file(path: Path):
    """Send the log records of papermill, nbclient and jupyter_client (e.g. "Timeout waiting for
    execute reply", "Error occurred while starting new kernel client") to the kernel log file
    instead of the terminal: a failure is then reported in one line, and ``--debug`` shows them."""
    import logging

    handler = logging.FileHandler(path, mode="a", delay=True)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s: %(message)s"))
    saved = []
    for name in ("papermill", "nbclient", "traitlets", "jupyter_client"):
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate))
        logger.addHandler(handler)
        logger.propagate = False
    try:
        yield
    finally:
        for logger, propagate in saved:
            logger.removeHandler(handler)
            logger.propagate = propagate
        handler.close()


def _quiet_abandoned_tasks() -> None:
    """After a cell timeout nbclient leaves a polling task pending in its event loop, and asyncio
    reports it ("Task was destroyed but it is pending!") when the process exits; that report is
    noise after the one-line error, so asyncio's log is dropped from here on."""
    import logging

    quiet = logging.getLogger("asyncio")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False


def _kernel_never_started(path: Path, exc: BaseException) -> bool:
    """The kernel could not start: its command is missing (OSError), it died or did not answer
    before the first cell (RuntimeError), or its kernel spec does not exist (NoSuchKernel)."""
    from jupyter_client.kernelspec import NoSuchKernel

    if not isinstance(exc, (OSError, RuntimeError, NoSuchKernel)):
        return False
    try:  # no cell has run (papermill marks every cell "completed" when the start fails)
        nb = nbformat.read(path, as_version=4)
    except Exception:
        return True
    return all(c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")


def _execute(**kwargs) -> None:
    """``papermill.execute_notebook`` in a worker thread, so that an interrupt (SIGINT, or SIGTERM
    turned into an exception by the command line) reaches this thread at once: the kernel is then
    stopped, the worker joined, and the interrupt re-raised for the caller's cleanup.
    (Run in the main thread, nbclient would take over SIGINT/SIGTERM itself.)"""
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
        # stop the kernel, again and again until the worker gives up: an interrupt during start-up
        # comes before the kernel exists, and the worker would otherwise start it and run on
        deadline = time.monotonic() + 60
        while worker.is_alive() and time.monotonic() < deadline:
            _stop_kernels()
            worker.join(0.1)
        raise
    if "error" in box:
        raise box["error"]


def _failed_cell(path: Path) -> str:
    """``cell N`` (N = In [N], counting code cells) that was running when execution stopped, as far
    as papermill saved the notebook."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:
        return "an unknown cell"
    code = [c for c in nb.cells if c.cell_type == "code"]
    started = [i for i, c in enumerate(code, 1)
               if c.get("metadata", {}).get("papermill", {}).get("status", "pending") != "pending"]
    return f"cell {started[-1]}" if started else "an unknown cell"


@contextmanager
def _stderr_to_file(path: Path):
    """Send file descriptor 2 to ``path`` while the notebook runs: the kernel inherits it, so its
    own log lines (and tracebacks of its shutdown after a timeout) go to the file instead of
    between the user's messages. Python-level writes to ``sys.stderr`` (papermill's progress bar)
    still reach the original stream."""
    try:
        real = sys.stderr is not None and sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        real = False
    if real:
        sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    old = sys.stderr
    if real:
        sys.stderr = open(os.dup(saved), "w", buffering=1, encoding=old.encoding, errors="backslashreplace")
    try:
        yield
    finally:
        if real:
            sys.stderr.close()
            sys.stderr = old
        os.dup2(saved, 2)
        os.close(saved)


def _log_tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (the notebook kernel
    is a child, reaped when it shuts down)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_chapter(chapter: str, overrides: dict | None = None, profile: str = "book",
                outdir: str | os.PathLike = "runs", timeout: int | None = 1800,
                progress_bar: bool = False, log_output: bool = False) -> dict:
    """Execute a chapter notebook into ``outdir/<key>/`` and return its run record.

    Everything is checked first (parameters, memory estimate, output folder), then written into
    a partial folder inside ``outdir`` and swapped into place in one step after the notebook
    succeeded (see the module docstring). On failure or interrupt the partial folder is removed
    and the previous run, if any, is left as it was.

    Parameters
    ----------
    chapter : str
        Key, number or notebook name.
    overrides : dict
        Parameter values replacing the profile's.
    profile : {"quick", "book", "paper"}
    outdir : path
    timeout : int or None
        Per-cell timeout in seconds (a positive number; None: no limit).

    Raises
    ------
    ParameterError, TooLarge, OutputError
        Before any work.
    RunFailed, CellTimeout, KernelDied
        The notebook failed; the message names the chapter and the cell.
    """
    import papermill as pm
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
        raise ParameterError(f"timeout must be a positive number of seconds (or None); got {timeout!r}")
    spec, values = resolve_parameters(chapter, overrides, profile)
    out = check_run_output(outdir, spec.key)
    tmp = outputs.partial_dir(out, spec.key)
    where = f"{spec.key} ({spec.notebook})"
    try:
        out_nb = tmp / spec.notebook
        kernel_env = {"MPLBACKEND": INLINE_BACKEND}
        if not log_output:
            kernel_env["ATTNRANK_PROGRESS"] = "0"
        started, cpu0 = time.time(), _cpu_seconds()
        log = tmp / KERNEL_LOG
        try:
            with _environment(kernel_env), _stderr_to_file(log), _logs_to_file(log):
                _execute(input_path=str(NOTEBOOK_DIR / spec.notebook), output_path=str(out_nb),
                         parameters=values, cwd=str(tmp), kernel_name="python3",
                         progress_bar={"desc": f"{spec.key} cells"} if progress_bar else False,
                         log_output=log_output, execution_timeout=timeout, report_mode=False,
                         extra_arguments=list(KERNEL_ARGUMENTS))
        except pm.PapermillExecutionError as exc:
            err = RunFailed(f"{where} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}")
            err.kernel_log = _log_tail(log)
            raise err from exc
        except CellTimeoutError as exc:
            _quiet_abandoned_tasks()
            err = CellTimeout(f"{where}: {_failed_cell(out_nb)} ran longer than the timeout of {timeout} s; "
                              "raise --timeout or choose smaller parameters")
            err.kernel_log = _log_tail(log)
            raise err from exc
        except DeadKernelError as exc:
            err = KernelDied(f"{where}: the notebook's kernel died in {_failed_cell(out_nb)} (out of memory, "
                             "or killed from outside); try smaller parameters")
            err.kernel_log = _log_tail(log)
            raise err from exc
        except Exception as exc:
            if not _kernel_never_started(out_nb, exc):
                raise
            err = KernelDied(f"{where}: the notebook kernel 'python3' could not start ({type(exc).__name__}: "
                             f"{exc}); check that ipykernel is installed (python -m ipykernel install --user)")
            err.kernel_log = _log_tail(log)
            raise err from exc
        seconds, cpu = time.time() - started, _cpu_seconds() - cpu0
        log.unlink(missing_ok=True)
        _mark_parameters_once(out_nb)
        _hide_plumbing(out_nb)
        _relative_papermill_paths(out_nb, spec.notebook)
        results = tmp / "results"
        record = {
            "chapter": spec.key,
            "title": spec.title,
            "notebook": spec.notebook,
            "profile": profile,
            "parameters": values,
            "overrides": overrides or {},
            "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2),
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "cpu": cpu_model(),
            "versions": package_versions(),
            "lock": lock_record(),
            "results": sorted(p.relative_to(tmp).as_posix() for p in results.rglob("*.csv"))
            if results.exists() else [],
            "certificates": sorted(p.relative_to(tmp).as_posix() for p in results.rglob("*_certificates.zip"))
            if results.exists() else [],
            "certificates_omitted": sorted(p.read_text().strip() for p in results.rglob("*_certificates.omitted"))
            if results.exists() else [],
        }
        (tmp / f"{spec.stem}.run.json").write_text(json.dumps(record, indent=2))
        outputs.replace_folder(tmp, run_dir(out, spec.key))  # notebook, record, tables: one rename
        return record
    finally:
        outputs.release_partial(tmp)
