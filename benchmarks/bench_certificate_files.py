"""Certificate files (issue 26): time to produce, save and verify a bracket, and file sizes.

For each n: queries and keys of a "head" (independent random points on S^3, beta = 8,
eps = 0.25), then

* ``bracket``: ``point_bracket(Q, beta, eps, K=K)`` (A never stored);
* ``save``: ``bracket.save(path, Q=Q, K=K, beta=beta)`` (verifies on the rebuilt A first);
* ``verify``: ``verify_file(path)``, what ``python -m attnrank_lite verify`` runs;
* ``checker``: the independent checker's ``check_file(path)``;

and the file's size, with the bytes (compressed, in the archive) of each certificate's arrays.
``--matrix`` also brackets the stored matrix ``rank_bracket(A, eps)`` (any row-stochastic
matrix; the file then holds A itself, n^2 * 8 bytes before compression) for n <= 3000.
``--head`` times the path of a real head, whose keys are not on a sphere: Gaussian queries and
keys in dimension 16, ``beta = 1/4`` (the scaled dot product ``1/sqrt(16)``),
``rank_bracket(softmax_attention(Q, K, beta), eps)`` saved as the recipe ``Q, K, beta``.
``--effort max`` passes ``effort="max"`` (every family within its cost limits) to every bracket
call; the default is the package's default rule (``"auto"``).

Usage::

    .venv/bin/python benchmarks/bench_certificate_files.py --n 500 3000 10000 --matrix
"""
from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
import zipfile

import numpy as np

from attnrank_lite.checker import check_file
from attnrank_lite.engine import point_bracket, rank_bracket, softmax_attention
from attnrank_lite.engine.certificate_file import verify_file
from attnrank_lite.laws.geometry import random_sphere


def member_sizes(path) -> dict[str, int]:
    with zipfile.ZipFile(path) as zf:
        return {i.filename[:-4]: i.compress_size for i in zf.infolist()}


def timed(f, *a, **k):
    t = time.perf_counter()
    out = f(*a, **k)
    return out, time.perf_counter() - t


def one(path, n, make, save_kw):
    b, t_b = timed(make)
    _, t_s = timed(b.save, path, **save_kw)
    v, t_v = timed(verify_file, path)
    c, t_c = timed(check_file, path)
    sizes = member_sizes(path)
    print(f"n = {n}: [{b.lower}, {b.upper}] {b.lower_kind} / {b.upper_certificate.source}; "
          f"bracket {t_b:.2f} s, save {t_s:.2f} s, verify {t_v:.2f} s, checker {t_c:.2f} s; "
          f"file {os.path.getsize(path) / 1e3:.1f} kB; verify ok {v.ok}, checker ok {c.ok}", flush=True)
    print("    members (compressed bytes): " + ", ".join(f"{k} {s}" for k, s in sorted(sizes.items())), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[500, 3000, 10000])
    ap.add_argument("--matrix", action="store_true")
    ap.add_argument("--head", action="store_true")
    ap.add_argument("--no-sphere", action="store_true", help="skip the points on S^3")
    ap.add_argument("--effort", choices=["auto", "max"], default="auto")
    args = ap.parse_args()
    effort = args.effort
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}, effort {effort}",
          flush=True)
    beta, eps = 8.0, 0.25
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            if args.head:
                rng = np.random.default_rng(n)
                Qh, Kh = rng.normal(size=(n, 16)), rng.normal(size=(n, 16))
                one(os.path.join(tmp, f"gauss{n}.npz"), n,
                    lambda: rank_bracket(softmax_attention(Qh, Kh, 0.25), eps, effort=effort),
                    {"Q": Qh, "K": Kh, "beta": 0.25})
            if args.no_sphere:
                continue
            Q, K = random_sphere(n, 4, seed=0), random_sphere(n, 4, seed=1)
            one(os.path.join(tmp, f"head{n}.npz"), n, lambda: point_bracket(Q, beta, eps, K=K, effort=effort),
                {"Q": Q, "K": K, "beta": beta})
            if args.matrix and n <= 3000:
                A = softmax_attention(Q, K, beta)
                one(os.path.join(tmp, f"matrix{n}.npz"), n, lambda: rank_bracket(A, eps, effort=effort), {"A": A})


if __name__ == "__main__":
    main()
