"""Interaction tools: row-scalar quotient, visible dimension (instances and heads), truncation
bounds (the perturbation lemma itself: tests/engine/test_perturbation.py).
Checked against closed forms, constructed ground truth and brute force."""
from __future__ import annotations

import numpy as np
import pytest

from attnrank_lite import row_l1, row_softmax, softmax_attention
from attnrank_lite.engine.perturbation import oscillation_bound
from attnrank_lite.laws.geometry import gaussian_ball, uniform_ball
from attnrank_lite.quotient.constructions import (
    decaying_head,
    hidden_instance,
    random_perturbation_pairs,
    sharp_hidden_instance,
    two_level_example,
)
from attnrank_lite.quotient.interaction import (
    double_centre,
    head_visible_dimension,
    residual_bounds,
    row_scalar_quotient,
    tolerance_dimension,
    truncate_interaction,
    truncation_tradeoff,
    visible_coordinates,
    visible_dimension,
)
from attnrank_lite.quotient.polynomial import monomial_count


# ---------------------------------------------------------------- row-scalar quotient
def test_quotient_is_projection_and_softmax_invariant():
    rng = np.random.default_rng(1)
    L = rng.standard_normal((7, 9)) * 3
    m = L.shape[1]
    P = np.eye(m) - np.ones((m, m)) / m
    C = row_scalar_quotient(L)
    assert np.allclose(C, L @ P, atol=1e-13)
    assert np.allclose(C.sum(axis=1), 0, atol=1e-12)
    shift = rng.standard_normal((7, 1)) * 50
    assert np.allclose(row_scalar_quotient(L + shift), C, atol=1e-12)
    assert np.allclose(row_softmax(C), row_softmax(L), atol=1e-14)
    assert np.allclose(row_softmax(L + shift), row_softmax(L), atol=1e-14)


def test_visible_dimension_exact_cases():
    assert visible_dimension(np.zeros((4, 5))) == 0
    # row-scalar logits only: invisible
    c = np.arange(4.0)[:, None]
    assert visible_dimension(c * np.ones((1, 6))) == 0
    # column-scalar logits only (key log-weights): invisible too
    assert visible_dimension(np.ones((4, 1)) * np.arange(6.0)[None, :]) == 0
    # rank-1 logits varying with query and key: visible dimension 1
    assert visible_dimension(np.outer([1.0, 2.0, -1.0], [0.0, 1.0, 3.0])) == 1
    # x_i y_j + x_i + y_j + 1 = (x_i + 1)(y_j + 1): rank 1 and visible 1;
    # x_i y_j + y_j^2 has logit rank 2, visible 1 (y_j^2 is a key log-weight)
    x, y = np.array([0.0, 1.0, 3.0, -2.0]), np.array([1.0, -1.0, 2.0, 0.5, 4.0])
    L = np.outer(x, y) + (y ** 2)[None, :]
    assert np.linalg.matrix_rank(L) == 2 and visible_dimension(L) == 1


def test_double_centre_is_the_projection_and_keeps_the_softmax():
    rng = np.random.default_rng(2)
    L = rng.standard_normal((6, 8)) * 4
    Pn = np.eye(6) - np.ones((6, 6)) / 6
    Pm = np.eye(8) - np.ones((8, 8)) / 8
    C = double_centre(L)
    assert np.allclose(C, Pn @ L @ Pm, atol=1e-13)
    # L P_m = P_n L P_m + 1 c^T: the attention of C with key log-weights c
    c = row_scalar_quotient(L).mean(axis=0)
    assert np.allclose(row_softmax(C + c[None, :]), row_softmax(L), atol=1e-14)


