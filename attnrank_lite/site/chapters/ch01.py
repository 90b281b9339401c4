"""Chapter 1: the max-row-l1 approximation rank."""
from ..memory import dense_need
from ..runtime import Cost
from ..spec import ChapterSpec, Param


def _memory(v):
    """The circle matrix with its full SVD, and the key-split matrices of the spectral contrast."""
    c = max(v["split_factors"])
    yield dense_need(v["n_circle"], v["n_circle"], "n_circle", "the circle attention matrix and its SVD")
    yield dense_need(v["n_circle"], v["n_circle"] * c, "split_factors",
                     f"the circle matrix with {c} copies per key")
    yield dense_need(v["n"], v["n"] * c, "split_factors", f"the identity with {c} copies per key")


def _runtime(v):
    """The work of the costly steps (terms of the run-time model, site/runtime.py)."""
    nc, n, c = v["n_circle"], v["n"], sum(v["split_factors"])
    yield Cost("trials", v["n_trials"] * nc ** 2, "n_trials",
               f"{v['n_trials']:,} random value matrices against the {nc} x {nc} circle matrix")
    yield Cost("svd", nc ** 3 * (len(v["eps_values"]) + 4), "n_circle", f"SVDs and brackets of {nc} circle points")
    yield Cost("split", c * (nc ** 3 + n ** 3), "split_factors", f"brackets of {c} key-split copies")
    yield Cost("exact", n ** 3, "n", "the exact cases")


SPEC = ChapterSpec(
    key="ch01", notebook="01_approximation_rank.ipynb", title="The max-row-l1 approximation rank",
    params=(
        Param("n", 48, "int", "Size of the exact-case matrices (identity, uniform, blocks).", low=2, high=2000),
        Param("blocks", 4, "int", "Number of uniform diagonal blocks (at most n).", low=1, high=2000),
        Param("eps", 0.25, "float", "Error level of the main examples (at least 1e-6: below it float64 "
              "rounding margins keep the exact cases' brackets from closing).", low=1e-6, high=0.999),
        Param("eps_values", [0.05, 0.1, 0.25, 0.5, 0.75, 0.95], "float_list",
              "Error levels of the monotonicity sweep.", low=0.0, high=2.0),
        Param("n_circle", 256, "int", "Points of the equispaced-circle demo instance.", low=8, high=4096),
        Param("beta", 64.0, "float", "Inverse temperature of the circle demo.", low=0.0, high=1e6),
        Param("n_trials", 2000, "int",
              "Random value matrices tried against prop-bounded-outputs.", low=1, high=10**6),
        Param("split_factors", [1, 2, 4, 8, 16, 32, 64], "int_list",
              "Copies per key in the spectral-rank contrast.", low=1, high=256),
        Param("seed", 0, "int", "Random seed.", low=0, high=2**32 - 1),
    ),
    profiles={
        "quick": {"n": 24, "n_circle": 128, "n_trials": 200, "split_factors": [1, 4, 16, 64]},
        "paper": {"n": 200, "n_circle": 1024, "n_trials": 20000},
    },
    constraints=(
        lambda v: None if v["blocks"] <= v["n"] else
        f"parameter 'blocks' must be at most n = {v['n']}; got {v['blocks']}",
    ),
    memory=_memory,
    runtime=_runtime,
    code={  # label -> the functions implementing or checking it (under attnrank_lite.)
        "def-attention": "engine.attention.softmax_attention",
        "def-rank-eps": "engine.norms.row_l1 engine.bracket.rank_bracket",
        "prop-bounded-outputs": "engine.norms.worst_case_values basics.report.bounded_outputs_table "
            "engine.norms.bounded_output_error basics.examples.random_bounded_values_max",
        "prop-cluster-mass": "engine.certificates.ClusterMassCertificate engine.lower.cluster_mass_lower_bound "
            "basics.report.cluster_certificate basics.report.tamper_table",
        "prop-frobenius-tail": "engine.certificates.FrobeniusTailCertificate engine.lower.frobenius_tail_lower_bound "
            "basics.report.eps_sweep_table",
        "prop-exact-cases": "basics.examples.exact_cases basics.report.exact_case_table",
        "prop-invariances": "engine.attention.row_softmax basics.report.invariance_table "
            "engine.bracket_algebra.intersect engine.bracket_algebra.monotone_envelope",
        "prop-multiplicity": "basics.examples.merge_duplicate_keys basics.examples.split_keys "
            "basics.report.multiplicity_table basics.report.spectral_contrast_table",
    },
)
