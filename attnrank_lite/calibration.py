r"""The BERT calibration study (SPEC §3 item 6): interaction dimension vs rank certificates per head.

For a head with layer-input states :math:`x`, queries :math:`q_i = W_Q x_i + b_Q` and keys
:math:`k_j = W_K x_j + b_K` in :math:`\mathbb R^{d}` (``d = d_head``), and an inverse-temperature
multiplier ``m``, the logits are :math:`\beta\, q_i^\top k_j` with :math:`\beta = m/\sqrt d`.

Calibration-whitened coordinates
--------------------------------
Stack the queries of all calibration sequences into :math:`Q \in \mathbb R^{N\times d}` and the
keys, each centred by its own sequence's mean key :math:`c_\sigma`, into :math:`K_c`. With thin SVDs
:math:`Q = U_q S_q V_q^\top`, :math:`K_c = U_k S_k V_k^\top`, write :math:`q_i = V_q S_q u_i` and
:math:`k_j - c_\sigma = V_k S_k v_j` where :math:`u_i, v_j` are rows of :math:`U_q, U_k`
(orthonormal columns: these are whitened coordinates, up to the factor :math:`\sqrt N`). Then

.. math:: q_i^\top (k_j - c_\sigma) = u_i^\top\, C\, v_j, \qquad C = S_q V_q^\top V_k S_k \in \mathbb R^{d\times d},

and the singular values of ``C`` are those of the pooled query-key logit matrix
:math:`G = Q K_c^\top` (because :math:`G = U_q C U_k^\top`). Truncating ``C`` to rank ``s``
(:math:`C_s`) changes the logits of row ``i`` by :math:`\delta_{ij} = \beta u_i^\top (C - C_s) v_j`,
and by Lemma 5.1 (the key centre is row-scalar)

.. math:: \|A - A_s\| \le \max_i 2\tanh(\mathrm{osc}_i/4) \le \eta_s := \beta\,\sigma_{s+1}(G)\,
          \max_i |u_i| \max_j |v_j|,

on **every** calibration sequence (``A_s`` has visible dimension at most ``s``). ``max_i |u_i|^2``
is the largest leverage score of the query cloud. Two tolerance-indexed dimensions follow:

* :math:`r(\tau) = \min\{s : \eta_s \le \tau\}` — the SVD bound (SPEC §3 item 5), and
* :math:`r_\text{osc}(\tau) = \min\{s : \max_i 2\tanh(\beta\,\Omega_{s,i}/4) \le \tau\}` with the
  measured oscillations :math:`\Omega_{s,i} = \mathrm{osc}_j(u_i^\top (C - C_s) v_j)` on the
  calibration tokens (Lemma 5.1 applied to the actual perturbation; never larger than ``r(tau)``).

The effective-dimension reduction is :math:`1 - r(\tau)/d` (and likewise for :math:`r_\text{osc}`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import comb
from pathlib import Path

import numpy as np
import pandas as pd

from .attention import softmax_attention
from .bracket import rank_bracket
from .interaction import head_visible_dimension, tolerance_dimension
from .polynomial import polynomial_certificate
from .progress import progress

__all__ = [
    "DEFAULT_LAYERS",
    "corpus_path",
    "load_corpus",
    "select_heads",
    "select_passages",
    "describe_run",
    "evenly_spaced",
    "single_threaded",
    "CalibrationTokens",
    "collect_states",
    "HeadGeometry",
    "head_geometry",
    "eta_bound",
    "eta_osc",
    "tolerance_dims",
    "truncated_coordinates",
    "study_head",
    "tau_curve_rows",
    "run_study",
    "spearman",
    "spearman_bootstrap",
    "associations",
    "summary_by_multiplier",
    "verdict",
]

#: the paper's 84-head set is reconstructed as the first seven layers x 12 heads of BERT-base
DEFAULT_LAYERS = 7


# --------------------------------------------------------------------------------------- corpus

def corpus_path() -> Path:
    """The calibration corpus shipped with the package (``attnrank_lite/data/calibration_corpus.txt``)."""
    return Path(__file__).resolve().parent / "data" / "calibration_corpus.txt"


def load_corpus(path: str | Path | None = None, min_passages: int = 1) -> list[str]:
    """Read a calibration corpus: passages separated by blank lines, ``#`` lines are comments.

    Parameters
    ----------
    path : path or None
        ``None``: the shipped corpus. A reader's own UTF-8 text file otherwise.
    min_passages : int

    Returns
    -------
    list of str
        The passages in file order (inner line breaks kept).
    """
    p = corpus_path() if path is None else Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"calibration corpus {str(p)!r} not found (a UTF-8 text file, passages "
                                "separated by blank lines)")
    text = p.read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    passages = [q.strip("\n") for q in re.split(r"\n[ \t]*\n", body) if q.strip()]
    if len(passages) < min_passages:
        raise ValueError(f"calibration corpus {str(p)!r} has {len(passages)} passages; need at least {min_passages}")
    return passages


def evenly_spaced(n_total: int, k: int | None) -> list[int]:
    """``k`` indices spread evenly over ``range(n_total)`` (all of them when ``k`` is None or >= n_total)."""
    if k is None or k >= n_total:
        return list(range(n_total))
    if k <= 0:
        return []
    return sorted(set(np.linspace(0, n_total - 1, k).round().astype(int).tolist()))


def select_passages(texts, n: int | None) -> list:
    """``n`` passages spread evenly over the corpus (all when ``n`` is None), in corpus order."""
    return [texts[i] for i in evenly_spaced(len(texts), n)]


def _span(xs) -> str:
    xs = sorted(xs)
    return f"{xs[0]}–{xs[-1]}" if xs == list(range(xs[0], xs[-1] + 1)) and len(xs) > 2 else ", ".join(map(str, xs))


def describe_run(info, pairs, texts, lengths=None) -> str:
    """Markdown sentence naming the model, the heads and the calibration tokens behind the numbers."""
    s = (f"**Model:** {info.name}, read from `{info.path}` ({info.source}); {info.n_layers} layers x "
         f"{info.n_heads} heads, d_model = {info.d_model}, d_head = {info.d_head}. "
         f"**Heads:** layers {_span({l for l, _ in pairs})} x heads {_span({h for _, h in pairs})} "
         f"({len(pairs)} heads). **Calibration:** {len(texts)} passages")
    if lengths is not None:
        s += f", {int(sum(lengths))} tokens (lengths {min(lengths)}–{max(lengths)})"
    s += "."
    if info.fallback:
        s += f" *Note:* {info.message}."
    return s


def select_heads(n_layers: int, n_heads: int, layers=None, heads=None) -> list[tuple[int, int]]:
    """The (layer, head) pairs of the study.

    Default layers: the first ``min(7, n_layers)`` (BERT-base: layers 0-6 x 12 heads = 84; a
    6-layer MiniLM: all 72 heads). Default heads: all.
    """
    layers = list(range(min(DEFAULT_LAYERS, n_layers))) if layers is None else [int(x) for x in layers]
    heads = list(range(n_heads)) if heads is None else [int(x) for x in heads]
    bad = [x for x in layers if not 0 <= x < n_layers]
    if bad:
        raise ValueError(f"layers {bad} out of range: the model has layers 0..{n_layers - 1}")
    bad = [x for x in heads if not 0 <= x < n_heads]
    if bad:
        raise ValueError(f"heads {bad} out of range: the model has heads 0..{n_heads - 1}")
    return [(l, h) for l in sorted(set(layers)) for h in sorted(set(heads))]


# --------------------------------------------------------------------------------- threads

def _openblas_handles() -> list:
    """``(get, set)`` thread functions of every OpenBLAS loaded in this process (via ctypes)."""
    import ctypes

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    out = []
    for lib in sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", maps))):
        try:
            dll = ctypes.CDLL(lib)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "64_"), ("openblas", "")):
            get = getattr(dll, f"{prefix}_get_num_threads{suffix}", None)
            put = getattr(dll, f"{prefix}_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                out.append((get, put))
                break
    return out


class single_threaded:
    """Context manager: one thread for torch and for numpy's OpenBLAS, restored on exit.

    The study does many small matrix operations; on a busy machine the BLAS and torch thread
    pools spin against each other (measured 4-7x slower on 2 shared cores). Single-threaded
    BLAS is also bitwise reproducible. Where OpenBLAS cannot be found this only limits torch.
    """

    def __enter__(self):
        import torch

        self._torch = torch.get_num_threads()
        torch.set_num_threads(1)
        self._blas = [(get, put, get()) for get, put in _openblas_handles()]
        for _, put, _ in self._blas:
            put(1)
        return self

    def __exit__(self, *exc):
        import torch

        for _, put, n in self._blas:
            put(int(n))
        torch.set_num_threads(self._torch)
        return False


# ------------------------------------------------------------------------------ hidden states

@dataclass
class CalibrationTokens:
    """Layer-input hidden states of the calibration sequences (one forward pass each).

    Attributes
    ----------
    texts : list of str
    lengths : list of int
        Tokens per sequence (with ``[CLS]``/``[SEP]``).
    hidden : dict
        ``layer -> list of ndarray (n_s, d_model)`` (float32, as the model computed them).
    weights : dict
        ``(layer, head) -> dict(W_Q, b_Q, W_K, b_K)`` (float64).
    recompute_error : dict
        ``(layer, head) -> max |A_recomputed - A_model|`` over the sequences (multiplier 1).
    """

    texts: list
    lengths: list
    hidden: dict
    weights: dict
    recompute_error: dict = field(default_factory=dict)

    def queries_keys(self, layer: int, head: int):
        """Per sequence ``(Q_s, K_s)``, float64, shape (n_s, d_head) each."""
        from .bert import head_queries_keys

        W = self.weights[(layer, head)]
        return [head_queries_keys(X, W) for X in self.hidden[layer]]


def collect_states(model, tokenizer, texts, pairs, max_tokens: int = 128) -> CalibrationTokens:
    """One forward pass per text; keep the needed layers' inputs; check every head's recomputation.

    Parameters
    ----------
    model, tokenizer
        From :func:`attnrank_lite.bert.load_model`.
    texts : list of str
    pairs : list of (layer, head)
    max_tokens : int
        Truncation length (tokens, including ``[CLS]`` and ``[SEP]``).
    """
    from .bert import encode, forward_states, head_queries_keys, head_weights

    layers = sorted({l for l, _ in pairs})
    weights = {(l, h): head_weights(model, l, h) for l, h in pairs}
    hidden = {l: [] for l in layers}
    err = {p: 0.0 for p in pairs}
    lengths = []
    # one thread: torch's and OpenBLAS's thread pools otherwise fight over the cores
    # (measured 4-15x slower on a busy 2-core machine); it also keeps the forward pass reproducible
    with single_threaded():
        for text in progress(texts, desc="forward passes"):
            enc = encode(tokenizer, text, max_tokens)
            hs, att, mask = forward_states(model, enc, output_attentions=True)
            lengths.append(int(mask.sum()))
            for l in layers:
                hidden[l].append(hs[l])
            for (l, h) in pairs:
                Q, K = head_queries_keys(hs[l], weights[(l, h)])
                A = softmax_attention(Q, K, beta=1.0 / np.sqrt(Q.shape[1]))
                err[(l, h)] = max(err[(l, h)], float(np.abs(A - att[l][h]).max()))
    return CalibrationTokens(list(texts), lengths, hidden, weights, err)


# ---------------------------------------------------------------------- whitened geometry

@dataclass
class HeadGeometry:
    r"""Temperature-independent interaction geometry of one head on the calibration set.

    Attributes
    ----------
    d_head : int
    visible_dim : int
        ``head_visible_dimension`` from the weights, keys ranging over the calibration states.
    visible_dim_calib : int
        Numerical rank of the pooled logit matrix :math:`G = Q K_c^\top` (``rtol``).
    sigma : ndarray, shape (d_head,)
        Singular values of ``G`` (= of ``C``), decreasing.
    lev_q, lev_k : float
        :math:`\max_i |u_i|`, :math:`\max_j |v_j|` (square roots of the largest leverage scores).
    omega : ndarray, shape (d_head + 1,)
        :math:`\max_i \Omega_{s,i}`: largest measured logit oscillation at :math:`\beta = 1` after
        truncation to rank ``s = 0..d_head`` (``omega[d_head] = 0``).
    a, b : list of ndarray, each (n_s, d_head)
        Per sequence, rotated whitened coordinates :math:`u_i^\top W` and :math:`v_j^\top Z` with
        :math:`C = W \operatorname{diag}(\sigma) Z^\top`: logits :math:`\beta\, a\, \mathrm{diag}(\sigma)\, b^\top`.
    """

    d_head: int
    visible_dim: int
    visible_dim_calib: int
    sigma: np.ndarray
    lev_q: float
    lev_k: float
    omega: np.ndarray
    a: list
    b: list


def _range_basis(X: np.ndarray, rtol: float):
    """Thin SVD of ``X`` restricted to singular values above ``rtol * max``: (U, s, Vt)."""
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    keep = s > rtol * s.max() if s.size and s.max() > 0 else np.zeros(s.size, bool)
    return U[:, keep], s[keep], Vt[keep]


def head_geometry(qk, weights: dict | None = None, key_states=None, rtol: float = 1e-10) -> HeadGeometry:
    r"""Calibration-whitened interaction geometry of one head (see the module docstring).

    Parameters
    ----------
    qk : list of (Q_s, K_s)
        Per calibration sequence, queries and keys of shape (n_s, d_head) (biases included).
    weights : dict, optional
        ``W_Q, b_Q, W_K, b_K`` for the weight-based visible dimension.
    key_states : ndarray, shape (N, d_model), optional
        Pooled layer-input states (where keys vary) for that visible dimension.
    rtol : float
        Relative threshold of the numerical ranks.

    Returns
    -------
    HeadGeometry
    """
    if not qk:
        raise ValueError("need at least one calibration sequence")
    d = qk[0][0].shape[1]
    Q = np.concatenate([q for q, _ in qk])
    Kc = np.concatenate([k - k.mean(axis=0, keepdims=True) for _, k in qk])
    Uq, sq, Vqt = _range_basis(Q, rtol)
    Uk, sk, Vkt = _range_basis(Kc, rtol)
    C = (sq[:, None] * Vqt) @ (Vkt.T * sk[None, :])
    W, sig, Zt = np.linalg.svd(C, full_matrices=True)
    sigma = np.zeros(d)
    sigma[:sig.size] = sig
    vis_calib = int(np.count_nonzero(sig > rtol * sig.max())) if sig.size and sig.max() > 0 else 0
    a_all = Uq @ W  # (N, kq)
    b_all = Uk @ Zt.T  # (N, kk)
    k = min(a_all.shape[1], b_all.shape[1], sig.size)
    lev_q = float(np.linalg.norm(Uq, axis=1).max())
    lev_k = float(np.linalg.norm(Uk, axis=1).max())
    # split back per sequence and measure oscillations of the truncation residual, all ranks at once
    bounds = np.cumsum([0] + [q.shape[0] for q, _ in qk])
    a = [a_all[bounds[t]:bounds[t + 1], :k] for t in range(len(qk))]
    b = [b_all[bounds[t]:bounds[t + 1], :k] for t in range(len(qk))]
    omega = np.zeros(d + 1)
    for at, bt in zip(a, b):
        delta = np.zeros((at.shape[0], bt.shape[0]))
        for s in range(k - 1, -1, -1):  # delta_s = sum_{l >= s} sigma_l a_l b_l^T
            delta += sig[s] * np.outer(at[:, s], bt[:, s])
            osc = float((delta.max(axis=1) - delta.min(axis=1)).max())
            omega[s] = max(omega[s], osc)
    vis = (head_visible_dimension(weights["W_Q"], weights["b_Q"], weights["W_K"], weights["b_K"],
                                  key_states=key_states, rtol=rtol) if weights is not None else vis_calib)
    return HeadGeometry(d, vis, vis_calib, sigma, lev_q, lev_k, omega, a, b)


def eta_bound(geom: HeadGeometry, beta: float) -> np.ndarray:
    r""":math:`\eta_s = \beta\,\sigma_{s+1}(G)\max_i|u_i|\max_j|v_j|` for ``s = 0..d_head`` (shape (d_head+1,))."""
    sig = np.append(geom.sigma, 0.0)
    return float(beta) * sig * geom.lev_q * geom.lev_k


def eta_osc(geom: HeadGeometry, beta: float) -> np.ndarray:
    r"""Lemma 5.1 on the measured oscillations: :math:`2\tanh(\beta\max_i\Omega_{s,i}/4)`, ``s = 0..d_head``."""
    return 2.0 * np.tanh(float(beta) * geom.omega / 4.0)


def tolerance_dims(geom: HeadGeometry, beta: float, tau: float) -> tuple[int, int]:
    r"""``(r(tau), r_osc(tau))``: least truncation ranks with certified output error ``<= tau``."""
    r_bound = int(tolerance_dimension(geom.sigma, tau, scale=float(beta) * geom.lev_q * geom.lev_k))
    e = eta_osc(geom, beta)
    r_osc = int(np.flatnonzero(e <= tau)[0])  # e[d_head] = 0, so this exists
    return r_bound, min(r_osc, r_bound)


def truncated_coordinates(geom: HeadGeometry, seq: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Visible coordinates of the rank-``s`` truncated head on sequence ``seq``.

    Returns ``Qv, Kv`` of shape (n, s) with :math:`\beta Q_v K_v^\top = \beta\, u_i^\top C_s v_j`
    (balanced: both factors carry :math:`\sigma^{1/2}`).
    """
    root = np.sqrt(geom.sigma[:s])
    return geom.a[seq][:, :s] * root, geom.b[seq][:, :s] * root


