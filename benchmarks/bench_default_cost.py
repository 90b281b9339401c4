"""Cost of the default ``point_bracket`` against forming A (issue 23, "A cost-aware default").

One thread (``engine.threads.single_threaded``), one process: for n = 4096 Fibonacci points and
beta = 16, 128 (eps = 0.25) it prints the time to form ``A`` (best of three) and, each with its
bracket, its upper certificate's source and its ratio to forming A:

* ``default`` -- ``point_bracket(X, beta, eps)`` (``effort="auto"``: the cost-aware rule);
* ``harm+neu`` -- harmonic upper and Neumann lower families only (``svd=False``, the l1 family
  off), the reference the default must be at least as narrow as;
* ``max`` -- ``effort="max"`` (every family, today's everything-on rule), unless ``--no-max``.

``--repeat R`` repeats the default and harmonic + Neumann calls and prints the best; the load
average is printed before and after. ``--profile`` adds a cProfile of the default call (top 15
by cumulative time). ``--probe-ab`` times the default instead with the harmonic basis's probe
(``engine.harmonic.PROBE_TOL``) and with it off (``0``: the pass against every earlier column on
every degree, the code before the probe), alternating, ``--repeat`` rounds: each round's times,
then the best of each and its median ratio to forming A.
``--paired R`` times instead, R rounds in a row, forming A and then the default, and prints each
round's ratio (wall-clock and process CPU time) and their median and largest: a ratio taken
from one pair is not moved by the host's slow and fast minutes, which move best-of times taken
minutes apart. ``--subnormal-ab R`` times R rounds of (form A, the default, the default with the
float32 check's flush of subnormal entries off: ``engine.nested._TINY32 = 0``, the code before it)
and prints the same.

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_default_cost.py [--profile] [--no-max]
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time

from attnrank_lite import point_bracket, softmax_attention
from attnrank_lite.engine.assemble import CostLimits
from attnrank_lite.engine.streaming import point_brackets
from attnrank_lite.engine.threads import single_threaded
from attnrank_lite.laws.geometry import fibonacci_sphere


def _timed(fn):
    """Wall-clock and process CPU seconds of one call, and its result."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--betas", type=float, nargs="+", default=[16.0, 128.0])
    ap.add_argument("--eps", type=float, default=0.25)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-max", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--probe-ab", action="store_true")
    ap.add_argument("--paired", type=int, default=0, metavar="R")
    ap.add_argument("--subnormal-ab", type=int, default=0, metavar="R")
    a = ap.parse_args()
    if a.probe_ab:
        return _probe_ab(a)
    if a.subnormal_ab:
        return _subnormal_ab(a)
    if a.paired:
        return _paired(a)
    X = fibonacci_sphere(a.n)
    calls = [
        ("default", lambda beta: point_bracket(X, beta, a.eps), a.repeat),
        ("harm+neu", lambda beta: point_brackets(X, beta, [a.eps], svd=False, limits=CostLimits(l1=0),
                                                 effort="max")[0], a.repeat),
    ]
    if not a.no_max:
        calls.append(("max", lambda beta: point_bracket(X, beta, a.eps, effort="max"), 1))
    print(_load(), flush=True)
    with single_threaded():
        for beta in a.betas:
            t_a = min(_timed(lambda: softmax_attention(X, beta=beta, block=1024))[0] for _ in range(3))
            print(f"n={a.n} beta={beta:g} eps={a.eps}: form_A {t_a:.2f} s", flush=True)
            for name, fn, reps in calls:
                runs = [_timed(lambda: fn(beta)) for _ in range(reps)]
                t, _, b = min(runs, key=lambda r: r[0])
                print(f"  {name:9s} {t:6.2f} s  {t / t_a:5.1f}x  [{b.lower}, {b.upper}]"
                      f"  upper={b.upper_certificate.source}", flush=True)
            if a.profile:
                pr = cProfile.Profile()
                pr.runcall(point_bracket, X, beta, a.eps)
                pstats.Stats(pr).sort_stats("cumulative").print_stats(15)
    print(_load(), flush=True)


def _paired(a) -> None:
    """``--paired R``: R rounds of (form A, the default), each round's ratios, their median and largest."""
    X = fibonacci_sphere(a.n)
    print(_load(), flush=True)
    with single_threaded():
        for beta in a.betas:
            softmax_attention(X, beta=beta, block=1024)  # warm-up (allocation, first touch)
            wall, cpu = [], []
            for r in range(a.paired):
                wa, ca, _ = _timed(lambda: softmax_attention(X, beta=beta, block=1024))
                wd, cd, b = _timed(lambda: point_bracket(X, beta, a.eps))
                wall.append(wd / wa)
                cpu.append(cd / ca)
                print(f"  round {r + 1}: form_A {wa:.2f} s, default {wd:.2f} s: {wd / wa:.1f}x wall, "
                      f"{cd / ca:.1f}x CPU  [{b.lower}, {b.upper}]", flush=True)
            print(f"n={a.n} beta={beta:g} eps={a.eps}: {a.paired} pairs, ratio wall median "
                  f"{statistics.median(wall):.1f}x (largest {max(wall):.1f}x), CPU median "
                  f"{statistics.median(cpu):.1f}x (largest {max(cpu):.1f}x)", flush=True)
    print(_load(), flush=True)


def _switch_ab(a, rounds: int, module, attr: str, arms) -> None:
    """``rounds`` rounds in one process of (form A, then the default under each arm ``(name, value)``
    of ``module.attr``): each round's times and ratios, then per arm its best time and median ratio."""
    X, kept = fibonacci_sphere(a.n), getattr(module, attr)
    print(_load(), flush=True)
    with single_threaded():
        for beta in a.betas:
            softmax_attention(X, beta=beta, block=1024)  # warm-up (allocation, first touch)
            t_a, times, ratios = [], {n: [] for n, _ in arms}, {n: [] for n, _ in arms}
            try:
                for r in range(rounds):
                    wa, _, _ = _timed(lambda: softmax_attention(X, beta=beta, block=1024))
                    t_a.append(wa)
                    line = []
                    for name, value in arms:
                        setattr(module, attr, value)
                        wd, _, b = _timed(lambda: point_bracket(X, beta, a.eps))
                        times[name].append(wd)
                        ratios[name].append(wd / wa)
                        line.append(f"{name} {wd:.2f} s ({wd / wa:.1f}x) [{b.lower}, {b.upper}]")
                    print(f"  round {r + 1}: form_A {wa:.2f} s; " + "; ".join(line), flush=True)
            finally:
                setattr(module, attr, kept)
            print(f"n={a.n} beta={beta:g} eps={a.eps}: {rounds} rounds, form_A best {min(t_a):.2f} s; " + "; ".join(
                f"{k} best {min(times[k]):.2f} s ({min(times[k]) / min(t_a):.1f}x), median ratio "
                f"{statistics.median(ratios[k]):.1f}x" for k in times), flush=True)
    print(_load(), flush=True)


def _subnormal_ab(a) -> None:
    """The default with and without the float32 check's flush of subnormal entries."""
    import numpy as np

    from attnrank_lite.engine import nested

    _switch_ab(a, a.subnormal_ab, nested, "_TINY32", [("flush", nested._TINY32), ("no flush", np.float32(0))])


def _probe_ab(a) -> None:
    """The default with and without the harmonic basis's probe."""
    from attnrank_lite.engine import harmonic

    probe = harmonic.PROBE_TOL
    _switch_ab(a, a.repeat, harmonic, "PROBE_TOL", [("probe off", 0.0), (f"probe {probe:g}", probe)])


if __name__ == "__main__":
    main()
