"""The randomized family on diffuse attention: where its sketches give way to a dense basis (issue 23).

On a random head the rank at eps is far above any affordable sketch, so the family's doubling
sketches fail and it ends in a dense basis. Two schedules, timed in one process, in alternating
rounds (one BLAS thread):

* ``before``: sketches of l = start + 10, doubling, until l reaches min(n, m) / 2, then the
  right singular vectors of ``np.linalg.svd(A)`` (the engine up to the eighth round of issue 23,
  rebuilt here from the engine's range finder and nested search);
* ``now``: ``engine.upper.randomized_family`` (sketches until min(n, m) / DENSE_FROM, then
  ``gram_eigenbasis``, the eigenvectors of ``A^T A``);

each against forming ``A`` in the same round. Every certificate is verified on ``A``.

```bash
PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_dense_basis.py --rounds 3
```
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from attnrank_lite import softmax_attention
from attnrank_lite.engine.range_finder import randomized_range_finder
from attnrank_lite.engine.row_source import RowSource
from attnrank_lite.engine.threads import single_threaded
from attnrank_lite.engine.upper import exact_factorisation, nested_certificate, randomized_family

INSTANCES = {"random-1500": (1500, 32), "random-3000": (3000, 64)}


def before(A, eps: float, start: int = 32, oversample: int = 10):
    """The earlier schedule: sketches doubling to min(n, m) / 2, then the SVD's basis."""
    full = min(A.shape)
    source = RowSource.from_matrix(A)
    l, draw = start + oversample, 0
    while l < full // 2:
        basis = randomized_range_finder(source, l, seed=draw)
        cert = nested_certificate(A, basis.V, eps, 0, f"randomized range finder (l={l})")
        if cert is not None:
            return cert
        l, draw = 2 * l, draw + 1
    cert = nested_certificate(A, np.linalg.svd(A, full_matrices=False)[2].T, eps, 0, "dense SVD")
    return exact_factorisation(A) if cert is None else cert


def now(A, eps: float):
    return randomized_family(A, eps)[0]


def _cpu(f, *args):
    t = time.process_time()
    out = f(*args)
    return time.process_time() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(INSTANCES), default=sorted(INSTANCES))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--eps", type=float, default=0.1)
    args = ap.parse_args()
    with single_threaded():
        for name in args.only:
            n, d = INSTANCES[name]
            rng = np.random.default_rng(0)
            Q, K = rng.standard_normal((n, d)), rng.standard_normal((n, d))
            ratios = []
            for r in range(args.rounds):
                t_a, A = _cpu(softmax_attention, Q, K, 1 / np.sqrt(d))
                t_b, c_b = _cpu(before, A, args.eps)
                t_n, c_n = _cpu(now, A, args.eps)
                assert c_b.verify(A, args.eps) and c_n.verify(A, args.eps)
                ratios.append(t_b / t_n)
                print(f"{name} round {r + 1}: form A {t_a:.2f} s; before {t_b:.2f} s (rank {c_b.rank}, "
                      f"{c_b.source}); now {t_n:.2f} s (rank {c_n.rank}, {c_n.source}); before / now "
                      f"{t_b / t_n:.2f}", flush=True)
            print(f"{name}: before / now, median of {args.rounds} rounds {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