# -------------------------------------------------------------------------------- the study

def study_head(layer: int, head: int, qk, geom: HeadGeometry, multipliers, eps: float, tau: float,
               bracket_seqs, max_degree: int = 64):
    """All head–temperature rows of one head, and its per-sequence bracket rows.

    For each multiplier ``m`` (``beta = m / sqrt(d_head)``): the tolerance dimensions, rank
    brackets of ``A = rowsoftmax(beta Q K^T)`` at ``eps`` on the sequences ``bracket_seqs``
    (each verified), and a polynomial certificate of the rank-``r_osc(tau)`` truncation at
    ``eps - tau`` on the same sequences, verified against the **true** ``A`` at ``eps``
    (so ``rank_eps(A) <= C(r_osc + D, D)`` with ``D`` the largest degree over the sequences).

    Returns
    -------
    rows : list of dict
    seq_rows : list of dict
    """
    d = geom.d_head
    rows, seq_rows = [], []
    for mult in multipliers:
        beta = float(mult) / np.sqrt(d)
        r_b, r_o = tolerance_dims(geom, beta, tau)
        lows, ups, ok, degs, poly_ok = [], [], True, [], True
        for t in bracket_seqs:
            Q, K = qk[t]
            A = softmax_attention(Q, K, beta=beta)
            br = rank_bracket(A, eps)
            v = br.verify(A, eps)
            ok &= v
            lows.append(br.lower)
            ups.append(br.upper)
            Qv, Kv = truncated_coordinates(geom, t, r_o)
            cert = polynomial_certificate(Qv, Kv, beta, eps - tau, max_degree=max_degree)
            pv = cert is not None and cert.verify(A, eps)
            poly_ok &= bool(pv)
            degs.append(cert.degree if cert is not None else -1)
            seq_rows.append({"layer": layer, "head": head, "multiplier": float(mult), "sequence": int(t),
                             "n_tokens": int(A.shape[0]), "lower": br.lower, "upper": br.upper,
                             "lower_kind": br.lower_kind, "verified": bool(v),
                             "poly_degree": degs[-1], "poly_verified": bool(pv)})
        found = bool(degs) and min(degs) >= 0
        D = max(degs) if found else -1
        eb = eta_bound(geom, beta)
        eo = eta_osc(geom, beta)
        rows.append({
            "layer": layer, "head": head, "multiplier": float(mult), "beta": beta, "d_head": d,
            "visible_dim": geom.visible_dim, "visible_dim_calib": geom.visible_dim_calib,
            "r_tau": r_b, "r_osc_tau": r_o,
            "reduction": 1.0 - r_b / d, "reduction_osc": 1.0 - r_o / d,
            "eta_at_r": float(eb[r_b]), "eta_osc_at_r": float(eo[r_o]),
            "n_bracketed": len(lows),
            "lower_mean": float(np.mean(lows)) if lows else np.nan,
            "upper_mean": float(np.mean(ups)) if ups else np.nan,
            "lower_max": int(max(lows)) if lows else -1,
            "upper_max": int(max(ups)) if ups else -1,
            "brackets_verified": bool(ok),
            "poly_degree": D,
            "poly_count": comb(r_o + D, D) if found else np.nan,
            "log10_poly_count": float(np.log10(comb(r_o + D, D))) if found else np.inf,
            "poly_verified": bool(poly_ok and found),
        })
    return rows, seq_rows


