"""Execute a build's chapters: copy cached runs, run the rest in processes side by side, within memory."""
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
from .runner import CellTimeout, KernelDied, RunFailed, check_run_output
from .runtime import estimate_runtime, format_minutes

__all__ = ["execute_chapters", "KERNEL_OVERHEAD"]

#: the command line each concurrent chapter runs in, and the memory of a notebook kernel with numpy,
#: pandas and matplotlib loaded, counted beside its estimate
CHILD, KERNEL_OVERHEAD = (sys.executable, "-m", "attnrank_lite"), 400 * 2 ** 20


def execute_chapters(items, profile: str, outdir: Path, jobs: int = 1, cache: ChapterCache | None = None,
                     timeout: int | None = 1800, log=print) -> list[dict]:
    """A run folder ``outdir/<key>/`` for each checked ``(spec, values)``, copied from ``cache`` or executed
    and stored; the run records. ``jobs`` ``run`` processes at once, longest first, each once its estimate
    plus :data:`KERNEL_OVERHEAD` fits beside the others (or alone); the first failure is raised, the rest stopped.
    """
    for spec, _ in items:
        outdir = check_run_output(outdir, spec.key)
    keys, records, todo = {}, {}, []
    if cache is not None:  # the package and the environment hashed once for all chapters
        package, env = package_digest(), environment()
        keys = {spec.key: chapter_key(NOTEBOOK_DIR / spec.notebook, spec.key, profile, values, package, env,
                                      spec.inputs(values) if spec.inputs else ()) for spec, values in items}
    for spec, values in items:
        if cache is not None and cache.restore(keys[spec.key], outdir / spec.key):
            rec = records[spec.key] = {**_record(outdir, spec), "cache": "reused"}
            log(f"[attnrank] {spec.key}: reused from the cache (ran in {rec['seconds']:.1f} s on "
                f"{rec.get('finished', '?')}; key {keys[spec.key][:12]})")
        else:
            todo.append((spec, values))
    budget, gate, held, procs, stopped = available_memory(), threading.Condition(), [], [], threading.Event()
    env = {**os.environ, "ATTNRANK_PROGRESS": "0"}
    env |= dict.fromkeys(THREAD_VARS, str(max(1, (os.cpu_count() or 1) // jobs)))

    def run(spec, values):
        need, own = getattr(largest_need(spec, values), "bytes", 0.0) + KERNEL_OVERHEAD, outdir / f".{spec.key}"
        with tempfile.TemporaryFile("w+") as err:
            with gate:
                gate.wait_for(lambda: stopped.is_set() or not held or sum(held) + need <= budget)
                if stopped.is_set():
                    return None
                limit = {LIMIT_ENV: str(int(budget - sum(held)))}  # its share of the memory, for its own check
                held.append(need)
                procs.append(proc := subprocess.Popen(
                    [*CHILD, "run", spec.key, "--profile", profile, "-o", str(own), "--max-minutes", "0",
                     *(["--timeout", str(int(timeout))] if timeout is not None else [])],
                    stdout=subprocess.DEVNULL, stderr=err, env=env | limit, start_new_session=True))
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
                lines = err.read().splitlines()
                msg = next((ln[7:] for ln in reversed(lines) if ln.startswith("error: ")),
                           f"{spec.key}: exited with status {proc.returncode}")
                exc = {5: CellTimeout, 6: KernelDied}.get(proc.returncode, RunFailed)(msg.split("; nothing was")[0])
                exc.kernel_log = "\n".join(lines[-60:])
                raise exc
        os.replace(own / spec.key, outdir / spec.key)
        return spec

    todo.sort(key=lambda t: -estimate_runtime(*t).seconds)
    with ThreadPoolExecutor(jobs) as pool:
        try:
            for done in as_completed([pool.submit(run, *item) for item in todo]):
                spec = done.result()
                rec = records[spec.key] = _record(outdir, spec)
                try:
                    if cache is not None:
                        cache.store(keys[spec.key], outdir / spec.key)
                        rec["cache"] = "stored"
                except OSError as exc:
                    log(f"[attnrank] note: {spec.key} was not stored in the cache {cache.root}: {exc}")
                log(f"[attnrank] {spec.key}: done in {rec['seconds']:.1f} s")
        finally:  # a failure or an interrupt: stop the rest (each removes its partial folder)
            with gate:
                stopped.set()
                gate.notify_all()
            for proc in procs:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
    return [records[spec.key] for spec, _ in items]


def _record(outdir: Path, spec) -> dict:
    return json.loads((outdir / spec.key / f"{spec.stem}.run.json").read_text())
