"""Chapter 6: the BERT calibration on real pretrained weights.

Its declaration (parameters, profiles, code map) is ``ch06.toml``."""
from ..memory import BRACKET_COPIES, MemoryNeed
from ..runtime import Cost
from ..spec import chapter_spec


def _memory(v):
    """The model, the per-head queries and keys of every sequence, and one head's brackets."""
    large = "large" in str(v["model"]).lower()
    yield MemoryNeed((1.4 if large else 0.5) * 2 ** 30, "model", "the model's weights in float32")
    seqs, t = v["n_sequences"] or 100, v["max_tokens"]
    yield MemoryNeed(2.0 * 8 * 64 * t * seqs * _heads(v) + 8.0 * BRACKET_COPIES * t * t, "n_sequences",
                     f"queries and keys of {_heads(v)} heads for {seqs} sequences of {t} tokens")


#: passages of the shipped calibration corpus
CORPUS_PASSAGES = 79


def _inputs(v):
    """The ``corpus`` file when given and the local folder of ``model`` (the shipped ones are in the package)."""
    from pathlib import Path

    from ...calibration.bert import find_local_model  # here: chapter specs load at every start

    if v["corpus"] is not None:
        yield Path(v["corpus"]).expanduser()
    found = None if v["model"] == "bundled-minilm" else find_local_model(str(v["model"]))
    if found is not None:
        yield found[0]


def _heads(v):
    """Heads of the study: the selected layers (the first 7) times the selected heads (all)."""
    large = "large" in str(v["model"]).lower()
    layers = len(v["layers"]) if v["layers"] else 7
    return layers * (len(v["heads"]) if v["heads"] else (16 if large else 12))


def _runtime(v):
    """The work of the costly steps (a large model counted as twice a base one)."""
    seqs = v["n_sequences"] or CORPUS_PASSAGES
    bseq = min(v["bracket_sequences"] or seqs, seqs)
    t = v["max_tokens"] / 128
    large = 2 if "large" in str(v["model"]).lower() else 1
    yield Cost("model", large, "model", "loading the model")
    yield Cost("forward", large * seqs * t, "n_sequences", f"the model on {seqs} passages")
    yield Cost("brackets", _heads(v) * len(v["multipliers"]) * bseq * t ** 3,
               "bracket_sequences" if v["bracket_sequences"] else "n_sequences",
               f"{_heads(v) * len(v['multipliers']) * bseq:,} brackets and polynomial certificates")
    yield Cost("bootstrap", v["n_boot"] * _heads(v) * len(v["multipliers"]), "n_boot",
               f"{v['n_boot']:,} bootstrap resamples")


SPEC = chapter_spec(
    __file__,
    constraints=(
        lambda v: None if v["tau"] < v["eps"] else
        f"parameter 'tau' must be below eps = {v['eps']} (the polynomial certificate gets eps - tau); got {v['tau']}",
    ),
    memory=_memory,
    runtime=_runtime,
    inputs=_inputs,
)