def tau_curve_rows(layer: int, head: int, geom: HeadGeometry, multipliers, tau_values) -> list:
    """``r(tau)`` and ``r_osc(tau)`` for every multiplier and tolerance (no brackets needed)."""
    out = []
    for mult in multipliers:
        beta = float(mult) / np.sqrt(geom.d_head)
        for tau in tau_values:
            r_b, r_o = tolerance_dims(geom, beta, tau)
            out.append({"layer": layer, "head": head, "multiplier": float(mult), "tau": float(tau),
                        "r_tau": r_b, "r_osc_tau": r_o, "reduction": 1 - r_b / geom.d_head,
                        "reduction_osc": 1 - r_o / geom.d_head})
    return out


def run_study(model, tokenizer, info, texts, layers=None, heads=None, multipliers=(0.25, 0.5, 1, 2, 4),
              eps: float = 0.25, tau: float = 0.1, bracket_sequences: int | None = None,
              max_tokens: int = 128, max_degree: int = 64, rtol: float = 1e-10,
              tau_values=(0.02, 0.05, 0.1, 0.2, 0.5, 1.0)):
    """The whole calibration study.

    Parameters
    ----------
    model, tokenizer, info
        From :func:`attnrank_lite.bert.load_model`.
    texts : list of str
        Calibration passages (one sequence each, truncated to ``max_tokens``).
    layers, heads : list of int or None
        See :func:`select_heads`.
    multipliers : sequence of float
        Inverse-temperature multipliers of the trained scale ``1/sqrt(d_head)``.
    eps : float
        Error level of the rank brackets and of the polynomial certificates.
    tau : float
        Output tolerance of the interaction truncation (``0 < tau < eps``).
    bracket_sequences : int or None
        Rank brackets and polynomial certificates on this many evenly spaced sequences per
        setting (``None``: all). The tolerance dimensions always use every sequence.
    tau_values : sequence of float
        Tolerances of the ``r(tau)`` curves.

    Returns
    -------
    dict
        ``settings`` (DataFrame, one row per head–temperature setting), ``sequences`` (one row per
        bracketed sequence and setting), ``heads`` (one row per head: singular values, leverage,
        recomputation error), ``curves`` (``r(tau)`` per head, multiplier and tolerance),
        ``tokens`` (:class:`CalibrationTokens`), ``bracket_seqs`` (indices).
    """
    if not 0 < tau < eps:
        raise ValueError(f"need 0 < tau < eps (the polynomial certificate gets eps - tau); got tau={tau}, eps={eps}")
    pairs = select_heads(info.n_layers, info.n_heads, layers, heads)
    toks = collect_states(model, tokenizer, texts, pairs, max_tokens=max_tokens)
    bseq = evenly_spaced(len(texts), bracket_sequences)
    pooled = {l: np.concatenate(toks.hidden[l]).astype(np.float64) for l in toks.hidden}
    rows, seq_rows, head_rows, curves = [], [], [], []
    for (l, h) in progress(pairs, desc="heads"):
        with single_threaded():
            qk = toks.queries_keys(l, h)
            geom = head_geometry(qk, toks.weights[(l, h)], key_states=pooled[l], rtol=rtol)
            r, sr = study_head(l, h, qk, geom, multipliers, eps, tau, bseq, max_degree)
        rows += r
        seq_rows += sr
        curves += tau_curve_rows(l, h, geom, multipliers, tau_values)
        head_rows.append({"layer": l, "head": h, "d_head": geom.d_head, "visible_dim": geom.visible_dim,
                          "visible_dim_calib": geom.visible_dim_calib, "lev_q": geom.lev_q, "lev_k": geom.lev_k,
                          "recompute_error": toks.recompute_error[(l, h)],
                          **{f"sigma_{i + 1}": float(s) for i, s in enumerate(geom.sigma)}})
    return {"settings": pd.DataFrame(rows), "sequences": pd.DataFrame(seq_rows),
            "heads": pd.DataFrame(head_rows), "curves": pd.DataFrame(curves), "tokens": toks,
            "bracket_seqs": bseq}


