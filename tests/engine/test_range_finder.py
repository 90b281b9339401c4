"""The one randomized range finder (engine/range_finder.py), checked against numpy's dense SVD."""
import numpy as np
from reference_math import matrix_with_spectrum

from attnrank_lite import softmax_attention
from attnrank_lite.engine.range_finder import orthonormalize, randomized_range_finder
from attnrank_lite.engine.row_source import RowSource
from attnrank_lite.laws.geometry import fibonacci_sphere


def test_recovers_the_top_right_singular_subspace():
    s = 0.5 ** np.arange(30)
    A, V = matrix_with_spectrum(200, 120, s)
    basis = randomized_range_finder(RowSource.from_matrix(A), 12)
    top = basis.V[:, :5]
    # principal angles between span(top) and the true top-5 subspace: cosines near 1
    cos = np.linalg.svd(V[:, :5].T @ top, compute_uv=False)
    assert cos.min() > 1 - 1e-6
    assert np.allclose(basis.sigma[:5], s[:5], rtol=1e-5)
    assert np.allclose(basis.V.T @ basis.V, np.eye(12), atol=1e-10)
    assert np.allclose(basis.AV, A @ basis.V, atol=1e-5)


def test_row_blocks_give_the_same_subspace_as_the_stored_matrix():
    X = fibonacci_sphere(300)
    A = softmax_attention(X, beta=20.0)
    dense = randomized_range_finder(RowSource.from_matrix(A), 40, seed=3)
    streamed = randomized_range_finder(RowSource.from_points(X, 20.0, block=37), 40, seed=3)
    # 16 = 1 + 3 + 5 + 7: whole plateaus of the sphere's spectrum, so the subspace is well defined
    P, Q = dense.V[:, :16], streamed.V[:, :16]
    assert np.abs(P @ P.T - Q @ Q.T).max() < 1e-4
    # and it approximates the true top subspace of A
    exact = np.linalg.svd(A)[2][:16].T
    assert np.linalg.svd(exact.T @ Q, compute_uv=False).min() > 0.99


def test_seed_makes_it_deterministic_and_differs_between_seeds():
    A, _ = matrix_with_spectrum(80, 60, 0.9 ** np.arange(40))
    a = randomized_range_finder(RowSource.from_matrix(A), 10, seed=1)
    b = randomized_range_finder(RowSource.from_matrix(A), 10, seed=1)
    c = randomized_range_finder(RowSource.from_matrix(A), 10, seed=2)
    assert np.array_equal(a.V, b.V) and not np.array_equal(a.V, c.V)


def test_orthonormalize_handles_ill_conditioned_columns():
    rng = np.random.default_rng(0)
    C = rng.standard_normal((100, 6)) * np.array([1, 1e-3, 1e-6, 1e-9, 1e-12, 1.0])
    Q = orthonormalize(C)
    assert np.allclose(Q.T @ Q, np.eye(6), atol=1e-10)
    # span is kept: C = Q (Q^T C)
    assert np.allclose(Q @ (Q.T @ C), C, atol=1e-12)
