"""The l1 family per chapter-2 configuration against a plain ADMM reference (issue 23, "An l1
family that reaches its optimum").

Runs chapter 2's configuration sweep (``laws.sweeps.configuration_sweep``, every kind, the chapter's
``effort="max"`` rows) for one profile's ``config_n`` and ``config_betas`` (d = 3), and for each
row asks the reference of ``tests/engine/test_effort.py`` (``_reference_l1_certifies``: a plain
ADMM l1 fit of 400 steps in the dense SVD subspace, written independently of the engine's) whether
it certifies rank ``ceil(upper / 1.03) - 1`` and ``upper - 1``. A row where it certifies neither
has its upper end within 3% of, and at, the reference's optimum.

```bash
PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_l1_reference.py --profile book
```
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import time
from pathlib import Path

import numpy as np

from attnrank_lite.engine.threads import single_threaded
from attnrank_lite.laws.sweeps import configuration_sweep, sphere_configuration, spherical_instance
from attnrank_lite.site.chapters import get_chapter

ROOT = Path(__file__).resolve().parents[1]


def _reference():
    """The test's reference fit, loaded from its file (one implementation, outside the engine)."""
    spec = importlib.util.spec_from_file_location("test_effort", ROOT / "tests" / "engine" / "test_effort.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._reference_l1_certifies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="book", help="chapter 2's profile (quick, book, paper)")
    args = ap.parse_args()
    params = get_chapter("ch02").profile(args.profile)
    n, betas, eps_values = params["config_n"], params["config_betas"], params["eps_values"]
    certifies = _reference()
    print(f"chapter 2, profile {args.profile}: n = {n}, d = 3, betas {betas}, eps {eps_values}", flush=True)
    with single_threaded():
        t = time.process_time()
        rows = configuration_sweep(n, 3, betas, eps_values, seed=params["seed"])
        print(f"sweep: {len(rows)} rows, {time.process_time() - t:.0f} CPU s", flush=True)
        at_optimum = 0
        for (kind, beta), group in rows.groupby(["configuration", "beta"], sort=False):
            X = sphere_configuration(kind, n, 3, seed=params["seed"])
            A = spherical_instance(X, beta)
            V = np.linalg.svd(A)[2].T
            for _, r in group.iterrows():
                upper, eps = int(r["upper"]), float(r["eps"])
                within = certifies(A, V[:, :math.ceil(upper / 1.03) - 1], eps)
                below = certifies(A, V[:, :upper - 1], eps)
                at_optimum += not (within or below)
                print(f"  {kind:12s} n={A.shape[0]:4d} beta={beta:5g} eps={eps:4g}: upper {upper:4d} "
                      f"({r['upper_source']}); reference certifies "
                      f"{math.ceil(upper / 1.03) - 1}: {within}, {upper - 1}: {below}", flush=True)
        print(f"{at_optimum} of {len(rows)} rows: the reference certifies neither", flush=True)


if __name__ == "__main__":
    main()