# ---------------------------------------------------------------------------- association

def _rank(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank); ``inf`` ranks last."""
    from scipy.stats import rankdata

    return rankdata(x, method="average")


def spearman(x, y) -> float:
    r"""Spearman's rank correlation (Pearson correlation of average ranks); NaN when a side is constant."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("x and y must be 1-D arrays of equal length")
    rx, ry = _rank(x), _rank(y)
    rx = rx - rx.mean()
    ry = ry - ry.mean()
    den = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / den) if den > 0 else float("nan")


def spearman_bootstrap(x, y, groups=None, n_boot: int = 2000, seed: int = 0, level: float = 0.95):
    """Spearman correlation with a percentile bootstrap interval.

    Parameters
    ----------
    x, y : array_like, shape (k,)
    groups : array_like, shape (k,), optional
        Cluster labels (here: the head). Whole clusters are resampled, so the temperatures of
        one head, which are not independent, stay together.
    n_boot : int
    seed : int
    level : float

    Returns
    -------
    dict
        ``rho``, ``low``, ``high``, ``n`` (points), ``clusters``, ``n_boot`` and ``n_valid``
        (resamples where both sides varied).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    g = np.arange(x.size) if groups is None else np.asarray(groups)
    labels, inv = np.unique(g, return_inverse=True)
    members = [np.flatnonzero(inv == c) for c in range(labels.size)]
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(int(n_boot)):
        pick = rng.integers(0, labels.size, labels.size)
        idx = np.concatenate([members[c] for c in pick])
        rho = spearman(x[idx], y[idx])
        if np.isfinite(rho):
            reps.append(rho)
    alpha = (1 - level) / 2
    lo, hi = (np.quantile(reps, [alpha, 1 - alpha]) if reps else (np.nan, np.nan))
    return {"rho": spearman(x, y), "low": float(lo), "high": float(hi), "n": int(x.size),
            "clusters": int(labels.size), "n_boot": int(n_boot), "n_valid": len(reps)}


def associations(settings: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Spearman associations across head–temperature settings, head-clustered bootstrap intervals.

    Pairs: effective dimension ``r_osc_tau`` and ``r_tau`` against the polynomial certificate
    (``log10_poly_count``) and against the mean upper rank bracket (``upper_mean``); each pooled
    over all multipliers and within each multiplier.
    """
    out = []
    heads = settings["layer"].astype(str) + "/" + settings["head"].astype(str)
    pairs = [("r_osc_tau", "log10_poly_count"), ("r_osc_tau", "upper_mean"),
             ("r_tau", "log10_poly_count"), ("r_tau", "upper_mean")]
    groups = [("all", settings.index)] + [(f"{m:g}", settings.index[settings["multiplier"] == m])
                                           for m in sorted(settings["multiplier"].unique())]
    for x, y in pairs:
        for name, idx in groups:
            sub = settings.loc[idx]
            res = spearman_bootstrap(sub[x].to_numpy(), sub[y].to_numpy(), groups=heads.loc[idx].to_numpy(),
                                     n_boot=n_boot, seed=seed)
            out.append({"x": x, "y": y, "multiplier": name, **res})
    return pd.DataFrame(out)