@pytest.mark.parametrize("r", [1, 2, 3])
def test_visible_dimension_hidden_in_ambient_space(r):
    """Keys = (x_j, constant), queries = (y_i, arbitrary): logit rank r + 2 (nuisance columns), visible r."""
    rng = np.random.default_rng(r)
    n, m, extra = 40, 50, 2
    X = rng.standard_normal((m, r))
    Y = rng.standard_normal((n, r))
    K = np.hstack([X, np.full((m, extra), 0.7)])
    Q = np.hstack([Y, rng.standard_normal((n, extra)) * 10])
    R = np.linalg.qr(rng.standard_normal((r + extra, r + extra)))[0]  # hide the split by a rotation
    Q, K = Q @ R, K @ R
    assert np.linalg.matrix_rank(Q @ K.T) == r + 1  # the nuisance directions show in the raw logits
    assert visible_dimension(Q @ K.T) == r
    Qv, Kv, a = visible_coordinates(Q, K)
    assert Qv.shape == (n, r) and Kv.shape == (m, r) and a.shape == (m,)
    assert np.allclose(double_centre(Qv @ Kv.T), double_centre(Q @ K.T), atol=1e-10)
    assert np.allclose(Qv @ Kv.T + a[None, :], row_scalar_quotient(Q @ K.T), atol=1e-10)
    assert np.allclose(Kv.mean(axis=0), 0, atol=1e-12)
    # the queries' mean acts inside span(y_i - y_bar) here: no offsets needed
    assert np.abs(a).max() < 1e-10 * np.abs(Q @ K.T).max()
    for beta in (0.0, 0.3, 5.0, 200.0):
        Av = softmax_attention(Qv, Kv, beta, log_weights=beta * a)
        assert row_l1(Av - softmax_attention(Q, K, beta)) < 1e-9
    # Kv: column l has norm sqrt(sigma_l) of the doubly centred logits
    s = np.linalg.svd(double_centre(Q @ K.T), compute_uv=False)[:r]
    assert np.allclose(np.linalg.norm(Kv, axis=0), np.sqrt(s), rtol=1e-10)


def test_visible_coordinates_keep_a_true_key_log_weight():
    """q = (y, 1), k = (x, z): logits <y, x> + z_j, visible dimension r, and
    the column-scalar z_j cannot be absorbed: it comes back as key offsets."""
    rng = np.random.default_rng(8)
    Y, X = rng.standard_normal((30, 2)), rng.standard_normal((25, 2))
    z = rng.standard_normal(25) * 2
    Q = np.hstack([Y, np.ones((30, 1))])
    K = np.hstack([X, z[:, None]])
    assert np.linalg.matrix_rank(row_scalar_quotient(Q @ K.T)) == 3
    assert visible_dimension(Q @ K.T) == 2
    Qv, Kv, a = visible_coordinates(Q, K)
    assert Qv.shape == (30, 2) and np.abs(a).max() > 0.1
    assert np.allclose(Kv.T @ a, 0, atol=1e-10) and abs(a.sum()) < 1e-10
    for beta in (0.5, 7.0):
        Av = softmax_attention(Qv, Kv, beta, log_weights=beta * a)
        assert row_l1(Av - softmax_attention(Q, K, beta)) < 1e-10


def test_visible_coordinates_of_invisible_instance():
    Q = np.ones((3, 2))
    K = np.tile([[2.0, -1.0]], (5, 1))  # all keys equal
    Qv, Kv, a = visible_coordinates(Q, K)
    assert Qv.shape == (3, 0) and Kv.shape == (5, 0)
    assert np.allclose(softmax_attention(Qv, Kv, 3.0, log_weights=3.0 * a), 0.2)


@pytest.mark.parametrize("r", [1, 2, 3])
def test_sharp_family_has_visible_dimension_r(r):
    """The chapter-3 Gaussian-ball construction in dimension r, weights included:
    logits beta <x_i, x_j> + log w_j have rank r + 1 (the weights are a
    quadratic in x_j), visible dimension r; hidden in r + 2 ambient dimensions
    with row-scalar nuisance, still r."""
    beta = {1: 64.0, 2: 32.0, 3: 16.0}[r]
    X, lw = gaussian_ball(r, beta)
    L = beta * (X @ X.T) + lw[None, :]
    assert np.linalg.matrix_rank(L) == r + 1
    assert np.linalg.matrix_rank(row_scalar_quotient(L)) == r + 1
    assert visible_dimension(L) == r
    Q, K, lw2 = sharp_hidden_instance(r, beta, extra=2, seed=r)
    assert np.array_equal(lw2, lw)
    Lh = beta * (Q @ K.T) + lw[None, :]
    assert np.linalg.matrix_rank(Lh) == r + 2 and visible_dimension(Lh) == r
    Qv, Kv, a = visible_coordinates(Q, K)
    assert Qv.shape[1] == r
    A = softmax_attention(X, X, beta, log_weights=lw)
    Av = softmax_attention(Qv, Kv, beta, log_weights=lw + beta * a)
    assert row_l1(A - Av) < 1e-9


