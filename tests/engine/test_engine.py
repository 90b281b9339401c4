"""The certificate engine against facts not derived from it: exact cases, closed forms,
brute force on tiny cases, an independent recomputation of every certificate condition."""
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from scipy.special import softmax as scipy_softmax

from attnrank_lite import (
    ClusterMassCertificate,
    FrobeniusTailCertificate,
    SubspaceCertificate,
    rank_bracket,
    row_l1,
    row_softmax,
    softmax_attention,
    worst_case_values,
)
from attnrank_lite.laws.geometry import circle_points


def uniform_matrix(n):
    """J / n as the softmax of zero logits (stored rows never sum to more than 1 exactly)."""
    return row_softmax(np.zeros((n, n)))


def block_uniform(n, b):
    """Block-diagonal matrix of b uniform blocks of near-equal sizes."""
    labels = np.repeat(np.arange(b), np.diff(np.linspace(0, n, b + 1).round().astype(int)))
    return row_softmax(np.where(labels[:, None] == labels[None, :], 0.0, -np.inf))


def tampered_copies(bracket):
    """The upper certificate with its largest |L| entry moved by 1; the first group made to
    overlap the second."""
    L = bracket.upper_certificate.L.copy()
    L[np.unravel_index(np.argmax(np.abs(L)), L.shape)] += 1.0
    g = [list(x) for x in bracket.lower_groups]
    g[0] = sorted(set(g[0]) | {g[1][0]})
    return (SubspaceCertificate(L, bracket.upper_certificate.R.copy()),
            ClusterMassCertificate(list(bracket.lower_rows), g))


# ---------------------------------------------------------------- attention and the norm

def test_softmax_matches_scipy_and_definition():
    rng = np.random.default_rng(1)
    Q, K = rng.normal(size=(7, 3)), rng.normal(size=(9, 3))
    w = rng.uniform(-3, 0, size=9)
    A = softmax_attention(Q, K, beta=2.5, log_weights=w)
    np.testing.assert_allclose(A, scipy_softmax(2.5 * Q @ K.T + w, axis=1), rtol=1e-12)
    # log-weight log(c) acts exactly like c copies of the key (prop-multiplicity)
    K2 = np.vstack([K, K[:1], K[:1]])
    A2 = softmax_attention(Q, K2, beta=2.5)
    A1 = softmax_attention(Q, K, beta=2.5, log_weights=np.r_[np.log(3.0), np.zeros(8)])
    np.testing.assert_allclose(A1[:, 0], A2[:, 0] + A2[:, 9] + A2[:, 10], rtol=1e-12)


def test_stored_rows_never_exceed_one_exactly():
    rng = np.random.default_rng(2)
    for _ in range(50):
        A = row_softmax(rng.normal(size=(5, 40)) * 30)
        for row in A:
            assert sum(map(Fraction, row.tolist())) <= 1
        np.testing.assert_allclose(A.sum(axis=1), 1.0, atol=1e-13)


@pytest.mark.parametrize("beta", [0.0, 1e-3, 1.0, 1e3, 1e6])
def test_extreme_temperatures_and_weights_stay_finite(beta):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    logw = rng.uniform(-1e4, 0, size=40)
    A = softmax_attention(X, X, beta=beta, log_weights=logw)
    assert np.isfinite(A).all() and (A >= 0).all()
    b = rank_bracket(A, 0.25)
    assert 0 <= b.lower <= b.upper and b.verify(A, 0.25)


def test_row_l1_and_worst_case_values_brute_force():
    rng = np.random.default_rng(4)
    E = rng.normal(size=(4, 6))
    brute = max(np.abs(E @ np.array(s)).max() for s in product([-1.0, 1.0], repeat=6))
    assert row_l1(E) == pytest.approx(brute, rel=1e-14)
    V, value = worst_case_values(E)
    assert value == pytest.approx(brute, rel=1e-14) and set(np.unique(V)) <= {-1.0, 1.0}


# ---------------------------------------------------------------- exact cases (prop-exact-cases)

@pytest.mark.parametrize("n", [1, 2, 7, 64, 200])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5, 0.99])
def test_identity_bracket_is_exact(n, eps):
    b = rank_bracket(np.eye(n), eps)
    assert (b.lower, b.upper) == (n, n) and b.verify(np.eye(n), eps)


