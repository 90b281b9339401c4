"""engine/upper.py: the dense basis of the randomized family (eigenvectors of the Gram matrix) against
numpy's SVD, and the family's certificates on diffuse attention, where its sketches give way to it."""
import numpy as np
import pytest
from reference_math import matrix_with_spectrum

from attnrank_lite import softmax_attention
from attnrank_lite.engine.upper import DENSE_FROM, gram_eigenbasis, randomized_family, svd_upper_bound


@pytest.mark.parametrize("n, m", [(120, 80), (80, 120)])
def test_the_gram_basis_is_orthonormal_and_leads_with_the_top_singular_subspace(n, m):
    s = 0.7 ** np.arange(40)
    A, V = matrix_with_spectrum(n, m, s)
    W = gram_eigenbasis(A)
    assert W.shape == (m, min(n, m))
    assert np.abs(W.T @ W - np.eye(min(n, m))).max() < 1e-12
    # principal angles with the true top-8 subspace (a gap of 0.7 between consecutive singular values)
    assert np.linalg.svd(V[:, :8].T @ W[:, :8], compute_uv=False).min() > 1 - 1e-10
    # columns in decreasing order of ||A w||, which are the singular values
    norms = np.linalg.norm(A @ W[:, :20], axis=0)
    assert np.all(np.diff(norms) <= 1e-12) and np.allclose(norms, s[:20], rtol=1e-6)


@pytest.mark.parametrize("n, m, eps", [(400, 400, 0.1), (300, 500, 0.1), (500, 300, 0.25)])
def test_diffuse_attention_reaches_the_dense_basis_with_the_svds_rank(n, m, eps):
    rng = np.random.default_rng(1)
    A = softmax_attention(rng.standard_normal((n, 16)), rng.standard_normal((m, 16)), 0.25)
    cert, family = randomized_family(A, eps)
    reference = svd_upper_bound(A, eps)
    # far above min(n, m) / DENSE_FROM: the sketches fail and the family ends in its dense basis
    assert reference.rank > min(n, m) // DENSE_FROM
    assert family[1] == "dense eigenvectors of A^T A"
    assert cert.verify(A, eps)
    # the same subspaces in exact arithmetic: the nested search may differ only at a cut on the threshold
    assert abs(cert.rank - reference.rank) <= 1
