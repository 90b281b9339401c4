"""Chapter 3: full-ball geometry, Theta(beta^{d/2})."""
from ..memory import ball_grid_points, dense_need
from ..runtime import scaled
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



def _ball_work(d, betas, s):
    """Dense brackets of the ball grids: the cube of the grid size, per beta."""
    return sum(ball_grid_points(d, b, s) ** 3 for b in betas)


def _runtime(v):
    """Seconds of the costly steps, scaled from the book-profile calibration run."""
    ne = len(v["eps_values"]) / 2
    ref = _ball_work(2, [64.0, 128.0, 256.0, 512.0, 1024.0], 1.0)
    yield scaled(6.4, ne * _ball_work(v["d"], v["betas"], v["spacing_factor"]), ref, "betas",
                 f"dense brackets of the d = {v['d']} ball grids up to beta = {max(v['betas']):g}")
    if v["include_d3"]:  # the same cost per unit of work as the main sweep
        yield scaled(6.4, ne * _ball_work(3, v["d3_betas"], v["spacing_factor"]), ref, "d3_betas",
                     f"dense brackets of the d = 3 ball grids up to beta = {max(v['d3_betas']):g}")
    yield scaled(9.0, ne * len(v["betas"]) * v["circle_n"] ** 3, 5 * 1024 ** 3, "circle_n",
                 f"dense brackets of {v['circle_n']} circle points")
    yield scaled(0.6, len(v["neff_betas"]), 8, "neff_betas", "the token-count and rounding tables")


#: measured runs the runtime estimate is checked against (seconds of the whole notebook run, kernel
#: start included; 2-core x86_64 shared with other jobs, December 2026): book on main (issue 16's run
#: record), quick in a side-by-side build. The steps' shares of the book run: ball sweeps 40%, circle
#: sweep 56%, token and rounding tables 4%.
RUNTIME_CALIBRATION = (
    {"profile": "book", "seconds": 26.0},
    {"profile": "quick", "seconds": 21.9},
)

SPEC = ChapterSpec(
    key="ch03",
    notebook="03_ball_law.ipynb",
    title="Full-ball geometry: one radial degree, the d/2 law",
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
    runtime_error=2.0,
    code={
        "thm-ball-law": ["attnrank_lite.laws.geometry.gaussian_ball", "attnrank_lite.laws.ball_law.ball_maker",
                         "attnrank_lite.laws.report.ball_sweeps", "attnrank_lite.laws.report.ball_slopes"],
        "prop-gaussian-ball": ["attnrank_lite.laws.geometry.gaussian_ball", "attnrank_lite.laws.ball_law.theta_factor",
                               "attnrank_lite.laws.ball_law.theta_direct",
                               "attnrank_lite.laws.ball_law.token_count_table",
                               "attnrank_lite.laws.ball_law.rounding_bound",
                               "attnrank_lite.laws.ball_law.integer_scale",
                               "attnrank_lite.laws.ball_law.integer_log_multiplicities",
                               "attnrank_lite.laws.ball_law.rounding_table"],
        "obs-ball-slopes": ["attnrank_lite.laws.ball_law.ball_maker",
                            "attnrank_lite.laws.report.fixed_n_numbers",
                            "attnrank_lite.laws.verdicts.judged_slope_table",
                            "attnrank_lite.laws.ball_law.certified_order",
                            "attnrank_lite.laws.ball_law.loglog_crossing",
                            "attnrank_lite.laws.report.key_numbers"],
    },
)