# ---------------------------------------------------------------- heads
def _head(rng, d_model, d_head, r, full_key=True):
    """W_Q^T W_K of rank r by construction: only the first r head coordinates carry queries.
    A random orthogonal mixing of head space hides this (it leaves W_Q^T W_K unchanged)."""
    W_Q = np.zeros((d_head, d_model))
    W_Q[:r] = rng.standard_normal((r, d_model))
    W_K = rng.standard_normal((d_head, d_model))
    if not full_key:
        W_K[r:] = 0.0
    H = np.linalg.qr(rng.standard_normal((d_head, d_head)))[0]
    return H @ W_Q, H @ W_K, H


def _brute_visible(W_Q, b_Q, W_K, b_K, key_states, rng, n_queries=60):
    """Visible dimension of an actual instance: generic query states, the given key states."""
    Hq = rng.standard_normal((n_queries, W_Q.shape[1])) * 3
    Q = Hq @ W_Q.T + (0 if b_Q is None else b_Q)
    K = key_states @ W_K.T + (0 if b_K is None else b_K)
    return visible_dimension(Q @ K.T, rtol=1e-9)


@pytest.mark.parametrize("r", [1, 2, 3])
def test_head_visible_dimension_ground_truth(r):
    rng = np.random.default_rng(10 + r)
    d_model, d_head = 9, 5
    W_Q, W_K, H = _head(rng, d_model, d_head, r)
    b_K = rng.standard_normal(d_head) * 5
    keys = rng.standard_normal((40, d_model))
    b_in = W_Q @ rng.standard_normal(d_model)  # query bias inside the column space of W_Q
    b_out = H @ np.eye(d_head)[r]  # query bias along a head direction W_Q does not use
    cases = [
        (None, None, r),
        (None, b_K, r),  # key bias: row-scalar, drops out
        (b_in, b_K, r),  # query bias = shift of the query states: drops out
        (b_out, None, r),  # b_Q^T W_K h' is column-scalar (a key log-weight): drops out
        (b_out, b_K, r),
    ]
    for b_Q, bK, truth in cases:
        assert head_visible_dimension(W_Q, b_Q, W_K, bK) == truth
        assert head_visible_dimension(W_Q, b_Q, W_K, bK, key_states=keys) == truth
        assert _brute_visible(W_Q, b_Q, W_K, bK, keys, rng) == truth


@pytest.mark.parametrize("r", [1, 2, 3])
def test_generic_query_bias_never_changes_the_visible_dimension(r):
    """A query bias outside the span that matters (its key term b_Q^T W_K h'_j
    is not in the row space of the bilinear part, so the row-centred logits
    gain a dimension) leaves the doubly centred rank, the head formula and the
    attention up to key log-weights unchanged; removing it changes nothing."""
    rng = np.random.default_rng(30 + r)
    d_model, d_head = 9, 5
    W_Q, W_K, _ = _head(rng, d_model, d_head, r)
    b_Q = rng.standard_normal(d_head) * 3  # generic
    b_K = rng.standard_normal(d_head)
    Hq = rng.standard_normal((60, d_model))
    Hk = rng.standard_normal((45, d_model))
    K = Hk @ W_K.T + b_K
    L = (Hq @ W_Q.T + b_Q) @ K.T
    L0 = (Hq @ W_Q.T) @ K.T  # b_Q removed
    # b_Q is outside the span that matters: the row-centred rank sees it
    assert np.linalg.matrix_rank(row_scalar_quotient(L), tol=1e-8) == r + 1
    assert np.linalg.matrix_rank(row_scalar_quotient(L0), tol=1e-8) == r
    # the doubly centred rank is r with and without it
    sv = np.linalg.svd(double_centre(L), compute_uv=False)
    assert np.count_nonzero(sv > 1e-9 * sv[0]) == r
    assert visible_dimension(L) == visible_dimension(L0) == r
    for b in (b_Q, None):
        assert head_visible_dimension(W_Q, b, W_K, b_K, key_states=Hk) == r
        assert head_visible_dimension(W_Q, b, W_K, b_K, key_states=Hk,
                                      query_states=Hq) == r
    # its only effect is a key log-weight: the attention of the b_Q-free
    # logits with log-weights beta * b_Q^T k_j
    beta = 0.7
    A = row_softmax(beta * L)
    assert row_l1(A - row_softmax(beta * L0 + beta * (K @ b_Q)[None, :])) < 1e-12


