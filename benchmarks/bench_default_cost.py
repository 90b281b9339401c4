"""Cost of the default ``point_bracket`` against forming A (issue 23, "A cost-aware default").

One thread (``engine.threads.single_threaded``), one process: for n = 4096 Fibonacci points and
beta = 16, 128 (eps = 0.25) it prints the time to form ``A`` (best of three), the default
``point_bracket`` and ``svd=False`` (harmonic upper + Neumann lower), each with its bracket and
its ratio to forming A; ``--profile`` adds a cProfile of the default call (top 15 by cumulative
time), which shows which family costs what.

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_default_cost.py [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from attnrank_lite import point_bracket, softmax_attention
from attnrank_lite.engine.threads import single_threaded
from attnrank_lite.laws.geometry import fibonacci_sphere


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--betas", type=float, nargs="+", default=[16.0, 128.0])
    ap.add_argument("--eps", type=float, default=0.25)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    X = fibonacci_sphere(a.n)
    with single_threaded():
        for beta in a.betas:
            t_a = min(_timed(lambda: softmax_attention(X, beta=beta, block=1024))[0] for _ in range(3))
            print(f"n={a.n} beta={beta:g} eps={a.eps}: form_A {t_a:.2f} s", flush=True)
            for name, kw in (("default", {}), ("svd=False", {"svd": False})):
                t, b = _timed(lambda: point_bracket(X, beta, a.eps, **kw))
                print(f"  {name:10s} {t:6.2f} s  {t / t_a:5.1f}x  [{b.lower}, {b.upper}]"
                      f"  upper={b.upper_certificate.source}", flush=True)
            if a.profile:
                pr = cProfile.Profile()
                pr.runcall(point_bracket, X, beta, a.eps)
                pstats.Stats(pr).sort_stats("cumulative").print_stats(15)


if __name__ == "__main__":
    main()
