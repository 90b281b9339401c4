"""l1-fitted subspace certificates, checked against facts independent of the ADMM code.

References: the per-row l1 regression solved as a linear program by HiGHS
(``scipy.optimize.linprog``); the median as the l1 fit on the constant vector; the exact ranks
of the identity and of ``J/n``; the projection error computed here with numpy; the certified
lower end of ``rank_bracket``.
"""
import numpy as np
import pytest
from scipy.optimize import linprog

from attnrank_lite import rank_bracket, softmax_attention
from attnrank_lite.engine.certificates import SubspaceCertificate
from attnrank_lite.engine.l1fit import l1_family_search, l1_fit, l1_fit_rows, l1_upper_bound
from attnrank_lite.engine.upper import svd_upper_bound
from attnrank_lite.laws.geometry import fibonacci_sphere, random_sphere

#: ADMM against the LP optimum, absolute + relative tolerance: 300 steps (the default) reach
#: 0.5 %, 1,000 steps three digits, on every row of these instances
ATOL, RTOL, RTOL_1000 = 1e-9, 5e-3, 1e-3


def lp_row_optimum(a, V):
    r"""``min_c ||a - V c||_1`` as an LP: minimise ``sum t`` with ``-t <= a - V c <= t``."""
    m, k = V.shape
    cost = np.concatenate([np.zeros(k), np.ones(m)])
    A_ub = np.block([[-V, -np.eye(m)], [V, -np.eye(m)]])
    b_ub = np.concatenate([-a, a])
    bounds = [(None, None)] * k + [(0, None)] * m
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return res.fun


def projected_errors(A, V):
    return np.abs(A - (A @ V) @ V.T).sum(axis=1)


def small_instance(n=24, beta=12.0, seed=3):
    X = random_sphere(n, 3, seed=seed)
    return softmax_attention(X, beta=beta)


@pytest.mark.parametrize("k", [3, 7, 12])
def test_admm_reaches_the_lp_optimum_on_every_row(k):
    A = small_instance()
    V = np.linalg.svd(A)[2][:k].T
    fit = l1_fit(A, V, gap=None)
    opt = np.array([lp_row_optimum(a, V) for a in A])
    # an error below the LP optimum is impossible: it would mean the errors are not recomputed
    assert np.all(fit.errors >= opt - ATOL)
    assert np.all(fit.errors <= opt * (1 + RTOL) + ATOL)
    # the dual bounds never exceed the optimum
    assert np.all(fit.lower <= opt + 1e-9)
    longer = l1_fit(A, V, gap=None, steps=1000)
    assert np.all(longer.errors <= opt * (1 + RTOL_1000) + ATOL)
    assert np.all(longer.lower >= opt * (1 - RTOL_1000) - ATOL)


def test_random_subspace_against_the_lp():
    rng = np.random.default_rng(7)
    A = small_instance(n=16, beta=20.0, seed=5)
    V = np.linalg.qr(rng.standard_normal((16, 5)))[0]
    fit = l1_fit(A, V, gap=None)
    opt = np.array([lp_row_optimum(a, V) for a in A])
    assert np.allclose(fit.errors, opt, rtol=RTOL, atol=ATOL)
    assert np.all(fit.errors >= opt - ATOL)


def test_fit_on_the_constant_vector_is_the_median():
    # l1 regression on span(1) is the median: min_s sum_j |a_j - s| at s = median(a)
    rng = np.random.default_rng(11)
    A = rng.dirichlet(np.ones(9) * 0.3, size=40)  # odd m: a unique median
    V = np.full((9, 1), 1 / 3.0)
    fit = l1_fit(A, V, gap=None)
    med = np.median(A, axis=1, keepdims=True)
    opt = np.abs(A - med).sum(axis=1)
    assert np.allclose(fit.errors, opt, rtol=RTOL, atol=ATOL)
    assert np.all(fit.errors >= opt - ATOL)
    # and the projection (the mean) is strictly worse on some row
    assert np.any(projected_errors(A, V) > opt * (1 + 10 * RTOL))


def test_one_row_where_l1_beats_l2_exactly():
    # a = (1, 0, 0), V = 1/sqrt(3): l1 optimum 1 (s = 0), projection 4/3 (s = 1/3)
    fit = l1_fit(np.array([[1.0, 0.0, 0.0]]), np.full((3, 1), 1 / np.sqrt(3)))
    assert fit.max_projected == pytest.approx(4 / 3, rel=1e-12)
    assert fit.max_error == pytest.approx(1.0, rel=RTOL)


def test_fitted_error_never_above_the_projected_one():
    A = softmax_attention(fibonacci_sphere(80), beta=24.0)
    Vt = np.linalg.svd(A)[2]
    for k in (5, 20, 40):
        V = Vt[:k].T
        fit = l1_fit(A, V, steps=60)
        proj = projected_errors(A, V)
        assert np.allclose(fit.projected, proj, rtol=1e-10, atol=1e-13)
        assert np.all(fit.errors <= proj * (1 + 1e-12) + 1e-14)
        # and the reported errors are those of the returned coefficients
        assert np.allclose(fit.errors, np.abs(A - fit.C @ V.T).sum(axis=1), rtol=1e-10, atol=1e-13)
    assert fit.max_error < fit.max_projected


