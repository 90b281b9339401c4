"""The calibration study: whitened geometry against brute force, certificates, statistics,
determinism of the tables on the bundled model."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from attnrank_lite import calibration as cal
from attnrank_lite.attention import softmax_attention
from attnrank_lite.norms import row_l1
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
    """Pooled logit matrix G = Q Kc^T, its rank-s SVD truncation, split into per-sequence blocks."""
    Q = np.concatenate([q for q, _ in qk])
    Kc = np.concatenate([k - k.mean(0) for _, k in qk])
    G = Q @ Kc.T
    U, S, Vt = np.linalg.svd(G)
    Gs = (U[:, :s] * S[:s]) @ Vt[:s]
    b = np.cumsum([0] + [q.shape[0] for q, _ in qk])
    blocks = [(G[b[t]:b[t + 1], b[t]:b[t + 1]], Gs[b[t]:b[t + 1], b[t]:b[t + 1]]) for t in range(len(qk))]
    return S, blocks


def test_singular_values_are_those_of_the_pooled_logit_matrix():
    rng = np.random.default_rng(1)
    qk = _sequences(rng, [7, 11, 9], d=5)
    geom = cal.head_geometry(qk)
    S, _ = _brute_truncation(qk, 0)
    assert np.allclose(geom.sigma, S[:5], rtol=1e-10, atol=1e-10 * S[0])
    assert geom.visible_dim_calib == 5


def test_exact_low_rank_head_has_that_visible_dimension_and_zero_tolerance_dimension_above_it():
    rng = np.random.default_rng(2)
    qk = _sequences(rng, [10, 12, 8, 9], d=8, rank=3)
    geom = cal.head_geometry(qk)
    assert geom.visible_dim_calib == 3
    assert np.all(geom.sigma[3:] < 1e-10 * geom.sigma[0])
    for beta in (0.1, 1.0, 10.0):
        r_b, r_o = cal.tolerance_dims(geom, beta, 1e-6)
        assert r_o <= r_b <= 3


def test_key_bias_and_per_sequence_key_shift_do_not_change_the_geometry():
    rng = np.random.default_rng(3)
    qk = _sequences(rng, [9, 13], d=4)
    shifted = [(q, k + rng.standard_normal(4)) for q, k in qk]  # a different constant per sequence
    g1, g2 = cal.head_geometry(qk), cal.head_geometry(shifted)
    assert np.allclose(g1.sigma, g2.sigma) and np.allclose(g1.omega, g2.omega)


def test_truncation_bounds_hold_against_brute_force():
    """||A - A_s|| <= 2 tanh(beta Omega_s / 4) <= eta_s on every sequence, with A_s built from the
    brute-force SVD truncation of the pooled logit matrix; Omega_s equals the brute-force oscillation."""
    rng = np.random.default_rng(4)
    qk = _sequences(rng, [12, 15, 10], d=6)
    geom = cal.head_geometry(qk)
    beta = 0.7
    eo, eb = cal.eta_osc(geom, beta), cal.eta_bound(geom, beta)
    for s in range(7):
        _, blocks = _brute_truncation(qk, s)
        osc = max(float(np.ptp(G - Gs, axis=1).max()) for G, Gs in blocks)
        assert osc == pytest.approx(geom.omega[s], rel=1e-8, abs=1e-9)
        err = max(row_l1(softmax_attention(np.eye(len(G)), G.T, beta=beta)   # rowsoftmax(beta G)
                         - softmax_attention(np.eye(len(G)), Gs.T, beta=beta)) for G, Gs in blocks)
        assert err <= eo[s] + 1e-12
        assert eo[s] <= eb[s] + 1e-12
    # the true attention of each sequence is rowsoftmax(beta G_block) (key centring is row-scalar)
    for (Q, K), (G, _) in zip(qk, _brute_truncation(qk, 0)[1]):
        assert np.allclose(softmax_attention(Q, K, beta=beta), softmax_attention(np.eye(len(G)), G.T, beta=beta))


def test_truncated_coordinates_give_the_truncated_logits():
    rng = np.random.default_rng(5)
    qk = _sequences(rng, [8, 9], d=5)
    geom = cal.head_geometry(qk)
    for s in (1, 3, 5):
        _, blocks = _brute_truncation(qk, s)
        for t, (G, Gs) in enumerate(blocks):
            Qv, Kv = cal.truncated_coordinates(geom, t, s)
            assert Qv.shape == (G.shape[0], s)
            L = Qv @ Kv.T
            # equal up to row-scalar shifts (the brute-force block uses the pooled key centring too)
            D = L - Gs
            assert np.ptp(D, axis=1).max() < 1e-8 * np.abs(G).max()


def test_tolerance_dimensions_are_monotone():
    rng = np.random.default_rng(6)
    geom = cal.head_geometry(_sequences(rng, [10, 10, 10], d=6))
    taus = [0.01, 0.05, 0.2, 0.5, 1.0, 1.9]
    for beta in (0.2, 1.0):
        dims = [cal.tolerance_dims(geom, beta, t) for t in taus]
        assert all(o <= b for b, o in dims)
        assert [b for b, _ in dims] == sorted([b for b, _ in dims], reverse=True)
    # hotter heads (smaller beta) never need more dimensions
    assert cal.tolerance_dims(geom, 0.1, 0.1)[1] <= cal.tolerance_dims(geom, 1.0, 0.1)[1]


def test_study_head_certificates_verify_against_the_true_attention():
    rng = np.random.default_rng(7)
    qk = _sequences(rng, [10, 14, 12], d=4)
    geom = cal.head_geometry(qk)
    rows, seq_rows = cal.study_head(0, 0, qk, geom, [0.5, 2.0], eps=0.3, tau=0.1, bracket_seqs=[0, 2])
    assert len(rows) == 2 and len(seq_rows) == 4
    for r in rows:
        assert r["brackets_verified"] and r["poly_verified"]
        assert r["lower_mean"] <= r["upper_mean"]
        assert r["poly_count"] >= 1 and r["eta_osc_at_r"] <= 0.1
    for sr in seq_rows:
        assert sr["verified"] and sr["poly_verified"] and sr["lower"] <= sr["upper"] <= sr["n_tokens"]


def test_spearman_matches_scipy_including_ties():
    rng = np.random.default_rng(8)
    x = rng.integers(0, 5, 60).astype(float)
    y = x + rng.integers(0, 3, 60)
    assert cal.spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert cal.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert np.isnan(cal.spearman([1, 1, 1], [1, 2, 3]))
    assert cal.spearman([1, 2, np.inf], [1, 2, 3]) == pytest.approx(1.0)


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(9)
    x = rng.standard_normal(80)
    y = x + rng.standard_normal(80)
    groups = np.repeat(np.arange(20), 4)
    a = cal.spearman_bootstrap(x, y, groups, n_boot=300, seed=3)
    b = cal.spearman_bootstrap(x, y, groups, n_boot=300, seed=3)
    assert a == b and a["clusters"] == 20 and a["low"] < a["rho"] < a["high"]
    assert a["low"] > 0


def test_select_heads_reconstructs_the_84_head_set():
    assert len(cal.select_heads(12, 12)) == 84 and cal.select_heads(12, 12)[-1] == (6, 11)
    assert len(cal.select_heads(6, 12)) == 72
    assert cal.select_heads(6, 12, layers=[5, 0], heads=[3]) == [(0, 3), (5, 3)]
    with pytest.raises(ValueError, match="layers \\[7\\] out of range"):
        cal.select_heads(6, 12, layers=[7])


def test_corpus_loading(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("# comment\nfirst passage\nstill first\n\n\n second passage \n\n# x\nthird\n")
    assert cal.load_corpus(f) == ["first passage\nstill first", " second passage ", "third"]
    with pytest.raises(FileNotFoundError, match="not found"):
        cal.load_corpus(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="need at least 5"):
        cal.load_corpus(f, min_passages=5)
    assert cal.select_passages(list("abcdefghij"), 4) == list("adgj")
    assert cal.evenly_spaced(5, None) == [0, 1, 2, 3, 4]


def test_verdict_says_not_reproduced_when_nothing_is_reduced():
    s = pd.DataFrame({"multiplier": [1.0, 1.0], "reduction": [0.0, 0.0], "reduction_osc": [0.0, 0.0],
                      "poly_verified": [True, True], "poly_count": [10, 20], "upper_max": [5, 6],
                      "r_osc_tau": [32, 32], "log10_poly_count": [1.0, 1.3], "upper_mean": [3.0, 4.0],
                      "layer": [0, 0], "head": [0, 1]})
    text = cal.verdict(s, cal.associations(s.assign(r_tau=32), n_boot=100), "toy")
    assert "**not observed**" in text and "effective-dimension reductions: **not reproduced**" in text


def test_tau_must_stay_below_eps():
    from attnrank_lite.site.chapters import get_chapter

    spec = get_chapter("ch06")
    with pytest.raises(ParameterError, match="'tau' must be below eps"):
        spec.validate({"tau": 0.3, "eps": 0.25})
    assert spec.profile("paper")["allow_fallback"] is False


def test_two_runs_give_identical_tables(tmp_path):
    """Determinism on the bundled model: the same parameters give byte-identical CSVs."""
    pytest.importorskip("torch")
    from attnrank_lite.bert import load_model
    from attnrank_lite.site.results import save_table

    model, tok, info = load_model("bundled-minilm", verbose=False)
    texts = cal.select_passages(cal.load_corpus(), 4)
    out = []
    for run in range(2):
        res = cal.run_study(model, tok, info, texts, layers=[0, 5], heads=[1, 7], multipliers=[0.5, 2.0],
                            bracket_sequences=3)
        assoc = cal.associations(res["settings"], n_boot=100, seed=1)
        files = [save_table(res[k], f"{k}{run}", str(tmp_path), show=False)
                 for k in ("settings", "sequences", "heads", "curves")]
        files.append(save_table(assoc, f"assoc{run}", str(tmp_path), show=False))
        out.append([f.read_bytes() for f in files])
    assert out[0] == out[1]
    s = res["settings"]
    assert len(s) == 8 and s["brackets_verified"].all() and s["poly_verified"].all()
    assert (res["heads"]["recompute_error"] < 1e-5).all()
