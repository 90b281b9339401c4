"""Chapter 2: spherical self-attention, Theta(min{n, (1+beta)^{(d-1)/2}})."""
from ..memory import dense_need
from ..runtime import scaled
from ..spec import ChapterSpec, Param


def _memory(v):
    """One dense n x n attention matrix and its bracket per sweep."""
    for name in ("circle_n", "sphere_n", "config_n", "spectrum_n"):
        yield dense_need(v[name], v[name], name, "an attention matrix and its bracket")
    # d = 4, 5: point_bracket streams row blocks and never stores A; it keeps the points'
    # harmonic basis (n x N(d, <= L) floats; N(4, <= 25) = 6201 at beta = 64, eps = 0.1, about
    # 12 (1+beta)^{3/2}) and row blocks. Measured peak (C1, n = 20,000, beta <= 64): 3.3 GB.
    for name, betas, d in (("d4_n", "d4_betas", 4), ("d5_n", "d5_betas", 5)):
        if v[name] > 0:
            cols = min(v[name], 12 * (1 + max(v[betas])) ** ((d - 1) / 2))
            yield dense_need(v[name], cols + 2048, name, "streamed brackets: basis and row blocks",
                             copies=3)
    n = max(v["nsweep_ns"])
    yield dense_need(n, n, "nsweep_ns", "the largest circle of the n-sweep")



def _point_work(n, betas, d):
    """Streamed brackets: n^2 kernel entries against about (1+beta)^((d-1)/2) harmonics, per beta."""
    return n * n * sum((1 + b) ** ((d - 1) / 2) for b in betas)


def _runtime(v):
    """Seconds of the costly steps, scaled from the book-profile calibration runs.

    The dense steps are half their share of the 271 s run on main: the book run of the d4_svd
    commit took 92 s (load about 6) with the same dense work, so the estimate sits between the two
    (within the stated factor 2 of both and of the quick run)."""
    ne = len(v["eps_values"]) / 2
    # dense brackets: at these sizes the verifying products (n^2 k) dominate the SVD (n^3)
    yield scaled(15.9, ne * len(v["circle_betas"]) * v["circle_n"] ** 2, 5 * 1024 ** 2, "circle_n",
                 f"{len(v['circle_betas'])} dense brackets of {v['circle_n']} circle points")
    yield scaled(55.0, ne * len(v["sphere_betas"]) * v["sphere_n"] ** 2, 4 * 2048 ** 2, "sphere_n",
                 f"{len(v['sphere_betas'])} brackets and proof checks of {v['sphere_n']} sphere points")
    # streamed brackets: a part linear in n (the points, their spread report) and the kernel work,
    # fitted on the book run and on the paper configuration's d = 4 sweep (n = 20,000,
    # beta = 8..64: 477 s, benchmarks/README.md)
    d4_ref = _point_work(20000, [8.0, 16.0, 32.0, 64.0], 4)
    yield scaled(39.6, v["d4_n"], 3000, "d4_n", f"{v['d4_n']} well-spread points on S^3")
    yield scaled(213.2, ne * _point_work(v["d4_n"], v["d4_betas"], 4), d4_ref, "d4_n",
                 f"streamed brackets of {v['d4_n']} points on S^3")
    if v["d5_n"] > 0:  # no calibration run of its own: the d = 4 costs per point and per unit of work
        yield scaled(39.6, v["d5_n"], 3000, "d5_n", f"{v['d5_n']} well-spread points on S^4")
        yield scaled(213.2, ne * _point_work(v["d5_n"], v["d5_betas"], 5), d4_ref, "d5_n",
                     f"streamed brackets of {v['d5_n']} points on S^4")
    yield scaled(6.0, ne * sum(n ** 2 for n in v["nsweep_ns"]), sum(2 ** (2 * k) for k in range(4, 11)),
                 "nsweep_ns", "the n-sweep's dense brackets")
    yield scaled(25.0, ne * len(v["config_betas"]) * v["config_n"] ** 2, 4 * 768 ** 2, "config_n",
                 f"brackets of four configurations of {v['config_n']} points")
    yield scaled(7.4, v["spectrum_n"] ** 3, 2048 ** 3, "spectrum_n", f"the spectrum of {v['spectrum_n']} points")
    yield scaled(1.4, 1, 1, "eps_values", "tables, slopes and figures")