@pytest.mark.parametrize("n", [2, 5, 48, 301])
@pytest.mark.parametrize("eps", [1e-9, 0.25, 0.9])
def test_uniform_bracket_is_one(n, eps):
    A = uniform_matrix(n)
    b = rank_bracket(A, eps)
    assert (b.lower, b.upper) == (1, 1) and b.verify(A, eps)


@pytest.mark.parametrize("n,blocks", [(10, 1), (10, 3), (48, 4), (100, 17), (64, 64)])
def test_block_uniform_bracket_is_number_of_blocks(n, blocks):
    A = block_uniform(n, blocks)
    b = rank_bracket(A, 0.3)
    assert (b.lower, b.upper) == (blocks, blocks) and b.verify(A, 0.3)


@pytest.mark.parametrize("eps", [1.0, 1.0 + 1e-12, 1.5, 10.0])
def test_any_row_stochastic_matrix_has_rank_zero_at_eps_one(eps):
    rng = np.random.default_rng(5)
    mats = [np.eye(9), uniform_matrix(13), block_uniform(30, 4)]
    mats += [row_softmax(rng.normal(size=(rng.integers(1, 80), rng.integers(1, 80))) * s) for s in (0.1, 5, 50)]
    for A in mats:
        b = rank_bracket(A, eps)
        assert (b.lower, b.upper) == (0, 0) and b.verify(A, eps)


def test_frobenius_tail_matches_closed_form_on_identity():
    # sigma_l(I_n) = 1, so the tail after k is n - k and the bound is ceil(n (1 - eps^2))
    from attnrank_lite.engine.lower import frobenius_tail_lower_bound

    n, eps = 50, 0.6
    cert = frobenius_tail_lower_bound(np.eye(n), eps)
    assert cert.rank == int(np.ceil(n * (1 - eps ** 2))) and cert.verify(np.eye(n), eps)
    assert not FrobeniusTailCertificate(rank=cert.rank + 1).verify(np.eye(n), eps)


def test_frobenius_tail_bounds_are_proven_and_tight_against_closed_forms():
    """t_k <= sum_{l>k} sigma_l^2 (closed form for Q diag(d) P^T), within 1e-12 relative of it."""
    from attnrank_lite.engine.certificates import frobenius_tail_bounds

    rng = np.random.default_rng(11)
    d = np.array([3.0, 2.0, 2.0, 1.0, 0.5, 1e-3])
    Q, _ = np.linalg.qr(rng.normal(size=(9, 6)))
    P, _ = np.linalg.qr(rng.normal(size=(7, 6)))
    S = (Q * d) @ P.T
    exact = np.r_[[np.sum(d[k:] ** 2) for k in range(7)], 0.0]  # S is 9 x 7 of rank 6
    t = frobenius_tail_bounds(S)
    assert np.all(t <= exact + 1e-13) and np.all(t >= exact - 1e-12 * exact[0])
    # the SVD is only a witness: forged factors still give valid (weaker) bounds, never larger tails
    D = np.diag([3.0, 2.0, 1.0])
    true = np.array([14.0, 5.0, 1.0, 0.0])
    U, s, Vt = np.eye(3), np.array([3.0, 2.0, 1.0]), np.eye(3)
    for forged in [(U, s * 1.5, Vt), (U, s * 0.5, Vt), (U[:, ::-1], s, Vt), (U * 2, s, Vt),
                   (U + 1e-3 * rng.normal(size=(3, 3)), s, Vt), (U, np.array([3.0, 0.0, 0.0]), Vt)]:
        assert np.all(frobenius_tail_bounds(D, svd=forged) <= true)


# ---------------------------------------------------------------- tampering is caught

def _circle(n=256, beta=64.0):
    return softmax_attention(circle_points(n), beta=beta)


