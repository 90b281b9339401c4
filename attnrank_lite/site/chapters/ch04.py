"""Chapter 4: the row-softmax quotient and the r/2 law.

Its declaration (parameters, profiles, code map) is ``ch04.toml``."""
import itertools

from ..memory import ball_grid_points, dense_need
from ..runtime import Cost
from ..spec import chapter_spec


def _sorted_betas(v):
    for name in ("betas_r1", "betas_r2", "betas_r3", "betas_random", "poly_betas", "degree_ms", "sharp_poly_betas"):
        if any(x >= y for x, y in itertools.pairwise(v[name])):
            return f"parameter {name!r} must be strictly increasing; got {v[name]}"
    for name in ("betas_r1", "betas_r2", "betas_r3", "betas_random", "poly_betas"):
        if len(v[name]) < v["fit_points"]:
            return f"parameter {name!r} needs at least fit_points = {v['fit_points']} values; got {len(v[name])}"
    return None


def _memory(v):
    """The hidden Gaussian-ball instances (grid spacing 1/(2 sqrt(beta))) and the random ones."""
    for r in (1, 2, 3):
        b = max(v[f"betas_r{r}"])
        n = ball_grid_points(r, b, 0.5)
        yield dense_need(n, n, f"betas_r{r}", f"the r = {r} ball instance at beta = {b:g}")
    for name in ("n_random", "poly_n"):
        yield dense_need(v[name], v[name], name, "an attention matrix and its bracket")
    # the degree table: 50 queries against m keys, and a degree-D (<= 256) polynomial's m x (D + 1) values
    yield dense_need(max(v["degree_ms"]), 257 + 50, "degree_ms", "the degree table's keys", copies=3)


def _runtime(v):
    """The work of the costly steps: dense brackets of the hidden ball instances and of the
    random ones (the cube of their sizes), polynomial certificates (n^2 per beta)."""
    sharp = {f"betas_r{r}": sum(ball_grid_points(r, b, 0.5) ** 3 for b in v[f"betas_r{r}"]) for r in (1, 2, 3)}
    sharp["n_random"] = 3 * len(v["betas_random"]) * v["n_random"] ** 3
    yield Cost("law", sum(sharp.values()), max(sharp, key=sharp.get), "the r/2-law brackets")
    yield Cost("poly", len(v["poly_betas"]) * v["poly_n"] ** 2, "poly_n",
               f"polynomial certificates on {v['poly_n']} points")
    yield Cost("degree", sum(v["degree_ms"]), "degree_ms", "the degree-against-m table")
    yield Cost("tables", len(v["sharp_poly_betas"]), "sharp_poly_betas", "the Gaussian-ball degree table")


SPEC = chapter_spec(
    __file__,
    constraints=(_sorted_betas,),
    memory=_memory,
    runtime=_runtime,
)
