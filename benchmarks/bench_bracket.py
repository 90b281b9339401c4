"""Benchmark of the certificate engine (issues 3 and 12), as ratios measured in one process.

For Fibonacci-sphere instances (d = 3) and each (n, beta) it prints, for eps = 0.25:

* ``form_A``: the time to build ``A = softmax_attention(X, beta=beta, block=1024)`` (the floor;
  best of three);
* ``svd``: one dense ``numpy.linalg.svd(A, full_matrices=False)``;
* ``today``: ``rank_bracket(A, eps)`` without points (cluster-mass / Frobenius / SVD families);
* ``points``: ``rank_bracket(A, eps, points=X)`` (adds the Neumann and harmonic families, and
  skips the SVD family where it would need its dense fallback);
* ``harmonic``: ``point_bracket(X, beta, eps, svd=False)`` (harmonic upper, Neumann lower, A never
  stored), and ``point``: ``point_bracket(X, beta, eps)`` (default ``svd="auto"``);

each with its bracket and the ratio to ``form_A``. All brackets are re-verified on ``A``.

``--sweep`` also times the chapter-2 paper-profile sphere sweep (n = 4096, beta = 16..256,
eps = 0.1 and 0.25) the old way (``rank_brackets(A, eps_values)``) and through
``sweeps.point_sweep`` (one harmonic basis for all beta). ``--big N`` runs ``point_brackets`` on
N well-spread points of S^3 (beta = ``--big-beta``, both eps) and reports time and peak RSS
(run it in its own process: the peak is per process).

Usage::

    .venv/bin/python benchmarks/bench_bracket.py                     # n = 2048, 4096; beta = 16, 128
    .venv/bin/python benchmarks/bench_bracket.py --sizes --sweep
    .venv/bin/python benchmarks/bench_bracket.py --sizes --big 20000

Timings depend on the machine and its load; the ratios are measured within one process.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import time

import numpy as np

from attnrank_lite import point_bracket, point_brackets, rank_bracket, softmax_attention
from attnrank_lite.engine.bracket import rank_brackets
from attnrank_lite.laws.geometry import fibonacci_sphere, well_spread_sphere


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2  # KiB on Linux


def timed(f):
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[2048, 4096])
    ap.add_argument("--betas", type=float, nargs="*", default=[16.0, 128.0])
    ap.add_argument("--eps", type=float, default=0.25)
    ap.add_argument("--sweep", action="store_true", help="time the chapter-2 paper sphere sweep, old vs new")
    ap.add_argument("--big", type=int, default=0, help="point_brackets on this many S^3 points")
    ap.add_argument("--big-beta", type=float, default=16.0)
    args = ap.parse_args()
    eps = args.eps
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs visible, numpy {np.__version__}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"# Fibonacci sphere d=3, eps={eps:g}; times in s, (ratio to form_A), [bracket]")
    for n in args.sizes:
        X = fibonacci_sphere(n)
        for beta in args.betas:
            A, t_form = timed(lambda: softmax_attention(X, beta=beta, block=1024))
            for _ in range(2):  # the floor: best of three (the first call also pays page faults)
                del A
                A, t = timed(lambda: softmax_attention(X, beta=beta, block=1024))
                t_form = min(t_form, t)
            _, t_svd = timed(lambda: np.linalg.svd(A, full_matrices=False))
            runs = {
                "today": lambda: rank_bracket(A, eps),
                "points": lambda: rank_bracket(A, eps, points=X),
                "harmonic": lambda: point_bracket(X, beta, eps, svd=False),
                "point": lambda: point_bracket(X, beta, eps),
            }
            parts = [f"n={n} beta={beta:g}: form_A {t_form:.2f}", f"svd {t_svd:.2f} ({t_svd / t_form:.1f}x)"]
            for name, f in runs.items():
                b, t = timed(f)
                flag = "" if b.verify(A, eps) else " NOT VERIFIED"
                parts.append(f"{name} {t:.2f} ({t / t_form:.1f}x) [{b.lower}, {b.upper}]{flag}")
            print("; ".join(parts), flush=True)
            del A
    if args.sweep:
        from attnrank_lite.laws.sweeps import point_sweep

        X = fibonacci_sphere(4096)
        betas = [16.0, 32.0, 64.0, 128.0, 256.0]
        t0 = time.perf_counter()
        old = []
        for beta in betas:
            A = softmax_attention(X, beta=beta, block=1024)
            old += [(beta, b.eps, b.lower, b.upper) for b in rank_brackets(A, [0.1, 0.25])]
            del A
        t_old = time.perf_counter() - t0
        df, t_new = timed(lambda: point_sweep(X, betas, [0.1, 0.25], verify_dense_limit=0))
        print(f"sweep n=4096 beta=16..256 both eps: old {t_old:.1f} s, point_sweep {t_new:.1f} s "
              f"(ratio {t_new / t_old:.3f})")
        for (beta, e, lo, up), row in zip(old, df.itertuples()):
            print(f"  beta={beta:g} eps={e:g}: old [{lo}, {up}]  new [{row.lower}, {row.upper}] "
                  f"({row.lower_kind}, {row.upper_source})")
    if args.big:
        X, t_pts = timed(lambda: well_spread_sphere(args.big, 4))
        bs, t = timed(lambda: point_brackets(X, args.big_beta, [0.1, 0.25], svd=False))
        print(f"big: {args.big} well-spread points on S^3 ({t_pts:.1f} s), beta={args.big_beta:g}: "
              + ", ".join(f"eps={b.eps:g} [{b.lower}, {b.upper}] ({b.upper_certificate.source})" for b in bs)
              + f" in {t:.1f} s, peak RSS {peak_rss_gb():.2f} GB")


if __name__ == "__main__":
    main()