def test_head_query_bias_invisible_when_keys_use_only_query_directions():
    rng = np.random.default_rng(3)
    W_Q, W_K, _ = _head(rng, 8, 5, 2, full_key=False)  # W_K only uses the 2 query head directions
    b_Q = rng.standard_normal(5) * 4  # generic query bias
    assert head_visible_dimension(W_Q, b_Q, W_K, rng.standard_normal(5)) == 2
    keys = rng.standard_normal((30, 8))
    assert _brute_visible(W_Q, b_Q, W_K, None, keys, rng) == 2


def test_head_constant_key_directions_drop_out():
    rng = np.random.default_rng(4)
    d_model, d_head = 10, 6
    W_Q = rng.standard_normal((d_head, d_model))
    W_K = rng.standard_normal((d_head, d_model))
    basis = np.linalg.qr(rng.standard_normal((d_model, d_model)))[0]
    offset = rng.standard_normal(d_model) * 7  # constant part shared by all keys
    for s in (0, 1, 2, 4):
        keys = rng.standard_normal((50, s)) @ basis[:, :s].T + offset  # keys vary in s directions
        for b_Q in (None, rng.standard_normal(d_head)):
            truth = min(s, d_head)
            assert head_visible_dimension(W_Q, b_Q, W_K, rng.standard_normal(d_head), key_states=keys) == truth
            assert _brute_visible(W_Q, b_Q, W_K, None, keys, rng) == truth
    assert head_visible_dimension(W_Q, None, W_K, None) == d_head


def test_head_input_validation():
    with pytest.raises(ValueError):
        head_visible_dimension(np.ones((2, 3)), None, np.ones((3, 2)), None)
    with pytest.raises(ValueError):
        head_visible_dimension(np.ones((2, 3)), np.ones(3), np.ones((2, 3)), None)
    with pytest.raises(ValueError):
        head_visible_dimension(np.ones((2, 3)), None, np.ones((2, 3)), None, key_states=np.ones((4, 2)))
    with pytest.raises(ValueError):
        visible_dimension(np.ones((2, 2)), rtol=-1)
    with pytest.raises(ValueError, match="query_states"):
        head_visible_dimension(np.ones((2, 3)), None, np.ones((2, 3)), None,
                               query_states=np.ones((4, 2)))
    with pytest.raises(ValueError, match="real"):
        visible_dimension(1j * np.eye(3))
    with pytest.raises(ValueError, match="finite"):
        visible_dimension(np.array([[0.0, np.nan]]))


# ---------------------------------------------------------------- truncation and bounds
def test_truncate_interaction_eckart_young():
    rng = np.random.default_rng(5)
    U = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    V = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    sig = np.array([5.0, 3.0, 1.0, 0.5, 0.1])
    M = (U[:, :5] * sig) @ V.T
    for s in range(6):
        Ms = truncate_interaction(M, s)
        assert np.linalg.matrix_rank(Ms, tol=1e-10) == min(s, 5)
        gap = np.linalg.norm(M - Ms, 2)
        assert np.isclose(gap, sig[s] if s < 5 else 0.0, atol=1e-12)
    with pytest.raises(ValueError):
        truncate_interaction(M, -1)


