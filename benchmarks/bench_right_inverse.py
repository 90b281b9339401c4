"""The right-inverse LP lower search (issue 23, part B): the p-by-p search against the secant search.

On the prototype instances of ``SPEC.md`` ("Lower: right-inverse certificate"), eps = 0.25:
512 Fibonacci points of S^2 at beta = 16 (7 Voronoi cells per column support) and 500
well-spread points of S^3 (``well_spread_sphere(500, 4)``) at beta = 8 (13 cells). For each it
prints Neumann's ``p`` and, for ``right_inverse_lower`` with ``p_values`` = Neumann's ``p`` + 1,
+ 2, ... (**p by p**: the search before the secant search; it stops after two consecutive
failures) and with its default (**secant**): the certified rank, the programs solved (``p``
values) and the CPU and wall seconds. Every certificate is verified on ``A``. ``--methods`` also
solves the one program at the certified ``p`` with each HiGHS method of ``linprog``
(interior point ``highs-ipm``, the default, and dual simplex ``highs-ds``). One process, one
BLAS thread.

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_right_inverse.py [--only s2 s3] [--methods]
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before numpy loads

import argparse  # noqa: E402
import time  # noqa: E402

from attnrank_lite import softmax_attention  # noqa: E402
from attnrank_lite.engine import right_inverse as ri  # noqa: E402
from attnrank_lite.engine.neumann import farthest_point_order, neumann_lower_bound  # noqa: E402
from attnrank_lite.engine.threads import single_threaded  # noqa: E402
from attnrank_lite.laws.geometry import fibonacci_sphere, well_spread_sphere  # noqa: E402

CASES = {"s2": ("512 Fibonacci points of S^2, beta 16", lambda: fibonacci_sphere(512), 16.0, 7),
         "s3": ("500 well-spread points of S^3, beta 8", lambda: well_spread_sphere(500, 4), 8.0, 13)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    ap.add_argument("--eps", type=float, default=0.25)
    ap.add_argument("--methods", action="store_true", help="time one program per HiGHS method")
    a = ap.parse_args()
    solved = []
    lp = ri.lp_right_inverse

    def counting(A, S, **kw):
        solved.append(S.size)
        return lp(A, S, **kw)

    ri.lp_right_inverse = counting
    print(f"load average {os.getloadavg()[0]:.2f}\n\n| instance | Neumann | search | rank | programs (p) "
          "| CPU s | wall s |\n|---|---|---|---|---|---|---|", flush=True)
    with single_threaded():
        for key in a.only:
            name, points, beta, cells = CASES[key]
            P = points()
            A = softmax_attention(P, beta=beta)
            neumann = neumann_lower_bound(A, a.eps, points=P).rank
            for search, p_values in (("p by p", range(neumann + 1, A.shape[0] + 1)), ("secant", None)):
                solved.clear()
                t, c = time.perf_counter(), time.process_time()
                cert = ri.right_inverse_lower(A, a.eps, points=P, p_values=p_values, cells=cells, max_seconds=600)
                t, c = time.perf_counter() - t, time.process_time() - c
                assert cert.verify(A, a.eps)
                print(f"| {name} | {neumann} | {search} | {cert.rank} | {len(solved)} ({', '.join(map(str, solved))})"
                      f" | {c:.1f} | {t:.1f} |", flush=True)
            if a.methods:
                S = farthest_point_order(P, cert.rank)
                for method in ("highs-ipm", "highs-ds"):
                    c = time.process_time()
                    X = lp(A, S, cells=cells, method=method)
                    print(f"| {name} | one program at p = {S.size} | {method} | "
                          f"{'solved' if X is not None else 'no solution'} | | {time.process_time() - c:.1f} | |",
                          flush=True)
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
