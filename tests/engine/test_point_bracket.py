"""point_bracket: brackets from the points (A never stored) against the dense path."""
import numpy as np
import pytest

import attnrank_lite
from attnrank_lite import point_bracket, point_brackets, softmax_attention
from attnrank_lite.engine.assemble import CostLimits
from attnrank_lite.engine.bracket import rank_brackets
from attnrank_lite.engine.harmonic import HarmonicBasis
from attnrank_lite.laws.geometry import fibonacci_sphere, random_sphere, well_spread_sphere


@pytest.mark.parametrize("make,beta", [(lambda: fibonacci_sphere(400), 4.0),
                                       (lambda: fibonacci_sphere(400), 16.0),
                                       (lambda: well_spread_sphere(500, 4), 8.0)])
def test_same_or_better_than_dense_and_both_verify(make, beta):
    X = make()
    A = softmax_attention(X, beta=beta)
    eps_values = [0.1, 0.25]
    pts = point_brackets(X, beta, eps_values)
    dense = rank_brackets(A, eps_values)
    for p, d in zip(pts, dense):
        assert p.verify(A) and d.verify(A)
        assert p.lower >= d.lower and p.upper <= d.upper
        L, R = p.upper_factors
        assert L.shape == (X.shape[0], p.upper) and R.shape[0] == p.upper
        if p.lower_kind in ("neumann", "cluster-mass"):
            assert len(p.lower_rows) == p.lower == len(p.lower_groups)


def test_harmonic_path_alone_and_shared_basis():
    X = fibonacci_sphere(800)
    basis = HarmonicBasis(X)
    for beta in (8.0, 32.0):
        A = softmax_attention(X, beta=beta)
        # the harmonic family alone: no streamed SVD, no l1-fitted family
        b = point_brackets(X, beta, [0.25], basis=basis, svd=False, limits=CostLimits(l1=0))[0]
        assert b.upper_certificate.source.startswith("harmonic degree")
        assert b.upper == (b.upper_certificate.degree + 1) ** 2
        assert b.lower_kind in ("neumann", "cluster-mass") and b.verify(A)
        # by default the l1 fit in the same harmonic subspaces may only lower the upper end
        c = point_bracket(X, beta, 0.25, basis=basis, svd=False)
        assert c.upper <= b.upper and c.lower == b.lower and c.verify(A)


def test_queries_keys_and_log_weights():
    rng = np.random.default_rng(0)
    K = random_sphere(300, 3, seed=1)
    Q = 0.7 * random_sphere(120, 3, seed=2)  # queries need not lie on the sphere
    lw = rng.uniform(-2.0, 0.0, size=300)
    A = softmax_attention(Q, K, 12.0, log_weights=lw)
    for b in point_brackets(Q, 12.0, [0.1, 0.3], K=K, log_weights=lw):
        assert b.verify(A) and 1 <= b.lower <= b.upper <= 120


def test_edge_cases_zero_and_beta_zero():
    X = fibonacci_sphere(50)
    b0, b1 = point_brackets(X, 0.0, [0.25, 1.0])
    A = softmax_attention(X, beta=0.0)
    assert (b0.lower, b0.upper) == (1, 1) and b0.verify(A)  # beta = 0: A = J/n, rank 1
    assert (b1.lower, b1.upper) == (0, 0) and b1.verify(A)  # eps >= 1: B = 0


def test_bad_arguments_name_the_parameter():
    X = fibonacci_sphere(20)
    with pytest.raises(ValueError, match="eps"):
        point_bracket(X, 4.0, float("nan"))
    with pytest.raises(ValueError, match="beta"):
        point_bracket(X, -1.0, 0.1)
    with pytest.raises(ValueError, match="unit sphere"):
        point_bracket(X, 4.0, 0.1, K=2 * X)
    with pytest.raises(ValueError, match="log_weights"):
        point_bracket(X, 4.0, 0.1, log_weights=np.zeros(3))
    with pytest.raises(ValueError, match="svd"):
        point_bracket(X, 4.0, 0.1, svd="yes")
    with pytest.raises(ValueError, match="basis"):
        point_bracket(X, 4.0, 0.1, basis=HarmonicBasis(fibonacci_sphere(21)))


def test_exported():
    assert attnrank_lite.point_bracket is point_bracket
    assert "point_bracket" in attnrank_lite.__all__


def test_point_sweep_rows_and_best_of():
    from attnrank_lite.engine.lower import cluster_mass_lower_bound
    from attnrank_lite.laws.sweeps import point_sweep

    X = fibonacci_sphere(400)
    df = point_sweep(X, [16.0, 32.0], [0.1, 0.25], d=3)
    assert list(zip(df.beta, df.eps)) == [(16.0, 0.1), (16.0, 0.25), (32.0, 0.1), (32.0, 0.25)]
    assert df.verified.all() and (df.d == 3).all() and (df.lower <= df.upper).all()
    for row in df.itertuples():
        A = softmax_attention(X, beta=row.beta)
        assert row.lower >= cluster_mass_lower_bound(A, row.eps).rank
        if row.upper_source.startswith("harmonic"):
            assert row.upper == (row.degree + 1) ** 2  # harmonic family on S^2
        elif row.upper_source.startswith("l1 fit in "):  # rows fitted in l1 in one of those subspaces
            assert row.upper_source[10:].startswith(("harmonic degree", "streamed randomized SVD"))
            if "harmonic degree" in row.upper_source:  # the degree that holds its k basis columns
                L = int(row.upper_source.rsplit(" ", 1)[1])
                assert L * L < row.upper <= (L + 1) ** 2
        else:  # the streamed SVD family won (on by default since issue 17): no degree
            assert row.upper_source.startswith("streamed randomized SVD") and np.isnan(row.degree)
