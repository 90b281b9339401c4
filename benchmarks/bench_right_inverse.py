"""The right-inverse LP lower search (issue 23, part B): the p-by-p search against the secant search.

On the prototype instances of ``SPEC.md`` ("Lower: right-inverse certificate"), eps = 0.25:
512 Fibonacci points of S^2 at beta = 16 (7 Voronoi cells per column support) and 500
well-spread points of S^3 (``well_spread_sphere(500, 4)``) at beta = 8 (13 cells). For each it
prints Neumann's ``p`` and, for ``right_inverse_lower`` with ``p_values`` = Neumann's ``p`` + 1,
+ 2, ... (**p by p**: the search before the secant search; it stops after two consecutive
failures) and with its default (**secant**): the certified rank, the programs solved (``p``
values) and the CPU and wall seconds. Every certificate is verified on ``A``. ``--methods`` also
solves the one program at the certified ``p`` with each HiGHS method of ``linprog``
(interior point ``highs-ipm``, the default, and dual simplex ``highs-ds``). ``--cells C ...``
instead solves the one program at the searches' rank (``--p``, default 37 on S^2, 32 on S^3) with
column supports of ``C`` Voronoi cells each and prints its left side
``||I - A_S X|| + eps ||X||`` (the proven bounds of ``verify``, which certifies when this
times ``1 + gamma_4`` stays below 1) and CPU seconds. One process,
one BLAS thread. ``--search-cells C ...`` runs only the secant search, once per support size.

``--projection`` runs ``right_inverse_lower(method="projection")`` instead (alternating
projections, no solver; ``--search-cells`` gives its support sizes), also on ``s3-6000``: 6,000
well-spread points of S^3 at beta = 16, where one HiGHS program did not finish in 16 minutes.

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_right_inverse.py [--only s2 s3] [--methods]
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_right_inverse.py --cells 4 5 6 7 9 11 13
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_right_inverse.py --only s2 --search-cells 9 13
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_right_inverse.py --projection --only s2 s3 s3-6000
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
         "s3": ("500 well-spread points of S^3, beta 8", lambda: well_spread_sphere(500, 4), 8.0, 13),
         "s3-6000": ("6,000 well-spread points of S^3, beta 16", lambda: well_spread_sphere(6000, 4), 16.0, 13)}


def projection_table(keys, cells_list, eps) -> None:
    """The projected search per instance and support size: Neumann's p, the rank, CPU seconds."""
    print("| instance | Neumann | cells | projected rank | CPU s |\n|---|---|---|---|---|")
    for key in keys:
        name, points, beta, cells = CASES[key]
        P = points()
        A = softmax_attention(P, beta=beta)
        neumann = neumann_lower_bound(A, eps, points=P).rank
        for n_cells in cells_list or [cells]:
            c = time.process_time()
            cert = ri.right_inverse_lower(A, eps, points=P, cells=n_cells, method="projection", max_seconds=600)
            assert cert.verify(A, eps)
            print(f"| {name} | {neumann} | {n_cells} | {cert.rank} | {time.process_time() - c:.1f} |", flush=True)
#: the rank both searches certify (the table in benchmarks/README.md)
RANK = {"s2": 37, "s3": 32}


def cells_table(keys, cells, p_given, eps: float) -> None:
    """One program per instance and support size at the searches' rank (``--cells``)."""
    print("| instance | p | cells | left side | CPU s |\n|---|---|---|---|---|")
    for key in keys:
        name, points, beta, _ = CASES[key]
        P = points()
        A = softmax_attention(P, beta=beta)
        S = farthest_point_order(P, p_given or RANK[key])
        for c in cells:
            t = time.process_time()
            X = ri.lp_right_inverse(A, S, cells=c)
            t = time.process_time() - t
            r_bound, x_bound = ri.right_inverse_norms(A[S], X) if X is not None else (float("inf"), 0.0)
            print(f"| {name} | {S.size} | {c} | {r_bound + eps * x_bound:.4f} | {t:.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(CASES), default=["s2", "s3"])
    ap.add_argument("--eps", type=float, default=0.25)
    ap.add_argument("--methods", action="store_true", help="time one program per HiGHS method")
    ap.add_argument("--cells", type=int, nargs="+", help="support sizes of one program each (no searches)")
    ap.add_argument("--p", type=int, help="the program's p for --cells")
    ap.add_argument("--search-cells", type=int, nargs="+", help="only the secant search, with these support sizes")
    ap.add_argument("--projection", action="store_true", help="alternating projections instead of the LP")
    a = ap.parse_args()
    if a.projection:
        with single_threaded():
            projection_table(a.only, a.search_cells, a.eps)
        return
    if a.cells:
        with single_threaded():
            cells_table(a.only, a.cells, a.p, a.eps)
        return
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
            runs = ([("p by p", range(neumann + 1, A.shape[0] + 1), cells), ("secant", None, cells)]
                    if not a.search_cells else [(f"secant, {c} cells", None, c) for c in a.search_cells])
            for search, p_values, n_cells in runs:
                solved.clear()
                t, c = time.perf_counter(), time.process_time()
                cert = ri.right_inverse_lower(A, a.eps, points=P, p_values=p_values, cells=n_cells, max_seconds=600)
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