def test_tampered_certificates_fail_verify():
    A, eps = _circle(), 0.25
    b = rank_bracket(A, eps)
    assert b.verify(A, eps) and b.lower >= 2
    bad_upper, bad_lower = tampered_copies(b)
    assert not bad_upper.verify(A, eps)
    assert not bad_lower.verify(A, eps)
    # a group with an index out of range, a repeated row, a tiny change of one L entry
    g = b.lower_groups
    assert not ClusterMassCertificate(b.lower_rows, [g[0] + [A.shape[1]]] + g[1:]).verify(A, eps)
    assert not ClusterMassCertificate([b.lower_rows[0]] * 2, g[:2]).verify(A, eps)
    L, R = (x.copy() for x in b.upper_factors)
    err = np.abs(A - L @ R).sum(axis=1)
    i = int(err.argmax())
    L[i, 0] += 2.5 * eps / np.abs(R[0]).sum()  # adds a vector of l1 norm 2.5 eps to row i of B
    assert np.abs(A - L @ R).sum(axis=1).max() > eps
    assert not SubspaceCertificate(L, R).verify(A, eps)


def test_verify_does_not_pass_by_rounding():
    A = np.eye(4)
    L = np.eye(4)[:, :3]
    R = np.eye(4)[:3]
    # error exactly 1 in the last row: passes at eps = 1, fails just below
    assert SubspaceCertificate(L, R).verify(A, 1.0)
    assert not SubspaceCertificate(L, R).verify(A, 1.0 - 1e-15)


# ---------------------------------------------------------------- independent recheck

def _independent_cluster_check(A, eps, rows, groups):
    """Recompute the cluster-mass condition from scratch in exact rational arithmetic."""
    k = len(rows)
    flat = [j for g in groups for j in g]
    assert len(flat) == len(set(flat)) and len(set(rows)) == k
    for a in range(k):
        M = [sum(Fraction(float(A[rows[a], j])) for j in groups[b]) for b in range(k)]
        defect = abs(1 - M[a]) + sum(abs(M[b]) for b in range(k) if b != a)
        assert defect < 1 - Fraction(eps)


def _instances(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 160))
    d = int(rng.integers(2, 5))
    S = rng.normal(size=(n, d))
    S /= np.linalg.norm(S, axis=1, keepdims=True)
    ball = rng.uniform(-1, 1, size=(n, d)) * 0.5
    beta = float(10 ** rng.uniform(0, 2.5))
    yield "sphere", softmax_attention(S, beta=beta)
    yield "ball", softmax_attention(ball, beta=beta)
    yield "gaussian logits", row_softmax(rng.normal(size=(n, n + 7)) * rng.uniform(0.5, 8))
    yield "weighted keys", softmax_attention(S, S, beta=beta, log_weights=rng.uniform(-20, 0, size=n))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("eps", [0.05, 0.25, 0.6])
def test_random_instances_give_valid_deterministic_brackets(seed, eps):
    for name, A in _instances(seed):
        b1, b2 = rank_bracket(A, eps), rank_bracket(A, eps)
        assert b1.lower <= b1.upper, name
        assert b1.verify(A, eps), name
        assert (b1.lower, b1.upper, b1.lower_rows) == (b2.lower, b2.upper, b2.lower_rows), name
        np.testing.assert_array_equal(b1.upper_factors[0], b2.upper_factors[0])
        L, R = b1.upper_factors
        assert L.shape == (A.shape[0], b1.upper) and R.shape == (b1.upper, A.shape[1])
        assert np.abs(A - L @ R).sum(axis=1).max() <= eps
        if b1.lower_kind == "cluster-mass":
            _independent_cluster_check(A, eps, b1.lower_rows, b1.lower_groups)


def test_randomized_path_agrees_with_dense_path():
    A = softmax_attention(circle_points(600), beta=200.0)
    d, r = rank_bracket(A, 0.25, method="dense"), rank_bracket(A, 0.25, method="randomized")
    assert r.verify(A, 0.25) and d.verify(A, 0.25)
    assert max(d.lower, r.lower) <= min(d.upper, r.upper)
    assert r.upper <= d.upper + 4


