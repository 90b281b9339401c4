"""Chapter 6: the BERT calibration on real pretrained weights."""
from ..memory import BRACKET_COPIES, MemoryNeed
from ..runtime import Cost
from ..spec import ChapterSpec, Param


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


SPEC = ChapterSpec(
    key="ch06", notebook="06_bert_calibration.ipynb", title="The BERT calibration",
    params=(
        Param("model", "bert-base-uncased", "str",
              "Model folder or Hugging Face id, looked up locally only (folder, then the local HF cache); "
              "'bundled-minilm' selects the bundled MiniLM-L6-H384 directly."),
        Param("allow_fallback", True, "bool",
              "Use the bundled MiniLM-L6-H384 when 'model' is not found locally (false: stop with a message)."),
        Param("corpus", None, "str",
              "Calibration text file (passages separated by blank lines); None: the shipped corpus.",
              nullable=True),
        Param("n_sequences", None, "int", "Use this many passages, evenly spaced over the corpus (None: all).",
              low=2, high=100000, nullable=True),
        Param("max_tokens", 128, "int",
              "Tokens per sequence, [CLS] and [SEP] included (longer passages are truncated).",
              low=8, high=512),
        Param("layers", None, "int_list",
              "Layers of the head set (None: the first 7 layers, all when the model has fewer).",
              low=0, high=63, nullable=True),
        Param("heads", None, "int_list", "Heads of every selected layer (None: all).", low=0, high=127, nullable=True),
        Param("multipliers", [0.25, 0.5, 1.0, 2.0, 4.0], "float_list",
              "Inverse-temperature multipliers of the trained logit scale 1/sqrt(d_head).", low=0.01, high=100.0,
              max_len=16),
        Param("eps", 0.25, "float", "Error level of the rank brackets and certificates.", low=0.01, high=0.99),
        Param("tau", 0.1, "float", "Output tolerance of the interaction truncation (must be below eps).",
              low=0.001, high=0.98),
        Param("tau_values", [0.02, 0.05, 0.1, 0.2, 0.5, 1.0], "float_list", "Tolerances of the r(tau) curves.",
              low=0.001, high=2.0, max_len=32),
        Param("bracket_sequences", 12, "int",
              "Rank brackets and polynomial certificates on this many evenly spaced sequences (None: every one).",
              low=1, high=100000, nullable=True),
        Param("max_degree", 64, "int",
              "Largest polynomial degree tried by the polynomial certificates.", low=1, high=256),
        Param("n_boot", 2000, "int",
              ("Bootstrap resamples (whole heads) for the Spearman intervals; an interval is reported only "
               "when at least 95% of them define the correlation."), low=100, high=100000),
        Param("seed", 0, "int", "Random seed of the bootstrap.", low=0, high=2**32 - 1),
    ),
    profiles={
        "quick": {"n_sequences": 12, "layers": [0, 5], "multipliers": [0.25, 1.0, 4.0], "n_boot": 300},
        "paper": {"model": "bert-base-uncased", "allow_fallback": False, "n_boot": 5000, "bracket_sequences": None},
    },
    constraints=(
        lambda v: None if v["tau"] < v["eps"] else
        f"parameter 'tau' must be below eps = {v['eps']} (the polynomial certificate gets eps - tau); got {v['tau']}",
    ),
    memory=_memory,
    runtime=_runtime,
    inputs=_inputs,
    code={  # label -> the functions implementing or checking it (under attnrank_lite.)
        "claim-bert-calibration": "calibration.study.run_study calibration.report.associations "
            "calibration.report.spearman_bootstrap calibration.report.verdict",
        "def-whitened-effective-dimension": "calibration.whitened.head_geometry calibration.whitened.eta_bound "
            "calibration.whitened.eta_osc calibration.whitened.tolerance_dims",
        "prop-whitened-truncation": "calibration.whitened.truncated_coordinates engine.perturbation.oscillation_bound "
            "calibration.whitened.eta_osc calibration.whitened.eta_bound",
        "prop-certificate-chain": "calibration.study.study_head quotient.polynomial.polynomial_certificate "
            "quotient.polynomial.monomial_count",
    },
)