#: measured runs the runtime estimate is checked against (seconds of the whole notebook run, kernel
#: start included; 2-core x86_64 shared with other jobs, December 2026): book on main (issue 16's run
#: record), quick in a side-by-side build. The steps' shares of the book run: circle sweep 12%, sphere
#: sweep and its proof checks 42%, d = 4 sweep 16%, configurations 19%,
#: n-sweep 5%, spectrum 6%.
RUNTIME_CALIBRATION = (
    {"profile": "book", "seconds": 271.0},
    {"profile": "quick", "seconds": 56.1},
    # the book profile with the d = 4 sweep harmonic only (d4_svd = False), 59 CPU s; with the
    # streamed SVD family (d4_svd = True) the same run took 243 s wall and 87 CPU s at load 8
    {"profile": "book", "seconds": 91.8},
)

SPEC = ChapterSpec(
    key="ch02",
    notebook="02_spherical_law.ipynb",
    title="Spherical self-attention: the (d-1)/2 law",
    params=(
        Param("eps_values", [0.1, 0.25], "float_list", "Error levels of every sweep.", low=0.01, high=0.99, max_len=6),
        Param("circle_n", 1024, "int", "Points of the equispaced circle (d = 2).", low=16, high=8192),
        Param("circle_betas", [16.0, 64.0, 256.0, 1024.0, 4096.0], "float_list",
              "Inverse temperatures of the circle sweep.", low=0.5, high=1e6, min_len=2, max_len=16),
        Param("sphere_n", 2048, "int", "Points of the Fibonacci sphere (d = 3; also the proof checks).",
              low=64, high=20000),
        Param("sphere_betas", [16.0, 32.0, 64.0, 128.0], "float_list",
              "Inverse temperatures of the sphere sweep.", low=0.5, high=1e5, min_len=2, max_len=16),
        Param("d4_n", 3000, "int", "Well-spread points on S^3 for the d = 4 sweep (streamed brackets).",
              low=200, high=40000),
        Param("d4_betas", [4.0, 8.0, 16.0, 32.0], "float_list", "Inverse temperatures of the d = 4 sweep.",
              low=0.5, high=1e4, min_len=2, max_len=16),
        Param("d4_svd", False, "bool",
              "Add the streamed SVD family to the d = 4 upper ends: narrower upper ends where it wins, "
              "several times the CPU of the harmonic family (off: harmonic only, as at the paper's n = 20,000, "
              "where the family is off anyway)."),
        Param("l1_limit", 10**9, "int",
              "Cost limit of the l1-fitted upper family in the d = 3, 4 and 5 sweeps: it runs on a "
              "bracket when n * m * upper is at most this (0: off; the engine's default, used by the "
              "paper profile, is 4 * 10**9). The circle, n-sweep and configuration cells run without it.",
              low=0, high=10**13),
        Param("d5_n", 0, "int", "Well-spread points on S^4 for a d = 5 sweep (0 = skip).", low=0, high=40000),
        Param("d5_betas", [4.0, 8.0, 16.0, 32.0], "float_list", "Inverse temperatures of the d = 5 sweep.",
              low=0.5, high=1e4, min_len=2, max_len=16),
        Param("nsweep_beta", 1024.0, "float", "Inverse temperature of the n-sweep on the circle.", low=1.0, high=1e6),
        Param("nsweep_ns", [16, 32, 64, 128, 256, 512, 1024], "int_list", "Circle sizes of the n-sweep.",
              low=2, high=8192, max_len=16),
        Param("config_n", 768, "int", "Points per configuration in the comparison (d = 3).", low=64, high=8192),
        Param("config_betas", [8.0, 16.0, 32.0, 64.0], "float_list",
              "Inverse temperatures of the configuration comparison.", low=0.5, high=1e5, max_len=12),
        Param("spectrum_n", 2048, "int", "Fibonacci points for the spectral comparison.", low=64, high=8192),
        Param("spectrum_beta", 32.0, "float", "Inverse temperature of the spectral comparison.", low=0.5, high=1e4),
        Param("heuristic_tol", 0.1, "float", "Eigenvalue ratio defining the harmonic degree L(beta).",
              low=1e-6, high=0.9),
        Param("seed", 0, "int", "Seed of the random and clustered configurations.", low=0, high=2**32 - 1),
    ),
    profiles={
        "quick": {"circle_n": 512, "circle_betas": [16.0, 64.0, 256.0, 1024.0], "sphere_n": 800,
                  "sphere_betas": [8.0, 16.0, 32.0, 64.0], "nsweep_ns": [16, 32, 64, 128, 256, 512],
                  "config_n": 400, "config_betas": [8.0, 16.0], "spectrum_n": 1024,
                  "d4_n": 800, "d4_betas": [4.0, 8.0, 16.0]},
        "paper": {"sphere_n": 4096, "sphere_betas": [16.0, 32.0, 64.0, 128.0, 256.0],
                  "d4_n": 20000, "d4_betas": [8.0, 16.0, 32.0, 64.0],
                  "config_n": 2048, "config_betas": [8.0, 16.0, 32.0, 64.0, 128.0], "spectrum_n": 4096,
                  "l1_limit": 4 * 10**9},
    },
    constraints=(
        lambda v: None if max(v["nsweep_ns"]) <= 4096 else
        f"parameter 'nsweep_ns' must stay <= 4096 (dense brackets); got max {max(v['nsweep_ns'])}",
    ),
    memory=_memory,
    runtime=_runtime,
    runtime_error=2.0,
    code={
        "thm-spherical-law": ["attnrank_lite.laws.sweeps.bracket_sweep", "attnrank_lite.laws.sweeps.point_sweep",
                              "attnrank_lite.point_bracket", "attnrank_lite.laws.report.law_slopes"],
        "obs-spherical-slopes": ["attnrank_lite.laws.verdicts.judged_slope_table",
                                 "attnrank_lite.laws.report.law_section",
                                 "attnrank_lite.laws.report.law_numbers",
                                 "attnrank_lite.laws.report.constant_brackets",
                                 "attnrank_lite.laws.report.constants_summary",
                                 "attnrank_lite.laws.verdicts.width_trend"],
        "lem-chebyshev-exp": ["attnrank_lite.laws.sphere_proofs.chebyshev_exp_coefficients",
                              "attnrank_lite.laws.sphere_proofs.chebyshev_tail",
                              "attnrank_lite.laws.sphere_proofs.chebyshev_tail_bound",
                              "attnrank_lite.laws.sphere_proofs.proven_degree",
                              "attnrank_lite.laws.sphere_proofs.bessel_sum_degree",
                              "attnrank_lite.laws.sphere_proofs.price_of_proof"],
        "thm-sphere-upper": ["attnrank_lite.laws.sphere_proofs.normaliser_shares",
                             "attnrank_lite.laws.sphere_proofs.chebyshev_construction_errors",
                             "attnrank_lite.laws.sphere_proofs.upper_proof_table",
                             "attnrank_lite.engine.harmonic.HarmonicBasis",
                             "attnrank_lite.engine.harmonic.harmonic_upper_bound"],
        "prop-neumann-lower": ["attnrank_lite.engine.neumann.NeumannCertificate",
                               "attnrank_lite.engine.neumann.inverse_norm_bound",
                               "attnrank_lite.engine.neumann.neumann_lower_bound"],
        "thm-sphere-lower": ["attnrank_lite.laws.sphere_proofs.regularity_constants",
                             "attnrank_lite.laws.sphere_proofs.cap_radius_factor",
                             "attnrank_lite.laws.sphere_proofs.cap_packing_certificate",
                             "attnrank_lite.laws.sphere_proofs.lower_proof_table",
                             "attnrank_lite.engine.neumann.NeumannCertificate",
                             "attnrank_lite.engine.neumann.neumann_lower_bound"],
        "cor-sphere-lower-worst-case": ["attnrank_lite.laws.sphere_proofs.lower_proof_table",
                                        "attnrank_lite.laws.report.regularity_drift"],
        "prop-funk-hecke": ["attnrank_lite.laws.spectra.funk_hecke_eigenvalues",
                            "attnrank_lite.laws.spectra.circulant_kernel_spectrum",
                            "attnrank_lite.laws.spectra.predicted_attention_spectrum"],
    },
)
