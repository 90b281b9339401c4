"""Chapter 5: approximate interaction subspaces."""
from ..memory import dense_need
from ..runtime import Cost
from ..spec import ChapterSpec, Param


def _memory(v):
    """The n x n heads and their brackets."""
    yield dense_need(v["n"], v["n"], "n", "a random head's attention matrix and its bracket")


def _runtime(v):
    """The work of the costly steps."""
    yield Cost("heads", len(v["decays"]) * len(v["betas"]) * (v["d"] + 1) * v["n"] ** 2, "n",
               f"truncation residuals of {len(v['decays'])} heads of {v['n']} tokens")
    yield Cost("pairs", v["n_pairs"], "n_pairs", f"{v['n_pairs']:,} random logit pairs")
    yield Cost("tradeoff", v["n"] ** 3, "n", "the tau trade-off")


SPEC = ChapterSpec(
    key="ch05", notebook="05_interaction_subspaces.ipynb", title="Approximate interaction subspaces",
    params=(
        Param("eps", 0.25, "float", "Total error level of the certificates.", low=0.01, high=0.9),
        Param("d", 8, "int", "Dimension of queries, keys and the interaction matrix M.", low=2, high=64),
        Param("n", 200, "int", "Queries (and keys) of each random head.", low=10, high=2000),
        Param("decays", [0.3, 0.6, 0.85], "float_list",
              "Spectral decay rho of M: sigma_l = rho^(l-1).", low=0.01, high=1.0),
        Param("betas", [1.0, 4.0, 16.0], "float_list", "Inverse temperatures.", low=0.0, high=1e4),
        Param("key_offset", 1.0, "float", "Constant key direction added to all keys (invisible).",
              low=0.0, high=100.0),
        Param("n_pairs", 20000, "int",
              "Random logit pairs in the lem-softmax-perturbation plot.", low=100, high=10**6),
        Param("tradeoff_decay", 0.3, "float", "Decay of the head in the tau trade-off.", low=0.01, high=1.0),
        Param("tradeoff_beta", 4.0, "float", "Inverse temperature of the tau trade-off.", low=0.0, high=1e4),
        Param("seed", 0, "int", "Random seed.", low=0, high=2**32 - 1),
    ),
    profiles={
        "quick": {"n": 100, "n_pairs": 5000, "decays": [0.3, 0.85], "betas": [1.0, 8.0]},
        "paper": {"n": 1000, "d": 16, "n_pairs": 200000, "betas": [1.0, 4.0, 16.0, 64.0]},
    },
    code={  # label -> the functions implementing or checking it (under attnrank_lite.)
        "lem-softmax-perturbation": "engine.perturbation.oscillation_bound "
            "engine.perturbation.softmax_perturbation_bound quotient.constructions.two_level_example "
            "quotient.report.lemma_checks",
        "prop-truncation-residual": "quotient.interaction.residual_bounds quotient.interaction.truncate_interaction "
            "quotient.report.truncation_table",
        "def-tolerance-dimension": "quotient.interaction.tolerance_dimension quotient.report.tolerance_curves",
        "thm-interaction-subspaces": "quotient.interaction.truncation_tradeoff",
    },
    memory=_memory,
    runtime=_runtime,
)
