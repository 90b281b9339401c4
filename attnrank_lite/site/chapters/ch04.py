"""Chapter 4: the row-softmax quotient and the r/2 law."""
import itertools

from ..memory import ball_grid_points, dense_need
from ..runtime import Cost
from ..spec import ChapterSpec, Param


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


SPEC = ChapterSpec(
    key="ch04", notebook="04_quotient_and_r_half_law.ipynb", title="The row-softmax quotient and the r/2 law",
    params=(
        Param("eps", 0.25, "float", "Error level of every bracket and certificate.", low=0.01, high=0.9),
        Param("extra", 2, "int", "Nuisance (row-scalar) dimensions added around the visible ones.", low=1, high=16),
        Param("betas_r1", [16.0, 64.0, 256.0, 1024.0, 4096.0], "float_list",
              "Inverse temperatures of the r = 1 Gaussian-ball sweep.", low=1.0, high=16384.0),
        Param("betas_r2", [16.0, 32.0, 64.0, 128.0, 256.0, 512.0], "float_list",
              "Inverse temperatures of the r = 2 Gaussian-ball sweep.", low=1.0, high=1024.0),
        Param("betas_r3", [16.0, 24.0, 32.0, 48.0, 64.0, 96.0], "float_list",
              "Inverse temperatures of the r = 3 Gaussian-ball sweep (beta = 128: 6043 grid points).",
              low=1.0, high=128.0),
        Param("n_random", 500, "int", "Points of the random (uniform-ball) instances.", low=20, high=2000),
        Param("betas_random", [4.0, 8.0, 16.0, 32.0, 64.0], "float_list",
              "Inverse temperatures of the random instances.", low=0.5, high=4096.0),
        Param("poly_n", 300, "int", "Points of the polynomial-certificate instances.", low=20, high=2000),
        Param("poly_betas", [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0], "float_list",
              "Inverse temperatures of the polynomial certificates.", low=0.0, high=16384.0),
        Param("degree_beta", 64.0, "float", "Inverse temperature of the degree-against-m table.",
              low=1.0, high=4096.0),
        Param("degree_ms", [10, 100, 1000, 10000], "int_list",
              "Key counts of the degree-against-m table.", low=2, high=100000),
        Param("sharp_poly_betas", [16.0, 64.0, 256.0], "float_list",
              "Inverse temperatures of the Gaussian-ball (r = 1) degree table.", low=1.0, high=4096.0),
        Param("fit_points", 4, "int", "Slopes are fitted on the last fit_points values of each sweep.",
              low=3, high=64),
        Param("seed", 0, "int", "Random seed.", low=0, high=2**32 - 1),
    ),
    profiles={
        "quick": {"betas_r1": [16.0, 64.0, 256.0, 1024.0], "betas_r2": [16.0, 32.0, 64.0, 128.0],
                  "betas_r3": [8.0, 16.0, 24.0, 32.0], "n_random": 200, "betas_random": [4.0, 8.0, 16.0, 32.0],
                  "poly_n": 120, "poly_betas": [1.0, 4.0, 16.0, 64.0, 256.0],
                  "degree_ms": [10, 100, 1000], "sharp_poly_betas": [16.0, 64.0]},
        "paper": {"betas_r1": [16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0],
                  "betas_r2": [16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0],
                  "betas_r3": [16.0, 24.0, 32.0, 48.0, 64.0, 96.0, 128.0], "n_random": 1500,
                  "betas_random": [4.0, 8.0, 16.0, 32.0, 64.0, 128.0], "poly_n": 1000,
                  "poly_betas": [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0],
                  "degree_ms": [10, 100, 1000, 10000, 30000]},
    },
    constraints=(_sorted_betas,),
    code={  # label -> the functions implementing or checking it (under attnrank_lite.)
        "prop-quotient": "quotient.interaction.row_scalar_quotient",
        "def-visible-dimension": "quotient.interaction.visible_dimension quotient.interaction.double_centre "
            "quotient.interaction.visible_coordinates",
        "prop-head-visible": "quotient.interaction.head_visible_dimension quotient.report.head_quotient",
        "thm-r-half-law": "quotient.constructions.sharp_hidden_instance laws.sweeps.bracket_sweep "
            "laws.verdicts.judged_slope_table quotient.report.r_half_sweeps quotient.report.r_half_slopes "
            "quotient.report.r_half_widths",
        "prop-polynomial-certificate": "quotient.polynomial.polynomial_certificate quotient.polynomial.degree_table "
            "quotient.report.polynomial_table quotient.report.polynomial_numbers",
    },
    memory=_memory,
    runtime=_runtime,
)
