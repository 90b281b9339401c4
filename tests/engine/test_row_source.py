"""Row sources check their arguments once: blocks of points are computed without re-validation,
bit for bit as ``softmax_attention`` computes them."""
import numpy as np
import pytest

from attnrank_lite.engine import row_source
from attnrank_lite.engine.attention import softmax_attention
from attnrank_lite.engine.row_source import RowSource
from attnrank_lite.laws.geometry import fibonacci_sphere


@pytest.mark.parametrize("weighted", [False, True])
def test_point_rows_are_checked_once_and_equal_softmax_attention(monkeypatch, weighted):
    rng = np.random.default_rng(1)
    X = fibonacci_sphere(300)
    lw = rng.normal(size=300) if weighted else None
    if weighted:
        lw[5] = -np.inf
    expected = np.vstack([softmax_attention(X[s:s + 64], X, 23.0, lw) for s in range(0, 300, 64)])
    src = RowSource.from_points(X, 23.0, log_weights=lw, block=64)

    def refuse(*a, **k):
        raise AssertionError("a block was validated again")

    monkeypatch.setattr(row_source, "softmax_attention", refuse)
    assert np.array_equal(src.dense(), expected)
    assert np.array_equal(src.rows(np.array([7, 3, 299])), expected[[7, 3, 299]])


def test_bad_points_are_refused_at_the_entry():
    X = fibonacci_sphere(10)
    with pytest.raises(ValueError):
        RowSource.from_points(X, -1.0)
    with pytest.raises(ValueError):
        RowSource.from_points(X, 1.0, K=np.zeros((0, 3)))
    with pytest.raises(ValueError):
        RowSource.from_points(X, 1.0, log_weights=np.full(10, -np.inf))
