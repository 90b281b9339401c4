"""Benchmark of the l1-fitted upper family (issue 17): upper end before / after, and the cost.

For each configuration (points, beta, eps) it builds ``A = softmax_attention(X, beta=beta)`` and
times, in one process (wall and CPU = user + sys of the process, BLAS threads included):

* ``plain``: the projected SVD family, ``svd`` (one dense SVD) + ``svd_upper_bound(A, eps)``;
* ``l1``: ``l1_upper_bound(A, eps, svd=...)`` on the same SVD (the l1 family over the SVD
  subspaces, searched below the plain rank; its time excludes the shared SVD);
* on sphere points also ``harmonic``: the projected harmonic family (``harmonic_upper_bound``)
  and ``l1 harm.``: the l1 family over the same harmonic basis (``V = basis.columns(degree)``).

Every certificate is re-verified on ``A``. ``--reference`` also prints the l1-fitted and
projected max row errors at the ranks quoted in issue 17 (one full fit each, 300 steps).

Usage::

    .venv/bin/python benchmarks/bench_l1fit.py                 # the four issue-17 targets
    .venv/bin/python benchmarks/bench_l1fit.py --big           # + well-spread S^3, n = 3,000
    .venv/bin/python benchmarks/bench_l1fit.py --only s3-3000-16 --reference

Timings depend on the machine and its load; compare the columns of one line.
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from attnrank_lite import softmax_attention
from attnrank_lite.engine.harmonic import HarmonicBasis, harmonic_upper_bound
from attnrank_lite.engine.l1fit import l1_fit, l1_upper_bound
from attnrank_lite.engine.threads import single_threaded
from attnrank_lite.engine.upper import svd_upper_bound
from attnrank_lite.laws.geometry import fibonacci_sphere, well_spread_sphere

#: name -> (point set, n, d, beta, eps, ranks of issue 17's reference errors)
CASES = {
    "fib-300-32": ("fibonacci", 300, 3, 32.0, 0.25, (148, 184)),
    "fib-2048-16-0.1": ("fibonacci", 2048, 3, 16.0, 0.1, (100,)),
    "fib-2048-16-0.25": ("fibonacci", 2048, 3, 16.0, 0.25, (72,)),
    "s3-1500-16": ("well-spread", 1500, 4, 16.0, 0.25, (290,)),
}
BIG = {
    "s3-3000-16": ("well-spread", 3000, 4, 16.0, 0.25, ()),
    "s3-3000-32": ("well-spread", 3000, 4, 32.0, 0.25, ()),
}


class Clock:
    """Wall and CPU (user + sys of this process) seconds of a block."""

    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.w
        self.cpu = time.process_time() - self.c

    def __str__(self):
        return f"{self.wall:.2f} s wall / {self.cpu:.2f} s CPU"


def points(kind, n, d):
    return fibonacci_sphere(n) if kind == "fibonacci" else well_spread_sphere(n, d)


def run(name, kind, n, d, beta, eps, ref_ks, reference, harmonic):
    X = points(kind, n, d)
    with Clock() as t_form:
        A = softmax_attention(X, beta=beta)
    with Clock() as t_plain:
        svd = np.linalg.svd(A, full_matrices=False)
        plain = svd_upper_bound(A, eps, svd=svd)
    with Clock() as t_l1:
        fitted = l1_upper_bound(A, eps, svd=svd)
    ok = plain.verify(A, eps) and fitted.verify(A, eps)
    print(f"{name}: n={n} d={d} beta={beta:g} eps={eps:g}; form A {t_form}", flush=True)
    print(f"  SVD family {plain.rank} in {t_plain}; l1 over SVD {fitted.rank} in {t_l1} "
          f"(CPU ratio {t_l1.cpu / t_plain.cpu:.2f}, wall ratio {t_l1.wall / t_plain.wall:.2f})"
          f"{'' if ok else ' NOT VERIFIED'}", flush=True)
    if harmonic:
        with Clock() as t_h:
            basis = HarmonicBasis(X)
            hcert = harmonic_upper_bound(A, X, eps, basis=basis)
    if harmonic and hcert is not None:
        with Clock() as t_hl1:
            V = basis.columns(hcert.degree)
            hfit = l1_upper_bound(A, eps, V=V, source=f"harmonic degree {hcert.degree}")
        ok = hcert.verify(A, eps) and hfit.verify(A, eps)
        print(f"  harmonic {hcert.rank} (degree {hcert.degree}) in {t_h}; l1 over harmonic "
              f"{hfit.rank} in {t_hl1} (CPU ratio {t_hl1.cpu / t_h.cpu:.2f} to the harmonic "
              f"family, {t_hl1.cpu / t_plain.cpu:.2f} to the SVD family)"
              f"{'' if ok else ' NOT VERIFIED'}", flush=True)
    if reference:
        Vt = svd[2]
        for k in ref_ks:
            with Clock() as t_fit:
                fit = l1_fit(A, Vt[:k].T)
            print(f"  k={k}: l1-fitted max row error {fit.max_error:.3f} (projected "
                  f"{fit.max_projected:.3f}, dual bound {fit.lower.max():.3f}) in {t_fit}",
                  flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", action="store_true", help="also well-spread S^3, n = 3,000, beta 16 and 32")
    ap.add_argument("--only", nargs="*", default=None, help="run only these case names")
    ap.add_argument("--reference", action="store_true", help="errors at issue 17's reference ranks")
    ap.add_argument("--no-harmonic", action="store_true", help="skip the harmonic families")
    ap.add_argument("--all-threads", action="store_true",
                    help="let BLAS use every core (default: one thread, steadier on a shared machine)")
    args = ap.parse_args()
    cases = dict(CASES, **BIG) if args.big or args.only else dict(CASES)
    if args.only:
        cases = {k: v for k, v in cases.items() if k in args.only}
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs visible, numpy {np.__version__}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"# BLAS threads: {'all' if args.all_threads else 'one'}", flush=True)
    for name, (kind, n, d, beta, eps, ks) in cases.items():
        if args.all_threads:
            run(name, kind, n, d, beta, eps, ks, args.reference, not args.no_harmonic)
        else:
            with single_threaded():
                run(name, kind, n, d, beta, eps, ks, args.reference, not args.no_harmonic)


if __name__ == "__main__":
    main()