def summary_by_multiplier(settings: pd.DataFrame) -> pd.DataFrame:
    """Per multiplier: how many settings show a reduction, median/max reductions, brackets, certificates."""
    g = settings.groupby("multiplier")
    return pd.DataFrame({
        "settings": g.size(),
        "with_reduction": g["reduction"].apply(lambda s: int((s > 0).sum())),
        "with_reduction_osc": g["reduction_osc"].apply(lambda s: int((s > 0).sum())),
        "median_reduction": g["reduction"].median(),
        "median_reduction_osc": g["reduction_osc"].median(),
        "max_reduction_osc": g["reduction_osc"].max(),
        "median_r_osc": g["r_osc_tau"].median(),
        "mean_lower": g["lower_mean"].mean(),
        "mean_upper": g["upper_mean"].mean(),
        "poly_found": g["poly_verified"].sum().astype(int),
        "median_log10_poly_count": g["log10_poly_count"].median(),
    }).reset_index()


def verdict(settings: pd.DataFrame, assoc: pd.DataFrame, model_name: str) -> str:
    """Plain-language comparison with the abstract's qualitative claims (Markdown), from the numbers."""
    n = len(settings)
    red = int((settings["reduction_osc"] > 0).sum())
    red_b = int((settings["reduction"] > 0).sum())
    med = float(settings.loc[settings["reduction_osc"] > 0, "reduction_osc"].median()) if red else 0.0
    mults_with = sorted(settings.loc[settings["reduction_osc"] > 0, "multiplier"].unique())
    lines = [f"**On {model_name}:**", ""]
    verdicts = []
    if red == 0:
        lines.append(f"* *Effective-dimension reductions:* **not observed** — no head–temperature setting "
                     f"(of {n}) has r_osc(tau) < d_head.")
    else:
        lines.append(f"* *Effective-dimension reductions:* {red} of {n} head–temperature settings "
                     f"({100 * red / n:.0f}%) have r_osc(tau) < d_head (median reduction among them "
                     f"{100 * med:.0f}%), at multipliers {', '.join(f'{m:g}' for m in mults_with)}; "
                     f"with the cruder SVD bound r(tau), {red_b} of {n}.")
    frac = red / n if n else 0.0
    if red == 0:
        verdicts.append("effective-dimension reductions: **not reproduced**")
    else:
        modest = "modest" if med <= 0.5 else "large"
        spread = "in many settings" if frac >= 0.25 else "in few settings"
        verdicts.append(f"effective-dimension reductions: {modest}, {spread} ({100 * frac:.0f}%) — "
                        + ("**matches**" if modest == "modest" and frac >= 0.25 else "**partly matches**")
                        + (" (measured-oscillation dimension only; the SVD bound certifies none)" if red_b == 0 else ""))
    ok = settings["poly_verified"]
    lines.append(f"* *Finite constructive certificates:* {int(ok.sum())} of {n} settings have a verified "
                 f"polynomial certificate on every bracketed sequence "
                 f"(median count C(r+D, D) = {np.median(settings.loc[ok, 'poly_count']) if ok.any() else float('nan'):.3g}, "
                 f"against sequences of at most {int(settings['upper_max'].max())} certified upper rank).")
    for y, what in (("log10_poly_count", "the polynomial certificate size"), ("upper_mean", "the SVD upper bracket")):
        row = assoc[(assoc["x"] == "r_osc_tau") & (assoc["y"] == y) & (assoc["multiplier"] == "all")]
        if row.empty:
            continue
        r = row.iloc[0]
        if not np.isfinite(r["rho"]):
            word = "undefined (one side constant)"
        elif r["low"] > 0:
            word = "**positive** (interval above 0)"
        elif r["high"] < 0:
            word = "**negative** (interval below 0)"
        else:
            word = "**not distinguishable from zero** (interval contains 0)"
        lines.append(f"* *Association of r_osc(tau) with {what}:* Spearman {r['rho']:.2f}, "
                     f"95% head-bootstrap interval [{r['low']:.2f}, {r['high']:.2f}]: {word}.")
        within = assoc[(assoc["x"] == "r_osc_tau") & (assoc["y"] == y) & (assoc["multiplier"] != "all")]
        parts = []
        for _, w in within.iterrows():
            if not np.isfinite(w["rho"]):
                parts.append(f"{w['multiplier']}: undefined")
            else:
                sign = "+" if w["low"] > 0 else ("-" if w["high"] < 0 else "0")
                parts.append(f"{w['multiplier']}: {w['rho']:.2f} [{w['low']:.2f}, {w['high']:.2f}] ({sign})")
        pos = sum(p.endswith("(+)") for p in parts)
        defined = sum(not p.endswith("undefined") for p in parts)
        if parts:
            lines.append(f"  Within single multipliers (temperature held fixed) it is positive at {pos} of "
                         f"{len(parts)}: " + "; ".join(parts) + ".")
        pooled_pos = bool(np.isfinite(r["rho"]) and r["low"] > 0)
        if not pooled_pos:
            verdicts.append(f"positive association with {what}: **not reproduced**")
        elif defined and pos == defined:
            verdicts.append(f"positive association with {what}: **matches**, also at fixed temperature")
        else:
            verdicts.append(f"positive association with {what}: **matches when pooled over temperatures**, "
                            f"but positive at only {pos} of the {defined} fixed temperatures where it is defined")
    lines += ["", "**Summary against the abstract:** " + "; ".join(verdicts) + "."]
    return "\n".join(lines)