def test_residual_bounds_closed_form_two_keys():
    # one query q = 1, keys 0 and t/beta, M = [[1]], s = 0: A_s is uniform
    for t in (0.01, 1.0, 6.0):
        beta = 2.0
        b = residual_bounds(np.array([[1.0]]), np.array([[0.0], [t / beta]]), np.array([[1.0]]), 0, beta)
        assert np.isclose(b["measured"], np.tanh(t / 2), rtol=1e-12)  # 2 |sigmoid(t) - 1/2|
        assert np.isclose(b["tanh"], 2 * np.tanh(t / 4), rtol=1e-12)
        assert np.isclose(b["osc"], t / 2, rtol=1e-12)
        # key centre = mean: R_k = t / (2 beta); sigma_1 = 1; R_q = 1
        assert np.isclose(b["sigma"], beta * 1.0 * 1.0 * t / (2 * beta), rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_residual_bounds_chain_on_random_heads(seed):
    rng = np.random.default_rng(seed)
    a, n, m = 8, 30, 40
    sig = 2.0 ** -np.arange(a)
    U = np.linalg.qr(rng.standard_normal((a, a)))[0]
    V = np.linalg.qr(rng.standard_normal((a, a)))[0]
    M = (U * sig) @ V.T
    Q = rng.standard_normal((n, a))
    K = rng.standard_normal((m, a)) + 3.0  # keys far from the origin: centring matters
    for s in range(a + 1):
        for beta in (0.1, 1.0, 4.0):
            b = residual_bounds(Q, K, M, s, beta)
            tol = 1e-12
            assert b["measured"] <= b["tanh"] + tol
            assert b["tanh"] <= b["osc"] + tol
            assert b["osc"] <= b["sigma"] * (1 + 1e-12) + tol
            if s == a:
                assert b["measured"] < 1e-12 and b["sigma"] == 0.0
            b0 = residual_bounds(Q, K, M, s, beta, key_centre=np.zeros(a))
            assert b0["sigma"] >= b["sigma"]  # centring at the mean helps for these keys


def test_tolerance_dimension():
    sig = [4.0, 2.0, 1.0, 0.25]
    assert tolerance_dimension(sig, 0.0) == 4
    assert tolerance_dimension(sig, 10.0) == 0
    assert tolerance_dimension(sig, 1.0) == 2  # sigma_3 = 1 <= 1
    assert tolerance_dimension(sig, 0.99) == 3
    assert tolerance_dimension(sig[::-1], 1.0, scale=2.0) == 3  # order does not matter; 2*sigma_4 = 0.5
    taus = np.logspace(-3, 2, 50)
    rs = tolerance_dimension(sig, taus, scale=3.0)
    assert rs.shape == taus.shape and np.all(np.diff(rs) <= 0)
    s_sorted = np.array(sorted(sig, reverse=True) + [0.0])
    for tau, r in zip(taus, rs):
        assert 3.0 * s_sorted[r] <= tau  # eta_r meets tau
        assert r == 0 or 3.0 * s_sorted[r - 1] > tau  # and r - 1 does not
    with pytest.raises(ValueError):
        tolerance_dimension(sig, -1.0)


# ---------------------------------------------------------------- constructions
def test_hidden_instance_changes_logit_rank_not_attention():
    Y, X = uniform_ball(30, 2, seed=1), uniform_ball(40, 2, seed=2)
    assert np.all(np.linalg.norm(X, axis=1) <= 1.0)
    Q, K = hidden_instance(Y, X, extra=3, seed=4)
    assert Q.shape == (30, 5) and K.shape == (40, 5)
    assert np.linalg.matrix_rank(Q @ K.T) == 3 and visible_dimension(Q @ K.T) == 2
    for beta in (1.0, 50.0):
        assert row_l1(softmax_attention(Q, K, beta) - softmax_attention(Y, X, beta)) < 1e-10


def test_two_level_example_and_random_pairs_meet_lemma():
    t = np.array([0.01, 1.0, 8.0])
    assert np.allclose(two_level_example(t), 2 * np.tanh(t / 4), atol=1e-14)
    osc, change = random_perturbation_pairs(2000, 5, seed=1)
    assert osc.shape == change.shape == (2000,)
    assert np.all(change <= oscillation_bound(osc) * (1 + 1e-12) + 1e-13)


def test_truncation_tradeoff_certificates_hold_for_the_full_attention():
    Q, K, M = decaying_head(4, 40, 40, 0.3, seed=0, key_offset=1.0)
    assert np.allclose(np.linalg.svd(M, compute_uv=False), 0.3 ** np.arange(4))
    rows = truncation_tradeoff(Q, K, M, 4.0, 0.25)
    assert [r["s"] for r in rows] == list(range(5))
    assert rows[-1]["tau_tanh"] == 0.0 and rows[-1]["budget"] == 0.25
    for r in rows:
        assert r["tau_measured"] <= r["tau_tanh"] + 1e-12 <= r["tau_sigma"] + 2e-12
        if r["budget"] > 0:
            assert r["verified_on_A"] and r["upper"] >= 1
            # the polynomial count is re-checked against A, and it is a
            # count for at most s visible coordinates
            assert r["poly_verified_on_A"] and r["poly_dim"] <= r["s"]
            assert r["poly_count"] == monomial_count(r["poly_dim"], r["poly_degree"])
        else:
            assert r["poly_count"] is None and not r["poly_verified_on_A"]