def test_tiny_cases_brute_force_rank_one():
    """On 2 x 2 matrices rank_eps <= 1 iff some rank-1 B = u v^T meets eps: brute-force grid."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        A = row_softmax(rng.normal(size=(2, 2)) * 3)
        eps = float(rng.uniform(0.05, 0.6))
        b = rank_bracket(A, eps)
        grid = np.linspace(-1.5, 1.5, 121)
        best = min(
            np.abs(A - np.outer([1.0, t], v)).sum(axis=1).max()
            for t in grid for v in (A[0] * s for s in np.linspace(0.5, 1.5, 41))
        )
        if b.upper >= 2:  # the bracket says rank 2 may be needed: rank 1 must not be easily found
            assert b.lower == 2 or best > eps - 0.02
        if b.lower == 2:
            assert best > eps  # a certified rank-2 lower bound: no rank-1 matrix meets eps


# ---------------------------------------------------------------- the reference point (prop-certificate-chain)

def test_circle_reference_brackets_and_sqrt_growth():
    X = circle_points(1024)
    betas = [16, 256, 4096]
    brackets = [rank_bracket(softmax_attention(X, beta=b), 0.25) for b in betas]
    for b in brackets:
        assert b.upper / b.lower <= 1.35
    lo = np.polyfit(np.log(betas), np.log([b.lower for b in brackets]), 1)[0]
    hi = np.polyfit(np.log(betas), np.log([b.upper for b in brackets]), 1)[0]
    assert 0.4 <= lo <= 0.6 and 0.4 <= hi <= 0.6


# ---------------------------------------------------------------- the API refuses what it cannot mean (issue 10)

def test_complex_input_is_a_type_error_not_a_cast():
    with pytest.raises(TypeError, match="complex"):
        rank_bracket(1j * np.eye(3), 0.1)
    with pytest.raises(TypeError, match="complex"):
        rank_bracket(np.eye(3) + 0j, 0.1)  # even with zero imaginary part
    with pytest.raises(TypeError, match="complex"):
        softmax_attention(np.eye(3) * (1 + 1j))
    with pytest.raises(TypeError, match="complex"):
        row_l1(np.eye(2) * 1j)


@pytest.mark.parametrize("eps,err", [(None, TypeError), (True, TypeError), (np.bool_(False), TypeError),
                                     ("0.1", TypeError), (0.1 + 0j, TypeError), (np.nan, ValueError),
                                     (-0.1, ValueError), (np.inf, ValueError)])
def test_bad_eps_names_eps(eps, err):
    with pytest.raises(err, match="eps"):
        rank_bracket(np.eye(3), eps)


def test_log_weights_must_be_one_per_key():
    Q = np.random.default_rng(0).normal(size=(4, 2))
    K = np.random.default_rng(1).normal(size=(6, 2))
    with pytest.raises(ValueError, match="log_weights.*1-D"):
        softmax_attention(Q, K, log_weights=np.zeros((2, 3)))  # 6 entries, but not one per key
    with pytest.raises(ValueError, match="log_weights"):
        softmax_attention(Q, K, log_weights=np.zeros(5))
    with pytest.raises(ValueError, match="log_weights"):
        softmax_attention(Q, K, log_weights=np.r_[np.zeros(5), np.nan])


def test_beta_overflow_is_named():
    X = np.array([[2.0, 0.0], [0.0, 2.0]])
    with pytest.raises(ValueError, match="beta.*overflow"):
        softmax_attention(X, beta=1e308)
    # unit vectors: beta <q, k> <= 1e308 stays finite, and the result is the exact limit
    A = softmax_attention(np.eye(3), beta=1e308)
    assert np.array_equal(A > 0.5, np.eye(3, dtype=bool)) and np.all(A[~np.eye(3, dtype=bool)] == 0)


def test_zero_queries_give_an_empty_result_and_zero_keys_a_clear_error():
    K = np.eye(3)
    A = softmax_attention(np.zeros((0, 3)), K, beta=2.0)
    assert A.shape == (0, 3)
    b = rank_bracket(A, 0.1)
    assert (b.lower, b.upper) == (0, 0) and b.verify(A, 0.1)
    with pytest.raises(ValueError, match="key"):
        softmax_attention(np.eye(3), np.zeros((0, 3)))


@pytest.mark.parametrize("eps", [1e154, 1e155, 1e200, 1.7e308])
def test_huge_eps_gives_rank_zero_without_overflow(eps):
    A = uniform_matrix(5)
    b = rank_bracket(A, eps)
    assert (b.lower, b.upper) == (0, 0) and b.verify(A, eps)
    # a non-stochastic matrix whose entries are as huge as eps: still a valid bracket
    B = np.diag([1e200, 3e200, 2e200])
    for e in (1e160, 2.5e200):
        c = rank_bracket(B, e)
        assert c.lower <= c.upper and c.verify(B, e)
    assert rank_bracket(B, 1e160).upper == 3 and rank_bracket(B, 2.5e200).upper == 1
