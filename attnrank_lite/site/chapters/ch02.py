"""Chapter 2: spherical self-attention, Theta(min{n, (1+beta)^{(d-1)/2}})."""
from ..memory import dense_need
from ..runtime import Cost
from ..spec import ChapterSpec, Param


def _memory(v):
    """One dense n x n attention matrix and its bracket per sweep."""
    for name in ("circle_n", "sphere_n", "config_n", "spectrum_n"):
        yield dense_need(v[name], v[name], name, "an attention matrix and its bracket")
    # d = 4, 5: streamed (A never stored): the harmonic basis, about 12 (1+beta)^{(d-1)/2} columns, and row blocks
    for name, betas, d in (("d4_n", "d4_betas", 4), ("d5_n", "d5_betas", 5)):
        if v[name] > 0:
            cols = min(v[name], 12 * (1 + max(v[betas])) ** ((d - 1) / 2))
            yield dense_need(v[name], cols + 2048, name, "streamed brackets: basis and row blocks",
                             copies=3)
    n = max(v["nsweep_ns"])
    yield dense_need(n, n, "nsweep_ns", "the largest circle of the n-sweep")


def _runtime(v):
    """The work of the costly steps: dense brackets n^2 per beta and eps (their verifying products
    dominate the SVD at these sizes), streamed ones n + n^2 (1+beta)^((d-1)/2)."""
    ne = len(v["eps_values"])
    for name in ("circle", "sphere", "config"):
        n, betas = v[f"{name}_n"], v[f"{name}_betas"]
        yield Cost(name, ne * len(betas) * n ** 2, f"{name}_n", f"{len(betas)} dense brackets of {n} points")
    for d in (4, 5):
        n, betas = v[f"d{d}_n"], v[f"d{d}_betas"]
        if n:
            yield Cost("points", n, f"d{d}_n", f"{n} well-spread points on S^{d - 1}")
            work = ne * n * n * sum((1 + b) ** ((d - 1) / 2) for b in betas)  # ~ harmonics per beta
            yield Cost("streamed", work, f"d{d}_n", f"streamed brackets of {n} points")
    yield Cost("nsweep", ne * sum(n ** 2 for n in v["nsweep_ns"]), "nsweep_ns", "the n-sweep's dense brackets")
    yield Cost("spectrum", v["spectrum_n"] ** 3, "spectrum_n", f"the spectrum of {v['spectrum_n']} points")
    yield Cost("tables", 1, "eps_values", "tables, slopes and figures")


SPEC = ChapterSpec(
    key="ch02", notebook="02_spherical_law.ipynb", title="Spherical self-attention: the (d-1)/2 law",
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
    code={  # label -> the functions implementing or checking it (under attnrank_lite.)
        "thm-spherical-law": "laws.sweeps.bracket_sweep laws.sweeps.point_sweep point_bracket laws.report.law_slopes",
        "obs-spherical-slopes": "laws.verdicts.judged_slope_table laws.report.law_section laws.report.law_numbers "
            "laws.report.constant_brackets laws.report.constants_summary laws.verdicts.width_trend",
        "lem-chebyshev-exp": "laws.sphere_proofs.chebyshev_exp_coefficients laws.sphere_proofs.chebyshev_tail "
            "laws.sphere_proofs.chebyshev_tail_bound laws.sphere_proofs.proven_degree "
            "laws.sphere_proofs.bessel_sum_degree laws.sphere_proofs.price_of_proof",
        "thm-sphere-upper": "laws.sphere_proofs.normaliser_shares laws.sphere_proofs.chebyshev_construction_errors "
            "laws.sphere_proofs.upper_proof_table engine.harmonic.HarmonicBasis engine.harmonic.harmonic_upper_bound",
        "prop-neumann-lower": "engine.neumann.NeumannCertificate engine.neumann.inverse_norm_bound "
            "engine.neumann.neumann_lower_bound",
        "thm-sphere-lower": "laws.sphere_proofs.regularity_constants laws.sphere_proofs.cap_radius_factor "
            "laws.sphere_proofs.cap_packing_certificate laws.sphere_proofs.lower_proof_table "
            "engine.neumann.NeumannCertificate engine.neumann.neumann_lower_bound",
        "cor-sphere-lower-worst-case": "laws.sphere_proofs.lower_proof_table laws.report.regularity_drift",
        "prop-funk-hecke": "laws.spectra.funk_hecke_eigenvalues laws.spectra.circulant_kernel_spectrum "
            "laws.spectra.predicted_attention_spectrum",
    },
)
