"""Chapter 1's checks (basics.report) against closed forms: the row-l1 norm of a fixed matrix, the
exact ranks of prop-exact-cases, the identity's singular values, explicit duplicated keys."""
import numpy as np
import pytest

from attnrank_lite.basics import plots as bp
from attnrank_lite.basics import report as rc
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
        b = rank_bracket(A, e, effort=rc.EFFORT)  # the chapter's rule (effort="max")
        assert (t.loc[e, "lower"], t.loc[e, "upper"]) == (b.lower, b.upper)
        assert t.loc[e, "lower_kind"] == b.lower_kind
        assert t.loc[e, "upper_source"] == b.as_dict()["upper_source"]


# ------------------------------------------------------------------ chapter 1's report functions

def _circle(n=96, beta=64.0):
    from attnrank_lite import softmax_attention

    return softmax_attention(circle_points(n), beta=beta)


@pytest.mark.parametrize("eps", [0.01, 0.25])
def test_cluster_certificate_is_drawn_whatever_kind_the_bracket_chose(eps):
    """At eps = 0.01 the Frobenius tail wins the bracket's lower end (no groups); the chapter still
    draws a cluster-mass certificate, which verifies and meets prop-cluster-mass's condition."""
    from attnrank_lite import rank_bracket
    from attnrank_lite.engine.certificates import ClusterMassCertificate

    A = _circle()
    br = rank_bracket(A, eps)
    cm = rc.cluster_certificate(A, br)
    assert isinstance(cm, ClusterMassCertificate) and cm.verify(A, eps)
    assert 0 < cm.rank <= br.lower
    rows = rc.certificate_rows_table(A, cm)
    assert len(rows) == cm.rank and (rows.own_mass > (1 + eps) / 2).all()
    # own mass recomputed from A and the groups, independently of mass_matrix
    own = [A[i, g].sum() for i, g in zip(cm.rows, cm.groups)]
    assert np.allclose(rows.own_mass, own, rtol=0, atol=1e-12)
    tamper = rc.tamper_table(A, br, cm, eps)
    assert list(tamper.verify) == [True, False, True, False]
    fig = bp.certificate_figure(A, cm, "t")
    assert len(fig.axes[0].lines) == cm.rank
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_l1_family_check_with_and_without_a_subspace():
    A = _circle(64)
    nums, checks, line = rc.l1_family_check(A, 0.25)
    assert all(checks.values()) and float(nums["c1_l1_fit"]) <= float(nums["c1_l1_proj"]) <= 0.25
    assert int(nums["c1_l1_rank"]) <= int(nums["c1_l1_k"]) < 64
    # eps = 0: no SVD member has error 0 in floating point; the certificate is B = A itself
    nums0, checks0, line0 = rc.l1_family_check(A, 0.0)
    assert all(checks0.values()) and nums0["c1_l1_k"] == "64" and "identity" in line0
    assert nums0["c1_l1_proj"] == nums0["c1_l1_fit"] == "0.000"


def test_invariance_table_and_key_numbers():
    from attnrank_lite.engine.bracket_algebra import intersect

    X = circle_points(64)
    inv, shift_change, combined = rc.invariance_table(X, 64.0, 0.25, np.random.default_rng(0))
    assert list(inv.instance) == ["original", "rows and columns permuted", "every other row deleted"]
    assert shift_change < 1e-12  # a row-scalar shift never changes the softmax (up to rounding)
    lo, up = combined
    assert max(inv.lower.iloc[:2]) == lo and min(inv.upper.iloc[:2]) == up
    A = _circle(64)
    sweep = rc.eps_sweep_table(A, [0.1, 0.5])
    contrast = rc.spectral_contrast_table({"identity": np.eye(8), "circle": A}, [1, 2], 0.25)
    nums = rc.key_numbers(inv, combined, shift_change, sweep, (3, 4), contrast)
    circle = contrast[contrast.matrix == "circle"]
    assert nums["c1_split_combined"] == "[{}, {}]".format(*intersect(circle.lower, circle.upper))
    assert nums["c1_c_last"] == "2" and nums["c1_comp_combined"] == "[3, 4]"
    assert nums["c1_lower_range"] == f"{sweep.lower.min()} to {sweep.lower.max()}"


@pytest.mark.parametrize("value", [0, -0.0, "1e-400", 1e-9])
def test_chapter_1_refuses_an_eps_its_exact_cases_cannot_close(value):
    """Issue 24 item 8: eps = 0 (also -0.0, 1e-400) was accepted and the run failed later; now
    validation refuses it at once, naming the parameter and what is allowed."""
    from attnrank_lite.site.params import ParameterError
    from attnrank_lite.site.runner import resolve_parameters

    with pytest.raises(ParameterError, match=r"parameter 'eps' must be a number >= 1e-06"):
        resolve_parameters("ch01", {"eps": value}, "quick")
    assert resolve_parameters("ch01", {"eps": 1e-6}, "quick")[1]["eps"] == 1e-6


def test_exact_cases_close_at_the_smallest_allowed_eps():
    """Why the floor is 1e-6 and not lower: at eps = 1e-6 the exact cases' brackets close, at the
    paper profile's n; at 1e-14 rounding margins keep the upper ends from closing."""
    from attnrank_lite.site.chapters import get_chapter

    spec = get_chapter("ch01")
    floor = next(p.low for p in spec.params if p.name == "eps")
    t = rc.exact_case_table(spec.profile("paper")["n"], 4, floor)
    assert (t.lower == t["exact rank"]).all() and (t.upper == t["exact rank"]).all()
    t14 = rc.exact_case_table(24, 4, 1e-14)
    assert (t14.upper > t14["exact rank"]).any()
