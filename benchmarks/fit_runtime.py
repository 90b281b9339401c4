"""Fit the run-time model (``attnrank_lite/site/data/runtime_model.json``) to measured runs.

``--run quick book`` executes every chapter with those profiles, one at a time on one BLAS
thread (as a build's side-by-side chapters run), and keeps each run record (``cpu_seconds``,
``parameters``, ...) in ``--records DIR`` with the machine-speed probe measured just before it;
without ``--run`` the script fits the records already there. The fit (non-negative least squares
on relative errors) gives one start-up cost and one factor per chapter on its cost terms'
coefficients; the model keeps the probes' mean, so that a run on another machine can be compared
with its estimate (:func:`attnrank_lite.site.runtime.record_ratio`). Every fitted run must lie
within the model's ``factor`` of its estimate, else nothing is written.

Usage::

    .venv/bin/python benchmarks/fit_runtime.py --records /tmp/rt --run quick book
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
from datetime import date
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from attnrank_lite.site import runtime
from attnrank_lite.site.chapters import all_chapters, get_chapter


def run_all(folder: Path, profiles) -> None:
    """Run every chapter in each profile, one at a time on one BLAS thread (as the build's
    side-by-side chapters do), keeping each record with the probe measured before it; records
    already in ``folder`` are kept."""
    from attnrank_lite.site.runner import run_chapter
    from attnrank_lite.site.schedule import thread_env

    os.environ.update(thread_env(1, cores=1))
    for spec in all_chapters():
        for profile in profiles:
            path = folder / f"{spec.key}-{profile}.json"
            if path.exists():  # kept from an earlier, interrupted call
                continue
            probe = runtime.probe_seconds()
            with tempfile.TemporaryDirectory() as out:
                rec = run_chapter(spec.key, profile=profile, outdir=out)
            path.write_text(json.dumps({"probe": probe, "record": rec}, indent=1))
            print(f"{spec.key} {profile}: {rec['cpu_seconds']:.1f} CPU s ({rec['seconds']:.1f} s wall), "
                  f"probe {probe * 1e3:.1f} ms", flush=True)


def fit(runs: list[dict], model: dict) -> dict:
    """Rescale ``model`` to ``runs``: CPU seconds = startup + factor[chapter] * (the terms at the
    current coefficients), probes normalised to their mean."""
    keys = sorted({r["record"]["chapter"] for r in runs})
    probe = float(np.mean([r["probe"] for r in runs]))
    rows, rhs = [], []
    for r in runs:
        rec = r["record"]
        spec = get_chapter(rec["chapter"])
        work = sum(s for s, _ in runtime.terms(spec, spec.validate(rec["parameters"]), model))
        row = np.zeros(1 + len(keys))
        row[0], row[1 + keys.index(rec["chapter"])] = 1.0, work
        seconds = rec["cpu_seconds"] * probe / r["probe"]
        rows.append(row / seconds)
        rhs.append(1.0)
    x, _ = nnls(np.array(rows), np.array(rhs))
    new = {**model, "startup_seconds": round(float(x[0]), 2), "probe_seconds": probe,
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, one BLAS thread ({date.today():%B %Y})"}
    new["chapters"] = {k: {t: float(f"{c * x[1 + keys.index(k)]:.4g}") for t, c in cs.items()}
                       if k in keys else cs for k, cs in model["chapters"].items()}
    return new


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=Path, required=True, help="folder of the run records")
    ap.add_argument("--run", nargs="*", default=(), help="profiles to run first (quick, book)")
    ap.add_argument("--out", type=Path, default=runtime.MODEL_PATH)
    args = ap.parse_args(argv)
    args.records.mkdir(parents=True, exist_ok=True)
    run_all(args.records, args.run)
    runs = [json.loads(p.read_text()) for p in sorted(args.records.glob("ch*.json"))]
    if not runs:
        ap.error(f"no run records in {args.records} (run some with --run quick book)")
    model = fit(runs, runtime.load_model())
    bad = []
    for r in runs:
        ratio = runtime.record_ratio(r["record"], r["probe"], model)
        print(f"{r['record']['chapter']} {r['record']['profile']}: measured / estimate {ratio:.2f}")
        bad += [r] if not 1 / model["factor"] <= ratio <= model["factor"] else []
    if bad:
        print(f"{len(bad)} runs outside the factor {model['factor']}: model not written")
        return 1
    model["fitted_to"] = ", ".join(f"{r['record']['chapter']} {r['record']['profile']} "
                                   f"{r['record']['cpu_seconds']} CPU s" for r in runs)
    lines = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in model.items() if k != "chapters"]
    lines.append(' "chapters": {\n' + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                                                  for k, v in model["chapters"].items()) + "\n }")
    args.out.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # one line per chapter
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