def test_streamed_row_blocks_match_the_dense_fit():
    A = small_instance(n=30)
    V = np.linalg.svd(A)[2][:6].T
    dense = l1_fit(A, V, gap=None)
    calls = []

    def rows(idx):
        calls.append(len(idx))
        return A[idx]

    streamed = l1_fit_rows(rows, A.shape[0], V, gap=None, block=7)
    assert max(calls) <= 7 and sum(calls) == 30
    assert np.allclose(streamed.errors, dense.errors, rtol=1e-6, atol=1e-9)


def test_identity_exact_case():
    n = 12
    A = np.eye(n)
    # span(e_1..e_k): rows i < k fit exactly, the others keep error 1
    fit = l1_fit(A, np.eye(n)[:, :5])
    assert np.allclose(fit.errors, [0.0] * 5 + [1.0] * 7, atol=1e-12)
    # rank_eps(I) = n for eps < 1: the search over a nested family finds nothing below n
    V = np.linalg.qr(np.random.default_rng(0).standard_normal((n, n)))[0]
    assert l1_family_search(lambda idx: A[idx], n, V, 0.5, hi=n - 1) is None
    cert = l1_upper_bound(A, 0.5)
    assert cert.rank == n and cert.verify(A, 0.5)


def test_uniform_attention_exact_case():
    n = 10
    A = np.full((n, n), 1.0 / n)  # J/n: rank 1 exactly, and ||A|| = 1 > eps
    fit = l1_fit(A, np.full((n, 1), 1 / np.sqrt(n)))
    assert fit.max_error == pytest.approx(0.0, abs=1e-14)
    cert = l1_upper_bound(A, 0.3)
    assert cert.rank == 1 and cert.verify(A, 0.3)


def test_certificate_verifies_and_is_smaller_than_the_svd_family():
    A = softmax_attention(fibonacci_sphere(80), beta=12.0)
    eps = 0.25
    plain = svd_upper_bound(A, eps)
    cert = l1_upper_bound(A, eps)
    assert isinstance(cert, SubspaceCertificate)
    assert cert.verify(A, eps)
    assert cert.rank < plain.rank
    assert rank_bracket(A, eps).lower <= cert.rank
    # the check is real: spoil one row of the factor and verification fails
    L = cert.L.copy()
    L[0] = 0.0
    assert not SubspaceCertificate(L, cert.R).verify(A, eps)


def test_search_respects_hi_and_returns_a_prefix_of_the_family():
    A = softmax_attention(fibonacci_sphere(80), beta=12.0)
    V = np.linalg.svd(A)[2].T
    cert = l1_family_search(lambda idx: A[idx], 80, V, 0.25, hi=55)
    assert cert is not None and cert.rank <= 55
    assert np.allclose(cert.R, V[:, :cert.rank].T)
    assert cert.verify(A, 0.25)
    # on this instance the search is minimal: with one column fewer, the LP optimum of the
    # worst row misses eps
    Vb = V[:, :cert.rank - 1]
    worst = np.argsort(l1_fit(A, Vb, steps=50).errors)[-3:]
    assert max(lp_row_optimum(A[i], Vb) for i in worst) > 0.25


def test_a_basis_that_is_not_orthonormal_is_refused():
    A = small_instance(n=8)
    with pytest.raises(ValueError, match="orthonormal"):
        l1_fit(A, 2 * np.eye(8)[:, :3])


def test_improve_over_two_families_beats_both_projections():
    # the harmonic basis and the SVD vectors of the same attention matrix; the better l1 fit wins
    from attnrank_lite.engine.harmonic import HarmonicBasis, harmonic_upper_bound
    from attnrank_lite.engine.l1fit import l1_improve

    X = fibonacci_sphere(80)
    A = softmax_attention(X, beta=12.0)
    eps = 0.25
    plain = svd_upper_bound(A, eps)
    basis = HarmonicBasis(X)
    harm = harmonic_upper_bound(A, X, eps, basis=basis)
    top = min(plain.rank, harm.rank)
    bases = [(plain.R.T, "svd"), (harm.R.T, "harmonic"), (2 * plain.R.T, "not orthonormal")]
    cert = l1_improve(lambda idx: A[idx], 80, eps, bases, hi=top - 1)
    assert cert is not None and cert.rank < top and cert.verify(A, eps)
    assert rank_bracket(A, eps).lower <= cert.rank
    # nothing below the certified lower end: no certificate, never a false one
    low = rank_bracket(A, eps).lower
    assert l1_improve(lambda idx: A[idx], 80, eps, bases, lo=0, hi=low - 1) is None


def test_best_of_keeps_the_l1_family_within_its_cost_limit():
    from attnrank_lite.engine.assemble import CostLimits

    A = softmax_attention(fibonacci_sphere(80), beta=12.0)
    on = rank_bracket(A, 0.25)
    off = rank_bracket(A, 0.25, limits=CostLimits(l1=0))  # the limit leaves the family out
    assert on.verify(A) and off.verify(A)
    assert on.lower == off.lower and on.upper < off.upper
    assert on.upper_certificate.source.startswith("l1 fit in")
    assert not off.upper_certificate.source.startswith("l1 fit")
