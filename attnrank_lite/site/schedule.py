"""Execute the book's chapters for a build: reuse cached runs, run the rest side by side.

:func:`execute_chapters` gives every chapter a run folder ``outdir/<key>/`` exactly as
:func:`~attnrank_lite.site.runner.run_chapter` writes it, by one of two routes:

* **cache** -- the chapter's key (:func:`attnrank_lite.site.cache.chapter_key`: notebook,
  parameters, profile, package sources and data, the files its parameters name, installed
  versions) has an intact entry, which is copied;
* **run** -- the notebook is executed, and the finished run stored in the cache.

With ``jobs = 1`` the chapters run one after the other in this process. With ``jobs > 1`` each
runs in its own ``python -m attnrank_lite run`` process, at most ``jobs`` at once, longest
estimate first, and a chapter starts only while the memory estimates of the running chapters
(:func:`attnrank_lite.site.memory.largest_need`, plus :data:`KERNEL_OVERHEAD` each) and its own
fit in the memory available at the start; one that fits alone always may start when nothing else
runs. Each concurrent chapter's numerical kernels get ``cores // jobs`` threads (one at the
default ``jobs = cores``) through ``OMP_NUM_THREADS`` and its siblings, so that N chapters do
not start N x cores BLAS threads.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .cache import ChapterCache, chapter_key, package_digest, pinned_versions
from .chapters import NOTEBOOK_DIR
from .memory import LIMIT_ENV as MEMORY_ENV
from .memory import available_memory, format_bytes, largest_need
from .runner import CellTimeout, KernelDied, RunFailed, check_run_output, run_chapter, run_dir
from .runtime import estimate_runtime, format_minutes

__all__ = ["execute_chapters", "chapter_keys", "THREAD_VARS", "KERNEL_OVERHEAD", "thread_env", "plan_memory",
           "next_to_start"]

#: environment variables read by the BLAS/OpenMP libraries numpy, scipy and torch load
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: the command line each concurrent chapter runs in
CHILD = (sys.executable, "-m", "attnrank_lite")
#: memory of a notebook kernel with numpy, pandas and matplotlib loaded, beside its estimate
KERNEL_OVERHEAD = 400 * 2 ** 20


def thread_env(jobs: int, cores: int | None = None) -> dict:
    """Thread limits for one of ``jobs`` concurrent chapters: ``max(1, cores // jobs)`` each."""
    cores = cores or os.cpu_count() or 1
    n = str(max(1, cores // max(1, jobs)))
    return {v: n for v in THREAD_VARS}


def plan_memory(spec, values) -> float:
    """Bytes a chapter is counted for when chapters run side by side."""
    need = largest_need(spec, values)
    return (need.bytes if need is not None else 0.0) + KERNEL_OVERHEAD


def next_to_start(needs: list[float], running: list[float], jobs: int, budget: float | None) -> int | None:
    """Index of the first pending chapter (memory ``needs``, in order of preference) that may
    start now beside chapters holding ``running``, or None.

    At most ``jobs`` run at once; together they stay within ``budget`` bytes (None: unknown,
    no bound), except that a chapter may always start when nothing else runs (alone, it was
    checked against the machine's memory before the build began).
    """
    if len(running) >= jobs:
        return None
    for i, need in enumerate(needs):
        if not running or budget is None or sum(running) + need <= budget:
            return i
    return None


def _on_terminal() -> bool:
    """Show the notebook's cell bar (``chNN cells``) when standard error is a terminal."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _record(folder: Path, spec) -> dict:
    return json.loads((folder / f"{spec.stem}.run.json").read_text())


def chapter_keys(items, profile: str, package: str | None = None, versions: dict | None = None) -> dict:
    """The cache key of each chapter of ``items`` (:func:`attnrank_lite.site.cache.chapter_key`),
    the files its ``inputs`` name included; ``package`` and ``versions`` are computed once here
    when not given."""
    package = package_digest() if package is None else package
    versions = pinned_versions() if versions is None else versions
    return {spec.key: chapter_key(NOTEBOOK_DIR / spec.notebook, spec.key, profile, values, package=package,
                                  versions=versions, inputs=list(spec.inputs(values)) if spec.inputs else ())
            for spec, values in items}


def execute_chapters(items, profile: str, outdir: Path, jobs: int = 1, cache: ChapterCache | None = None,
                     timeout: int | None = 1800, log=print) -> list[dict]:
    """Give every chapter a finished run folder ``outdir/<key>/``; return the run records in order.

    Parameters
    ----------
    items : list of (ChapterSpec, dict)
        Chapters and their resolved parameters (already checked).
    profile : str
    outdir : path
        Output folder of the runs (created and marked here).
    jobs : int
        Chapters executed at once (>= 1).
    cache : ChapterCache, optional
        Reuse and store runs; None executes every chapter.
    timeout : int or None
        Per-cell timeout in seconds.

    Returns
    -------
    list of dict
        The run records; a reused one carries ``"cache": "reused"``, a new one ``"cache": "stored"``
        (or no such field without a cache).
    """
    outdir = Path(outdir)
    for spec, _ in items:
        outdir = check_run_output(outdir, spec.key)
    keys = chapter_keys(items, profile) if cache is not None else {}
    records: dict[str, dict] = {}
    todo = []
    for spec, values in items:
        key = keys.get(spec.key)
        if key is not None and cache.restore(key, run_dir(outdir, spec.key)):
            rec = _record(run_dir(outdir, spec.key), spec)
            rec["cache"] = "reused"
            records[spec.key] = rec
            log(f"[attnrank] {spec.key}: reused from the cache (ran in {rec['seconds']:.1f} s on "
                f"{rec.get('finished', '?')}; key {key[:12]})")
        else:
            todo.append((spec, values))

    def finished(spec, rec):
        if cache is not None:
            try:  # the cache only saves time: a failure to store is reported, not fatal
                cache.store(keys[spec.key], run_dir(outdir, spec.key), spec.key, profile)
                rec["cache"] = "stored"
            except OSError as exc:
                log(f"[attnrank] note: {spec.key} was not stored in the cache {cache.root}: {exc}")
        records[spec.key] = rec
        log(f"[attnrank] {spec.key}: done in {rec['seconds']:.1f} s")

    if jobs <= 1 or len(todo) <= 1:
        for spec, values in todo:
            est = estimate_runtime(spec, values)
            log(f"[attnrank] executing {spec.notebook} (profile {profile}; estimate {format_minutes(est)}) ...")
            finished(spec, run_chapter(spec.key, profile=profile, outdir=outdir, timeout=timeout,
                                       progress_bar=_on_terminal()))
    else:
        _run_side_by_side(todo, profile, outdir, jobs, timeout, finished, log)
    return [records[spec.key] for spec, _ in items]


_EXIT_ERRORS = {5: CellTimeout, 6: KernelDied}


def _child_error(spec, proc, err_path: Path) -> RunFailed:
    try:
        text = err_path.read_text(errors="replace")
    except OSError:
        text = ""
    lines = [ln for ln in text.splitlines() if ln.startswith("error: ")]
    msg = lines[-1][len("error: "):] if lines else f"{spec.key}: exited with status {proc.returncode}"
    msg = msg.split("; nothing was written")[0]  # the build's own message says what was kept
    err = _EXIT_ERRORS.get(proc.returncode, RunFailed)(msg)
    err.kernel_log = "\n".join(text.splitlines()[-60:])
    return err


def _run_side_by_side(todo, profile, outdir: Path, jobs: int, timeout, finished, log) -> None:
    budget = available_memory()
    env = {**os.environ, **thread_env(jobs), "ATTNRANK_PROGRESS": "0"}
    pending = sorted(todo, key=lambda t: -estimate_runtime(t[0], t[1]).seconds)
    running: dict = {}  # key -> (spec, proc, memory, stderr path, stderr file)
    logs = outdir / ".logs"
    logs.mkdir(exist_ok=True)
    try:
        while pending or running:
            while True:
                used = [r[2] for r in running.values()]
                i = next_to_start([plan_memory(*item) for item in pending], used, jobs, budget)
                if i is None:
                    break
                item = pending[i]
                spec, values = item
                need = plan_memory(spec, values)
                cmd = [*CHILD, "run", spec.key, "--profile", profile, "-o", str(outdir), "--max-minutes", "0"]
                if timeout is not None:
                    cmd += ["--timeout", str(int(timeout))]
                err_path = logs / f"{spec.key}.stderr"
                err_file = open(err_path, "w")
                child_env = dict(env)
                if budget is not None and not os.environ.get(MEMORY_ENV):
                    # the child's own memory check sees the share this plan gave it
                    child_env[MEMORY_ENV] = str(int(budget - sum(used)))
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_file, env=child_env,
                                        start_new_session=True)
                running[spec.key] = (spec, proc, need, err_path, err_file)
                pending.remove(item)
                log(f"[attnrank] {spec.key}: started ({len(running)} of {jobs} running; estimate "
                    f"{format_minutes(estimate_runtime(spec, values))}, memory ~{format_bytes(need)})")
            time.sleep(0.2)
            for key, (spec, proc, _, err_path, err_file) in list(running.items()):
                if proc.poll() is None:
                    continue
                err_file.close()
                del running[key]
                if proc.returncode != 0:
                    raise _child_error(spec, proc, err_path)
                finished(spec, _record(run_dir(outdir, spec.key), spec))
    finally:
        for spec, proc, _, _, err_file in running.values():  # interrupted or failed: stop the rest
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # the child removes its partial folder
        deadline = time.monotonic() + 60
        for spec, proc, _, _, err_file in running.values():
            try:
                proc.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            err_file.close()
