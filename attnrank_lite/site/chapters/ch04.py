"""Chapter 4: the row-softmax quotient and the r/2 law."""
from ..spec import ChapterSpec, Param


def _sorted_betas(v):
    for name in ("betas_r1", "betas_r2", "betas_r3", "betas_random", "poly_betas"):
        b = v[name]
        if any(x >= y for x, y in zip(b, b[1:])):
            return f"parameter {name!r} must be strictly increasing; got {b}"
    for name in ("betas_r1", "betas_r2", "betas_r3", "betas_random", "poly_betas"):
        if len(v[name]) < v["fit_points"]:
            return (f"parameter {name!r} needs at least fit_points = {v['fit_points']} values; "
                    f"got {len(v[name])}")
    return None


SPEC = ChapterSpec(
    key="ch04",
    notebook="04_quotient_and_r_half_law.ipynb",
    title="The row-softmax quotient and the r/2 law",
    params=(
        Param("eps", 0.25, "float", "Error level of every bracket and certificate.", low=0.01, high=0.9),
        Param("extra", 2, "int", "Nuisance (row-scalar) dimensions added around the visible ones.", low=1, high=16),
        Param("betas_r1", [16.0, 64.0, 256.0, 1024.0, 4096.0], "float_list",
              "Inverse temperatures of the r = 1 Gaussian-ball sweep.", low=1.0, high=16384.0),
        Param("betas_r2", [16.0, 32.0, 64.0, 128.0, 256.0, 512.0], "float_list",
              "Inverse temperatures of the r = 2 Gaussian-ball sweep.", low=1.0, high=1024.0),
        Param("betas_r3", [8.0, 16.0, 24.0, 32.0, 48.0], "float_list",
              "Inverse temperatures of the r = 3 Gaussian-ball sweep.", low=1.0, high=64.0),
        Param("n_random", 500, "int", "Points of the random (uniform-ball) instances.", low=20, high=2000),
        Param("betas_random", [4.0, 8.0, 16.0, 32.0, 64.0], "float_list",
              "Inverse temperatures of the random instances.", low=0.5, high=4096.0),
        Param("poly_n", 300, "int", "Points of the polynomial-certificate instances.", low=20, high=2000),
        Param("poly_betas", [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0], "float_list",
              "Inverse temperatures of the polynomial certificates.", low=0.0, high=16384.0),
        Param("fit_points", 4, "int", "Slopes are fitted on the last fit_points values of each sweep.",
              low=3, high=64),
        Param("seed", 0, "int", "Random seed.", low=0, high=2**32 - 1),
    ),
    profiles={
        "quick": {"betas_r1": [16.0, 64.0, 256.0, 1024.0], "betas_r2": [16.0, 32.0, 64.0, 128.0],
                  "betas_r3": [4.0, 8.0, 16.0, 24.0], "n_random": 200, "betas_random": [4.0, 8.0, 16.0, 32.0],
                  "poly_n": 120, "poly_betas": [1.0, 4.0, 16.0, 64.0, 256.0]},
        "paper": {"betas_r1": [16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0],
                  "betas_r2": [16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0],
                  "betas_r3": [8.0, 16.0, 24.0, 32.0, 48.0, 64.0], "n_random": 1500,
                  "betas_random": [4.0, 8.0, 16.0, 32.0, 64.0, 128.0], "poly_n": 1000,
                  "poly_betas": [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0]},
    },
    constraints=(_sorted_betas,),
)
