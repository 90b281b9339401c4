"""The fast engine paths against slow, obviously-correct references (no timings here: see
benchmarks/bench_bracket.py)."""
import numpy as np
import pytest

from attnrank_lite import ClusterMassCertificate, rank_bracket, softmax_attention
from attnrank_lite.engine.attention import logit_rounding_bound, logits
from attnrank_lite.engine.bracket import rank_brackets
from attnrank_lite.engine.lower import _core_sizes, _largest_free_group, frobenius_tail_lower_bound
from attnrank_lite.engine.range_finder import randomized_range_finder
from attnrank_lite.engine.row_source import RowSource
from attnrank_lite.laws.geometry import fibonacci_sphere, gaussian_ball


def _softmax_rounding_tolerance(Q, K, beta, log_weights):
    """Entrywise bound on |A_1 - A_2| for two evaluations of the same attention whose logit
    products ran on different BLAS kernels (different block shapes).

    Each computed logit is within Delta_ij of the exact one (logit_rounding_bound), so the two
    computed logit rows differ by at most delta_i = 2 max_j Delta_ij; the exact row softmaxes of
    two such rows differ by a relative factor in [e^{-2 delta_i}, e^{2 delta_i}]. Each side's own
    rounding adds: the shift by the row maximum (one rounding of L_ij - max_i, i.e. a relative
    u |L_ij - max_i| in the exponential), the exponential (at most 4 ulp in numpy's SIMD paths),
    the row sum (gamma_m) and the final scaling (two roundings).
    """
    u = np.finfo(float).eps / 2
    L = logits(Q, K, beta=beta, log_weights=log_weights)
    spread = np.abs(L - L.max(axis=1, keepdims=True))
    lw = 0.0 if log_weights is None else u * np.abs(L)  # rounding of the log-weight addition
    delta = 2 * (logit_rounding_bound(Q, K, beta) + lw).max(axis=1, keepdims=True)
    m = L.shape[1]
    own = 2 * (u * spread + 8 * u + (m + 4) * u / (1 - (m + 4) * u))
    A = softmax_attention(Q, K, beta, log_weights)
    return A * np.expm1(2 * delta + own) * 1.01


def test_blocked_attention_agrees_within_rounding_bound():
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(37, 3)), rng.normal(size=(53, 3))
    w = rng.uniform(-30, 0, size=53)
    X, lw = gaussian_ball(2, 100.0, 1.0)
    for args, block in [((Q, K, 3.0, w), 8), ((Q, Q, 7.0, None), 8), ((X, X, 100.0, lw), 5)]:
        A = softmax_attention(*args)
        Ab = softmax_attention(*args, block=block)
        tol = _softmax_rounding_tolerance(*args)
        assert np.all(np.abs(Ab - A) <= tol)
        # the bound is a rounding bound, not a loose tolerance: far below the entries themselves
        assert np.all(tol <= 1e-9 * A + 1e-300)


def test_block_size_is_checked():
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="block"):
            softmax_attention(np.eye(3), block=bad)


def test_mass_matrix_matches_direct_sums_with_overlaps_and_empty_groups():
    rng = np.random.default_rng(1)
    A = rng.random((30, 40))
    rows = [3, 7, 11, 20]
    groups = [[0, 1, 2], [], [2, 5, 39], [10]]  # overlapping and empty groups are allowed here
    M = ClusterMassCertificate(rows, groups).mass_matrix(A, block=3)
    ref = np.array([[sum(A[i, j] for j in g) for g in groups] for i in rows])
    np.testing.assert_allclose(M, ref, rtol=1e-14)


def test_core_sizes_partial_sort_equals_full_sort():
    rng = np.random.default_rng(2)
    A = rng.random((50, 300)) ** 8
    A /= A.sum(axis=1, keepdims=True)
    thr = rng.uniform(0.05, 1.2, size=50)
    full = []
    for i in range(50):
        c = np.cumsum(np.sort(A[i])[::-1])
        hit = np.flatnonzero(c > thr[i])
        full.append(hit[0] + 1 if hit.size else 301)
    np.testing.assert_array_equal(_core_sizes(A, thr, block=7, top=4), full)


def test_largest_free_group_is_smallest_greedy_group():
    rng = np.random.default_rng(3)
    a = rng.random(200) ** 6
    used = rng.random(200) < 0.3
    for thr in (0.01, 0.5 * a[~used].sum(), 0.999 * a[~used].sum(), 2 * a.sum()):
        g = _largest_free_group(a, used, thr, top=5)
        free_sorted = np.sort(a[~used])[::-1]
        need = np.flatnonzero(np.cumsum(free_sorted) > thr)
        if need.size == 0:
            assert g is None
        else:
            assert not used[g].any() and a[g].sum() > thr and g.size == need[0] + 1


def test_frobenius_shortcut_agrees_with_exact_spectrum():
    A = softmax_attention(fibonacci_sphere(400), beta=16.0)
    for eps in (0.05, 0.25):
        fast = frobenius_tail_lower_bound(A, eps)
        exact = frobenius_tail_lower_bound(A, eps, svd=np.linalg.svd(A, full_matrices=False))
        assert fast.rank == exact.rank and fast.verify(A, eps)
    # at small n the Frobenius tail is informative and the certificate must verify
    B = softmax_attention(fibonacci_sphere(60), beta=200.0)
    c = frobenius_tail_lower_bound(B, 0.25)
    assert c.rank > 30 and c.verify(B, 0.25)


def test_ritz_values_never_exceed_singular_values():
    # why the Frobenius bound must not use a randomized subspace: sigma_i(A Q) <= sigma_i(A)
    A = softmax_attention(fibonacci_sphere(300), beta=20.0)
    Q = randomized_range_finder(RowSource.from_matrix(A), 40, power_iters=1).V
    ritz = np.linalg.svd(A @ Q, compute_uv=False)
    exact = np.linalg.svd(A, compute_uv=False)[:40]
    assert np.all(ritz <= exact * (1 + 1e-12) + 1e-15)
    assert np.sum(exact ** 2) - np.sum(ritz ** 2) > 0  # the tail would be overstated


def test_rank_brackets_share_work_and_stay_consistent():
    A = softmax_attention(fibonacci_sphere(500), beta=32.0)
    eps = [0.25, 0.05, 0.1]
    many = rank_brackets(A, eps)
    for e, b in zip(eps, many):
        one = rank_bracket(A, e)
        assert (b.lower, b.upper) == (one.lower, one.upper) and b.verify(A, e)
    # rank_eps is non-increasing in eps: every lower end is at most every upper end of a smaller eps
    by = dict(zip(eps, many))
    assert by[0.25].lower <= by[0.1].upper and by[0.1].lower <= by[0.05].upper


@pytest.mark.parametrize("n", [1100])  # just above DENSE_LIMIT (1024); 1600 added 42 s and no new path
def test_randomized_path_as_tight_as_dense_on_fibonacci(n):
    A = softmax_attention(fibonacci_sphere(n), beta=16.0)
    r = rank_bracket(A, 0.25)  # min(n, n) > DENSE_LIMIT: randomized path
    d = rank_bracket(A, 0.25, method="dense")
    assert "randomized" in r.upper_certificate.source
    assert r.verify(A, 0.25) and d.verify(A, 0.25)
    assert r.upper <= d.upper and r.lower >= d.lower
    rs = rank_brackets(A, [0.1, 0.25])
    assert all(b.verify(A, e) for b, e in zip(rs, [0.1, 0.25]))
