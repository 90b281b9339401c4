"""Benchmark of the BERT calibration study (chapter 6).

Times, in one process: loading the model (offline), the forward passes with the recompute check,
and the per-head study (geometry, brackets on every sequence, polynomial certificates), for the
chapter's book defaults on the bundled MiniLM-L6-H384 (72 heads, 5 multipliers, 79 passages), and
the same with ``--model PATH`` for a local BERT-base.

Usage::

    .venv/bin/python benchmarks/bench_calibration.py                      # bundled model
    .venv/bin/python benchmarks/bench_calibration.py --model /path/to/bert-base-uncased
    .venv/bin/python benchmarks/bench_calibration.py --bracket-sequences 24

Timings depend on the machine and its load.
"""
from __future__ import annotations

import argparse
import os
import platform
import time

from attnrank_lite.calibration import study as cal
from attnrank_lite.calibration.bert import load_model
from attnrank_lite.calibration.corpus import load_corpus


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bundled-minilm")
    ap.add_argument("--bracket-sequences", type=int, default=None)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    t = time.perf_counter()
    model, tok, info = load_model(args.model)
    print(f"load_model: {time.perf_counter() - t:.1f} s  ({info.describe()})")
    texts = load_corpus()
    pairs = cal.select_heads(info.n_layers, info.n_heads)
    t = time.perf_counter()
    cal.collect_states(model, tok, texts, pairs)
    print(f"forward passes + recompute check ({len(texts)} passages, {len(pairs)} heads): "
          f"{time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    res = cal.run_study(model, tok, info, texts, bracket_sequences=args.bracket_sequences)
    s = res["settings"]
    print(f"whole study ({len(s)} settings, {len(res['sequences'])} brackets): {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
