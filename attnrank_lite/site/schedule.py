"""Execute a build's chapters: copy cached runs, run the rest, side by side within memory.

:func:`execute_chapters` gives every chapter a run folder ``outdir/<key>/`` as
:func:`~attnrank_lite.site.runner.run_chapter` writes it: copied from the cache when its key
(:func:`attnrank_lite.site.cache.chapter_key`) has an entry, else executed and stored. With
``jobs > 1`` each chapter runs in its own ``python -m attnrank_lite run`` process on a thread
pool of ``jobs``, longest estimate first, with ``cores // jobs`` BLAS threads; a chapter starts
only while its memory (:func:`plan_memory`) and that of the running ones fit the memory available
at the start (:func:`fits`), or alone.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ..engine.parallel import THREAD_VARS, format_bytes
from .cache import ChapterCache, chapter_key, environment, package_digest
from .chapters import NOTEBOOK_DIR
from .memory import LIMIT_ENV, available_memory, largest_need
from .runner import CellTimeout, KernelDied, RunFailed, check_run_output, run_chapter, run_dir
from .runtime import estimate_runtime, format_minutes

__all__ = ["execute_chapters", "KERNEL_OVERHEAD", "thread_env", "plan_memory", "fits"]

#: the command line each concurrent chapter runs in
CHILD = (sys.executable, "-m", "attnrank_lite")
#: memory of a notebook kernel with numpy, pandas and matplotlib loaded, beside its estimate
KERNEL_OVERHEAD = 400 * 2 ** 20
_EXIT_ERRORS = {5: CellTimeout, 6: KernelDied}


def thread_env(jobs: int, cores: int | None = None) -> dict:
    """Thread limits for one of ``jobs`` concurrent chapters: ``max(1, cores // jobs)`` each."""
    return dict.fromkeys(THREAD_VARS, str(max(1, (cores or os.cpu_count() or 1) // max(1, jobs))))


def plan_memory(spec, values) -> float:
    """Bytes a chapter is counted for beside others: its largest estimate plus :data:`KERNEL_OVERHEAD`."""
    need = largest_need(spec, values)
    return (need.bytes if need is not None else 0.0) + KERNEL_OVERHEAD


def fits(need: float, running: list[float], budget: float) -> bool:
    """Whether a chapter needing ``need`` bytes may start beside chapters holding ``running``: all
    within ``budget``, or nothing else runs (alone it was checked against the machine before the build)."""
    return not running or sum(running) + need <= budget


def execute_chapters(items, profile: str, outdir: Path, jobs: int = 1, cache: ChapterCache | None = None,
                     timeout: int | None = 1800, log=print) -> list[dict]:
    """Give every chapter of ``items`` (checked ``(spec, values)`` pairs) a finished run folder
    ``outdir/<key>/`` and return the run records in order: a copied one with ``"cache": "reused"``,
    a stored one with ``"cache": "stored"`` (a cache that cannot be written is only logged).
    ``timeout`` is per cell; the first failing chapter's error is raised and the others are stopped."""
    for spec, _ in items:
        outdir = check_run_output(outdir, spec.key)
    keys, records, todo = {}, {}, []
    if cache is not None:  # the package and the environment hashed once for all chapters
        package, env = package_digest(), environment()
        keys = {spec.key: chapter_key(NOTEBOOK_DIR / spec.notebook, spec.key, profile, values, package, env,
                                      spec.inputs(values) if spec.inputs else ()) for spec, values in items}

    def record(spec) -> dict:
        return json.loads((run_dir(outdir, spec.key) / f"{spec.stem}.run.json").read_text())

    def finished(spec, rec):
        if cache is not None:
            try:
                cache.store(keys[spec.key], run_dir(outdir, spec.key))
                rec["cache"] = "stored"
            except OSError as exc:
                log(f"[attnrank] note: {spec.key} was not stored in the cache {cache.root}: {exc}")
        records[spec.key] = rec
        log(f"[attnrank] {spec.key}: done in {rec['seconds']:.1f} s")

    for spec, values in items:
        if cache is not None and cache.restore(keys[spec.key], run_dir(outdir, spec.key)):
            records[spec.key] = rec = {**record(spec), "cache": "reused"}
            log(f"[attnrank] {spec.key}: reused from the cache (ran in {rec['seconds']:.1f} s on "
                f"{rec.get('finished', '?')}; key {keys[spec.key][:12]})")
        else:
            todo.append((spec, values))
    if jobs > 1 and len(todo) > 1:
        _side_by_side(sorted(todo, key=lambda t: -estimate_runtime(*t).seconds), profile, outdir, jobs, timeout,
                      lambda spec: finished(spec, record(spec)), log)
        return [records[spec.key] for spec, _ in items]
    for spec, values in todo:
        log(f"[attnrank] executing {spec.notebook} (profile {profile}; estimate "
            f"{format_minutes(estimate_runtime(spec, values))}) ...")
        finished(spec, run_chapter(spec.key, profile=profile, outdir=outdir, timeout=timeout,
                                   progress_bar=sys.stderr.isatty()))
    return [records[spec.key] for spec, _ in items]


def _child_error(spec, code: int, stderr: str) -> RunFailed:
    """The child's own one-line error (its last ``error:`` line) as the exception of its exit status."""
    lines = [ln[len("error: "):] for ln in stderr.splitlines() if ln.startswith("error: ")]
    msg = (lines[-1] if lines else f"{spec.key}: exited with status {code}").split("; nothing was written")[0]
    err = _EXIT_ERRORS.get(code, RunFailed)(msg)
    err.kernel_log = "\n".join(stderr.splitlines()[-60:])
    return err


def _side_by_side(todo, profile: str, outdir: Path, jobs: int, timeout, finished, log) -> None:
    """Run each chapter of ``todo`` in a child process, at most ``jobs`` at once and within memory
    (:func:`fits`); each writes into its own output folder ``outdir/.<key>`` (a writer holds its
    folder's lock), then its run is moved to ``outdir/<key>``."""
    budget = available_memory()
    env = {**os.environ, **thread_env(jobs), "ATTNRANK_PROGRESS": "0"}
    env.pop("ATTNRANK_PROGRESS_TTY", None)
    gate, held, procs, stopped = threading.Condition(), [], [], threading.Event()

    def run(spec, values):
        need, own = plan_memory(spec, values), outdir / f".{spec.key}"
        cmd = [*CHILD, "run", spec.key, "--profile", profile, "-o", str(own), "--max-minutes", "0",
               *(["--timeout", str(int(timeout))] if timeout is not None else [])]
        with tempfile.TemporaryFile("w+") as err:
            with gate:
                gate.wait_for(lambda: stopped.is_set() or fits(need, held, budget))
                if stopped.is_set():
                    return None
                limit = {} if os.environ.get(LIMIT_ENV) else {LIMIT_ENV: str(int(budget - sum(held)))}  # its share
                held.append(need)
                procs.append(proc := subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                                      env={**env, **limit}, start_new_session=True))
            log(f"[attnrank] {spec.key}: started ({len(held)} of {jobs} running; estimate "
                f"{format_minutes(estimate_runtime(spec, values))}, memory ~{format_bytes(need)})")
            try:
                proc.wait()
            finally:
                with gate:
                    held.remove(need)
                    gate.notify_all()
            if proc.returncode != 0:
                err.seek(0)
                raise _child_error(spec, proc.returncode, err.read())
        os.replace(own / spec.key, run_dir(outdir, spec.key))
        return spec

    with ThreadPoolExecutor(jobs) as pool:
        try:
            for done in as_completed([pool.submit(run, *item) for item in todo]):
                finished(done.result())
        finally:  # a failure or an interrupt: stop the rest (SIGTERM: each removes its partial folder)
            with gate:
                stopped.set()
                gate.notify_all()
            for proc in procs:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
