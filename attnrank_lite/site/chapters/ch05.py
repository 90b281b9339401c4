"""Chapter 5: approximate interaction subspaces; its declaration (parameters, profiles, code map) is ``ch05.toml``."""
from ..memory import dense_need
from ..runtime import Cost
from ..spec import chapter_spec


def _memory(v):
    """The n x n heads and their brackets."""
    yield dense_need(v["n"], v["n"], "n", "a random head's attention matrix and its bracket")


def _runtime(v):
    """The work of the costly steps."""
    yield Cost("heads", len(v["decays"]) * len(v["betas"]) * (v["d"] + 1) * v["n"] ** 2, "n",
               f"truncation residuals of {len(v['decays'])} heads of {v['n']} tokens")
    yield Cost("pairs", v["n_pairs"], "n_pairs", f"{v['n_pairs']:,} random logit pairs")
    yield Cost("tradeoff", v["n"] ** 3, "n", "the tau trade-off")


SPEC = chapter_spec(
    __file__,
    memory=_memory,
    runtime=_runtime,
)
