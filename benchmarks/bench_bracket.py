"""Benchmark of the certificate engine (issue 3).

For Fibonacci-sphere instances (d = 3, beta = 16) it prints, in one process:

* the time of one dense ``numpy.linalg.svd(A, full_matrices=False)``;
* the time of ``rank_bracket(A, eps)`` (default path: randomized above DENSE_LIMIT) and the ratio;
* the bracket of the default path and of the dense-SVD path (``method="dense"``), both verified.

With ``--big N`` it also brackets one N-point instance (built in row blocks) and reports the time
and the peak resident memory of the process.

Usage::

    .venv/bin/python benchmarks/bench_bracket.py                 # n = 1024, 2048, 4096
    .venv/bin/python benchmarks/bench_bracket.py --sizes --big 20000

Timings depend on the machine and its load; run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import time

import numpy as np

from attnrank_lite import rank_bracket
from attnrank_lite.geometry import fibonacci_sphere


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2  # ru_maxrss is in KiB on Linux


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1024, 2048, 4096])
    ap.add_argument("--beta", type=float, default=16.0)
    ap.add_argument("--eps", type=float, default=0.25)
    ap.add_argument("--big", type=int, default=0, help="also bracket one instance of this size")
    args = ap.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs visible, numpy {np.__version__}")
    print(f"# Fibonacci sphere d=3, beta={args.beta:g}, eps={args.eps:g}")
    print(f"{'n':>6} {'svd_s':>8} {'bracket_s':>9} {'ratio':>6} {'bracket':>12} {'dense_bracket':>13} {'dense_s':>8} verified")
    for n in args.sizes:
        A = softmax_attention(fibonacci_sphere(n), beta=args.beta, block=1024)
        t = time.perf_counter()
        np.linalg.svd(A, full_matrices=False)
        t_svd = time.perf_counter() - t
        t = time.perf_counter()
        b = rank_bracket(A, args.eps)
        t_br = time.perf_counter() - t
        t = time.perf_counter()
        bd = rank_bracket(A, args.eps, method="dense")
        t_dense = time.perf_counter() - t
        ok = b.verify(A, args.eps) and bd.verify(A, args.eps)
        print(f"{n:>6} {t_svd:>8.2f} {t_br:>9.2f} {t_br / t_svd:>6.3f} {f'[{b.lower}, {b.upper}]':>12} "
              f"{f'[{bd.lower}, {bd.upper}]':>13} {t_dense:>8.2f} {ok}", flush=True)
        del A
    if args.big:
        n = args.big
        t = time.perf_counter()
        A = softmax_attention(fibonacci_sphere(n), beta=args.beta, block=1024)
        t_build = time.perf_counter() - t
        t = time.perf_counter()
        b = rank_bracket(A, args.eps)
        t_br = time.perf_counter() - t
        t = time.perf_counter()
        ok = b.verify(A, args.eps)
        t_ver = time.perf_counter() - t
        print(f"big n={n}: build {t_build:.1f} s, bracket [{b.lower}, {b.upper}] in {t_br:.1f} s "
              f"({b.upper_certificate.source}), verify {ok} in {t_ver:.1f} s, "
              f"peak RSS {peak_rss_gb():.2f} GB (matrix alone {A.nbytes / 1e9:.2f} GB)")


if __name__ == "__main__":
    main()
