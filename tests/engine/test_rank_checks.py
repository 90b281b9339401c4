"""Chapter 1's checks (rank_checks) against closed forms: the row-l1 norm of a fixed matrix, the
exact ranks of prop-exact-cases, the identity's singular values, explicit duplicated keys."""
import numpy as np
import pytest

from attnrank_lite.engine import rank_checks as rc
from attnrank_lite.laws.geometry import circle_points


def test_bounded_outputs_table_reaches_the_row_l1_norm():
    E = np.array([[1.0, -2.0, 0.0], [0.5, 0.5, 0.5]])
    table, checks = rc.bounded_outputs_table(E, trials=50, seed=1)
    assert table["row_l1(E)"].iloc[0] == 3.0 and table["sign vector"].iloc[0] == 3.0
    assert table["best of 50 random V"].iloc[0] <= 3.0
    assert checks == {"sign_attains": True, "random_below": True}


def test_exact_case_table_has_the_exact_ranks():
    t = rc.exact_case_table(10, 3, 0.4)
    assert len(t) == 9 and t.verified.all()
    assert (t.lower == t["exact rank"]).all() and (t.upper == t["exact rank"]).all()
    assert set(t.loc[t.eps < 1, "exact rank"]) == {10, 1, 3}
    assert (t.loc[t.eps >= 1, "exact rank"] == 0).all()


def test_eps_sweep_frobenius_tail_of_the_identity():
    # sigma_l(I_8) = 1: the tail after k is 8 - k, budget 8 eps^2 = 2.88 at eps = 0.6: k = 6
    t = rc.eps_sweep_table(np.eye(8), [0.6, 0.2])
    assert list(t.eps) == [0.2, 0.6]
    assert t.set_index("eps").loc[0.6, "frobenius_tail"] == 6
    assert t.frobenius_verified.all() and (t.lower == 8).all() and (t.upper == 8).all()
    assert (t.lower_envelope == 8).all() and (t.upper_envelope == 8).all()


def test_multiplicity_table_merges_explicit_copies():
    X = circle_points(16)
    mult = np.arange(16) % 3 + 1
    table, change = rc.multiplicity_table(X, mult, beta=16.0, eps=0.25)
    assert list(table["keys"]) == [int(mult.sum()), 16]
    assert change < 1e-13
    assert max(table.lower) <= min(table.upper)


def test_spectral_contrast_of_the_split_identity():
    # split into c copies, every singular value of I_6 becomes 1/sqrt(c): > 0.3 iff c <= 11
    t = rc.spectral_contrast_table({"identity": np.eye(6)}, [1, 4, 16], 0.3)
    assert list(t["spectral numerical rank"]) == [6, 6, 0]
    assert list(t["keys"]) == [6, 24, 96]
    assert (t.lower == 6).all() and (t.upper == 6).all() and t.verified.all()


def test_multiplicity_table_rejects_mismatched_counts():
    with pytest.raises(ValueError):
        rc.multiplicity_table(circle_points(4), [1, 2], beta=1.0, eps=0.25)


def test_eps_sweep_gives_the_brackets_of_one_level_at_a_time():
    """The sweep factorises A once for all levels; its brackets are those rank_bracket finds level by
    level (dense path), certificate kinds included."""
    from attnrank_lite import rank_bracket, softmax_attention

    A = softmax_attention(circle_points(96), beta=64.0)
    levels = [0.05, 0.25, 0.5, 0.9]
    t = rc.eps_sweep_table(A, levels).set_index("eps")
    for e in levels:
        b = rank_bracket(A, e)
        assert (t.loc[e, "lower"], t.loc[e, "upper"]) == (b.lower, b.upper)
        assert t.loc[e, "lower_kind"] == b.lower_kind
        assert t.loc[e, "upper_source"] == b.as_dict()["upper_source"]
