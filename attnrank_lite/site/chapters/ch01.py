"""Chapter 1: the max-row-l1 approximation rank; its declaration (parameters, profiles, code map) is ``ch01.toml``."""
from ..memory import dense_need
from ..runtime import Cost
from ..spec import chapter_spec


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


SPEC = chapter_spec(
    __file__,
    constraints=(
        lambda v: None if v["blocks"] <= v["n"] else
        f"parameter 'blocks' must be at most n = {v['n']}; got {v['blocks']}",
    ),
    memory=_memory,
    runtime=_runtime,
)
