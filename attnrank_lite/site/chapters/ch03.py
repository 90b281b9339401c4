"""Chapter 3: full-ball geometry, Theta(beta^{d/2})."""
from ..memory import ball_grid_points, dense_need
from ..runtime import Cost
from ..spec import ChapterSpec, Param


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


SPEC = ChapterSpec(
    key="ch03", notebook="03_ball_law.ipynb", title="Full-ball geometry: one radial degree, the d/2 law",
    params=(
        Param("d", 2, "int", "Dimension of the Gaussian ball of the main sweep.", low=1, high=3),
        Param("betas", [64.0, 128.0, 256.0, 512.0, 1024.0], "float_list", "Inverse temperatures of the ball sweep.",
              low=1.0, high=1e5, min_len=2, max_len=16),
        Param("spacing_factor", 1.0, "float", "Grid spacing in units of 1/sqrt(beta).", low=0.25, high=2.0),
        Param("eps_values", [0.1, 0.25], "float_list", "Error levels.", low=0.01, high=0.99, max_len=6),
        Param("circle_n", 1024, "int", "Circle size for the sphere-versus-ball comparison.", low=16, high=8192),
        Param("neff_betas", [8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0], "float_list",
              "Inverse temperatures of the n_eff table.", low=1.0, high=1e5, min_len=2, max_len=32),
        Param("d3_betas", [8.0], "float_list", "Inverse temperatures of a d = 3 ball sweep (paper profile).",
              low=1.0, high=1e4, max_len=16),
        Param("include_d3", False, "bool", "Run the d = 3 ball sweep."),
        Param("rounding_tol", 0.001, "float",
              "Allowed row-l1 change of A when the weights are made whole tokens (sets the integer scale K).",
              low=1e-9, high=0.5),
    ),
    profiles={
        "quick": {"betas": [64.0, 128.0, 256.0, 512.0], "circle_n": 512, "eps_values": [0.25]},
        "paper": {"include_d3": True, "d3_betas": [16.0, 32.0, 64.0, 128.0]},
    },
    constraints=(
        lambda v: None if v["spacing_factor"] >= 0.5 or max(v["betas"]) <= 1024 else
        "parameters 'spacing_factor' < 0.5 with 'betas' above 1024 make grids too large; raise spacing_factor",
    ),
    memory=_memory,
    runtime=_runtime,
    code={  # label -> the functions implementing or checking it (under attnrank_lite.)
        "thm-ball-law": "laws.geometry.gaussian_ball laws.ball_law.ball_maker laws.report.ball_sweeps "
            "laws.report.ball_slopes",
        "prop-gaussian-ball": "laws.geometry.gaussian_ball laws.ball_law.theta_factor laws.ball_law.theta_direct "
            "laws.ball_law.token_count_table laws.ball_law.rounding_bound laws.ball_law.integer_scale "
            "laws.ball_law.integer_log_multiplicities laws.ball_law.rounding_table",
        "obs-ball-slopes": "laws.ball_law.ball_maker laws.report.fixed_n_numbers laws.verdicts.judged_slope_table "
            "laws.ball_law.certified_order laws.ball_law.loglog_crossing laws.report.key_numbers",
    },
)
