"""Chapter 3: full-ball geometry, Theta(beta^{d/2}).

Its declaration (parameters, profiles, code map) is ``ch03.toml``."""
from ..memory import ball_grid_points, dense_need
from ..runtime import Cost
from ..spec import chapter_spec


def _memory(v):
    """The Gaussian-ball grid's attention matrix at the largest beta of each sweep."""
    b = max(v["betas"])
    n = ball_grid_points(v["d"], b, v["spacing_factor"])
    yield dense_need(n, n, "betas", f"the d = {v['d']} ball grid at beta = {b:g}")
    yield dense_need(v["circle_n"], v["circle_n"], "circle_n", "the circle attention matrix")
    if v["include_d3"]:
        b3 = max(v["d3_betas"])
        n3 = ball_grid_points(3, b3, v["spacing_factor"])
        yield dense_need(n3, n3, "d3_betas", f"the d = 3 ball grid at beta = {b3:g}")


def _runtime(v):
    """The work of the costly steps: dense brackets, the cube of each grid's size per beta and eps."""
    ne, s = len(v["eps_values"]), v["spacing_factor"]
    for d, name in ((v["d"], "betas"), (3, "d3_betas")):
        if name == "betas" or v["include_d3"]:
            yield Cost("ball", ne * sum(ball_grid_points(d, b, s) ** 3 for b in v[name]), name,
                       f"dense brackets of the d = {d} ball grids up to beta = {max(v[name]):g}")
    yield Cost("circle", ne * len(v["betas"]) * v["circle_n"] ** 3, "circle_n",
               f"dense brackets of {v['circle_n']} circle points")
    yield Cost("tables", len(v["neff_betas"]), "neff_betas", "the token-count and rounding tables")


SPEC = chapter_spec(
    __file__,
    constraints=(
        lambda v: None if v["spacing_factor"] >= 0.5 or max(v["betas"]) <= 1024 else
        "parameters 'spacing_factor' < 0.5 with 'betas' above 1024 make grids too large; raise spacing_factor",
    ),
    memory=_memory,
    runtime=_runtime,
)
