"""Time ``make book``'s work cold (empty chapter cache) and warm (nothing changed): issue 16.

Runs ``python -m attnrank_lite build`` twice into a temporary output folder with a temporary,
initially empty chapter cache, and prints a markdown table: per chapter the wall and CPU seconds
of its notebook run (from the run records the build publishes, ``html/run_records.json``) cold,
and whether the warm build reused it; then both builds' totals, wall and CPU (user + system of
the build and every process it started). CPU seconds are the figure to compare on a shared
machine: the load average before and after each build is printed beside it.

Usage::

    .venv/bin/python benchmarks/bench_book.py                       # book profile, --jobs = cores
    .venv/bin/python benchmarks/bench_book.py --profile quick --jobs 2
    .venv/bin/python benchmarks/bench_book.py --json bench.json      # also write the raw figures
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_build(profile: str, out: Path, cache: Path, jobs: int | None) -> dict:
    """One build; its wall and CPU seconds, the load around it and its run records."""
    cmd = [sys.executable, "-m", "attnrank_lite", "build", "--profile", profile, "-o", str(out),
           "--cache", str(cache)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    load0, cpu0, t0 = os.getloadavg()[0], _children_cpu(), time.time()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall, cpu, load1 = time.time() - t0, _children_cpu() - cpu0, os.getloadavg()[0]
    if proc.returncode != 0:
        sys.exit(f"build failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    records = json.loads((out / "html" / "run_records.json").read_text())
    return {"wall": wall, "cpu": cpu, "load_before": load0, "load_after": load1,
            "execution_seconds": records.get("execution_seconds"), "chapters": records["chapters"]}


def table(cold: dict, warm: dict) -> str:
    rows = ["| chapter | cold wall s | cold CPU s | warm |", "|---|---|---|---|"]
    reused = {r["chapter"]: r.get("cache") == "reused" for r in warm["chapters"]}
    for r in cold["chapters"]:
        cpu = r.get("cpu_seconds")
        rows.append(f"| {r['chapter']} | {r['seconds']:.1f} | {'?' if cpu is None else f'{cpu:.1f}'} | "
                    f"{'reused' if reused.get(r['chapter']) else 'executed again'} |")
    for name, b in (("cold", cold), ("warm", warm)):
        rows.append(f"| **{name} build** | {b['wall']:.1f} | {b['cpu']:.1f} | load {b['load_before']:.1f} → "
                    f"{b['load_after']:.1f}; chapters {b['execution_seconds']} s |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="book", choices=("quick", "book", "paper"))
    ap.add_argument("--jobs", type=int, default=None, help="build --jobs (default: the build's, the cores)")
    ap.add_argument("--json", default=None, help="also write the raw figures here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-book-") as tmp:
        tmp = Path(tmp)
        cold = timed_build(args.profile, tmp / "site", tmp / "cache", args.jobs)
        warm = timed_build(args.profile, tmp / "site", tmp / "cache", args.jobs)
    print(f"profile {args.profile}, {os.cpu_count()} CPUs, jobs {args.jobs or os.cpu_count()}")
    print(table(cold, warm))
    if args.json:
        Path(args.json).write_text(json.dumps({"profile": args.profile, "cold": cold, "warm": warm}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
