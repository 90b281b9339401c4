"""The one bracket assembler (engine/assemble.py): row sources, the best-of rule, frozen brackets."""
import dataclasses

import numpy as np
import pytest

from attnrank_lite import point_bracket, rank_bracket, softmax_attention
from attnrank_lite.engine.assemble import LOWER_FAMILIES, UPPER_FAMILIES, assemble_brackets
from attnrank_lite.engine.certificates import NormCertificate, SubspaceCertificate
from attnrank_lite.engine.row_source import RowSource, evenly_spaced_rows
from attnrank_lite.engine.upper import svd_upper_bound
from attnrank_lite.laws.geometry import circle_points, fibonacci_sphere


def test_returned_brackets_are_frozen():
    A = softmax_attention(circle_points(64), beta=16.0)
    b = rank_bracket(A, 0.5)
    other = rank_bracket(A, 0.9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.lower_certificate = other.lower_certificate
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.upper_certificate = other.upper_certificate
    p = point_bracket(circle_points(64), 16.0, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.eps = 0.9


def test_point_source_rows_match_the_stored_matrix():
    X = fibonacci_sphere(50)
    A = softmax_attention(X, beta=8.0)
    src = RowSource.from_points(X, 8.0, block=7)
    assert (src.n, src.m) == A.shape
    blocks = list(src.blocks())
    assert [b[0].start for b in blocks] == list(range(0, 50, 7))
    assert np.allclose(np.vstack([b[1] for b in blocks]), A, rtol=1e-12, atol=1e-15)
    assert np.allclose(src.dense(), A, rtol=1e-12, atol=1e-15)
    assert np.allclose(src.row_masses(), np.abs(A).sum(axis=1))


def test_evenly_spaced_rows():
    assert evenly_spaced_rows(10, 3).tolist() == [0, 4, 9]  # linspace 0, 4.5, 9 rounded half-even
    assert evenly_spaced_rows(5, 100).tolist() == [0, 1, 2, 3, 4]
    assert evenly_spaced_rows(0, 4).size == 0


def test_stored_and_streamed_sources_give_certified_brackets_that_intersect():
    X = fibonacci_sphere(200)
    A = softmax_attention(X, beta=16.0)
    stored = rank_bracket(A, 0.25, points=X)
    streamed = point_bracket(X, 16.0, 0.25)
    assert stored.verify(A, 0.25) and streamed.verify(A, 0.25)
    assert max(stored.lower, streamed.lower) <= min(stored.upper, streamed.upper)


def test_lower_families_have_one_signature_and_plug_in():
    # family(plan, eps) -> LowerCertificate | None, one level at a time, levels increasing
    A = softmax_attention(circle_points(64), beta=16.0)
    seen = []

    def norm_only(plan, eps):
        seen.append(eps)
        return NormCertificate(rank=1, row=0)

    src = RowSource.from_matrix(A)
    only = assemble_brackets(src, [0.5, 0.25], lower_families=(norm_only,))
    assert seen == [0.25, 0.5] and [b.lower for b in only] == [1, 1]
    assert all(b.verify(A, e) for b, e in zip(only, [0.5, 0.25]))
    default = assemble_brackets(src, [0.25], lower_families=LOWER_FAMILIES + (norm_only,))[0]
    assert default.lower == rank_bracket(A, 0.25).lower > 1  # a smaller extra family changes nothing


def test_an_extra_upper_family_plugs_in_and_wins_only_when_smaller():
    A = softmax_attention(circle_points(64), beta=16.0)
    calls = []

    def identity_family(plan, eps_values, lowers, uppers):
        calls.append(list(eps_values))
        return [SubspaceCertificate(np.eye(plan.source.n), plan.source.dense().copy(), source="test identity")
                for _ in eps_values]

    def svd_family(plan, eps_values, lowers, uppers):
        return [svd_upper_bound(plan.source.dense(), e) for e in eps_values]

    src = RowSource.from_matrix(A)
    only = assemble_brackets(src, [0.5], upper_families=(identity_family,))[0]
    assert calls == [[0.5]] and only.upper == 64 and only.upper_certificate.source == "test identity"
    both = assemble_brackets(src, [0.5], upper_families=(identity_family, svd_family))[0]
    assert both.upper < 64 and both.verify(A, 0.5)
    default = assemble_brackets(src, [0.5], upper_families=UPPER_FAMILIES + (identity_family,))[0]
    assert default.upper == rank_bracket(A, 0.5).upper  # a larger extra family changes nothing
