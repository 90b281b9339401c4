"""Every certificate verifier against forged data (issue 9: "a verifier is an adversary's target").

For each certificate class, a genuine certificate of a small matrix verifies, and every forgery of
its stored data — repeated, negative (wrapping), out-of-range, non-integer and boolean indices;
NaN / inf / complex entries; NaN / negative / non-real eps; stored data whose shape does not fit
A; a stored rank the data do not support; complex A — is refused: ``verify`` returns False or
raises ValueError / TypeError, never True. Many forgeries are chosen so that a verifier which
silently wrapped, cast, broadcast or deduplicated would accept them.
"""
from __future__ import annotations

import numpy as np
import pytest

from attnrank_lite import (
    ClusterMassCertificate,
    FrobeniusTailCertificate,
    NormCertificate,
    PolynomialCertificate,
    RankBracket,
    SubspaceCertificate,
    polynomial_certificate,
    rank_bracket,
    row_softmax,
    softmax_attention,
)
from attnrank_lite.engine.certificates import row_l1_at_most

try:  # the inverse-norm (Neumann) lower certificate shares the cluster-mass data layout
    from attnrank_lite.engine.neumann import NeumannCertificate
except ImportError:  # pragma: no cover - module added by a parallel change
    NeumannCertificate = None

EPS = 0.25
#: a sharp 3 x 3 attention matrix: each query keeps about 0.9 of its mass on its own key
SHARP = row_softmax(np.log(np.array([[18.0, 1, 1], [1, 18, 1], [1, 1, 18]])))

GROUP_CLASSES = [c for c in (ClusterMassCertificate, NeumannCertificate) if c is not None]


def refused(cert, A, eps=EPS) -> bool:
    """True when ``verify`` answers False or raises a clear ValueError / TypeError."""
    try:
        return cert.verify(A, eps) is False
    except (ValueError, TypeError) as err:
        assert str(err), "the error must say what is wrong"
        return True


# ---------------------------------------------------------------- genuine certificates verify

def _genuine():
    A = SHARP
    Q = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    poly = polynomial_certificate(Q, Q, 1.0, 0.05)
    yield "cluster", ClusterMassCertificate([0, 1, 2], [[0], [1], [2]]), A
    if NeumannCertificate is not None:
        yield "neumann", NeumannCertificate([0, 1, 2], [[0], [1], [2]]), A
    yield "frobenius", FrobeniusTailCertificate(rank=3), A
    yield "norm", NormCertificate(rank=1, row=2), A
    yield "subspace", SubspaceCertificate(np.eye(3), A.copy()), A
    yield "polynomial", poly, softmax_attention(Q, Q, 1.0)
    yield "bracket", rank_bracket(A, EPS), A


@pytest.mark.parametrize("name,cert,A", list(_genuine()), ids=[g[0] for g in _genuine()])
def test_genuine_certificates_verify(name, cert, A):
    assert cert.verify(A, EPS) is True, name


# ---------------------------------------------------------------- index forgeries

INDEX_FORGERIES = {
    "repeated": ([0, 0, 1], [[0], [0], [1]]),
    "negative": ([0, 1, -1], [[0], [1], [-1]]),  # -1 would wrap to 2: a faithful-looking copy
    "out-of-range": ([0, 1, 3], [[0], [1], [2, 3]]),
    "non-integer": ([0.0, 1.0, 2.0], [[0.0], [1.0], [2.0]]),
    "boolean": (np.array([True, True, True]), [[True, False, False], [False, True, False], [False, False, True]]),
}


@pytest.mark.parametrize("cls", GROUP_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("kind", INDEX_FORGERIES)
@pytest.mark.parametrize("field", ["rows", "groups"])
def test_group_certificates_refuse_forged_indices(cls, kind, field):
    rows, groups = INDEX_FORGERIES[kind]
    good_rows, good_groups = [0, 1, 2], [[0], [1], [2]]
    cert = cls(rows, good_groups) if field == "rows" else cls(good_rows, groups)
    assert refused(cert, SHARP)


@pytest.mark.parametrize("cls", GROUP_CLASSES, ids=lambda c: c.__name__)
def test_repeated_key_inside_a_group_cannot_double_its_mass(cls):
    # diagonal mass 0.5, off-diagonal 0.25: neither condition holds with groups {j}; a group
    # [j, j] would count 1.0 on the diagonal and pass a verifier that sums with repeats
    A = np.full((3, 3), 0.25) + np.eye(3) * 0.25
    assert not cls([0, 1, 2], [[0], [1], [2]]).verify(A, EPS)
    assert refused(cls([0, 1, 2], [[0, 0], [1, 1], [2, 2]]), A)
    # overlapping groups (a key counted for two rows)
    assert refused(cls([0, 1, 2], [[0, 1], [1], [2]]), A)


@pytest.mark.parametrize("kind", INDEX_FORGERIES)
@pytest.mark.parametrize("field", ["rows", "cols"])
def test_frobenius_refuses_forged_indices(kind, field):
    idx = INDEX_FORGERIES[kind][0]
    cert = FrobeniusTailCertificate(rank=2, **{field: idx})
    assert refused(cert, SHARP)


def test_frobenius_issue_example_repeated_columns():
    # A has a rank-1 B with error 0.1 <= 0.2, so rank_0.2(A) <= 1: a rank-2 claim is false
    A = np.array([[1.0, 0.0], [0.95, 0.05]])
    B = np.outer([1.0, 0.95], [1.0, 0.0])
    assert np.abs(A - B).sum(axis=1).max() <= 0.2
    assert refused(FrobeniusTailCertificate(rank=2, cols=[0, 1] * 1000), A, 0.2)
    assert refused(FrobeniusTailCertificate(rank=2, rows=[0, 1] * 1000), A, 0.2)
    assert refused(FrobeniusTailCertificate(rank=2), A, 0.2)


@pytest.mark.parametrize("row", [-1, 3, 0.0, True, np.nan, "0"])
def test_norm_refuses_forged_row(row):
    A = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])  # -1 wraps to a heavy row
    assert refused(NormCertificate(rank=1, row=row), A)


# ---------------------------------------------------------------- entries: NaN / inf / complex

BAD_ENTRIES = {"nan": np.nan, "inf": np.inf, "complex": 1e-300j}


@pytest.mark.parametrize("kind", BAD_ENTRIES)
@pytest.mark.parametrize("factor", ["L", "R"])
def test_subspace_refuses_bad_entries(kind, factor):
    L, R = np.eye(3), SHARP.copy()
    M = (L if factor == "L" else R).astype(complex if kind == "complex" else float)
    M[0, 0] = M[0, 0] + BAD_ENTRIES[kind]
    cert = SubspaceCertificate(M, R) if factor == "L" else SubspaceCertificate(L, M)
    assert refused(cert, SHARP)


def _poly():
    Q = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    w = np.array([0.0, -1.0, -2.0])
    cert = polynomial_certificate(Q, Q, 1.0, 0.05, log_weights=w)
    return cert, softmax_attention(Q, Q, 1.0, log_weights=w)


@pytest.mark.parametrize("kind", BAD_ENTRIES)
@pytest.mark.parametrize("field", ["Qv", "Kv", "log_weights", "beta"])
def test_polynomial_refuses_bad_entries(kind, field):
    cert, A = _poly()
    assert cert.verify(A, 0.05)
    value = getattr(cert, field)
    if field == "beta":
        value = value + BAD_ENTRIES[kind]
    else:
        value = value.astype(complex if kind == "complex" else float)
        value.flat[0] = value.flat[0] + BAD_ENTRIES[kind]
    setattr(cert, field, value)
    assert refused(cert, A, 0.05)


@pytest.mark.parametrize("field,value", [("degree", 2.0), ("degree", True), ("degree", -1),
                                         ("count", 2.0), ("count", True)])
def test_polynomial_refuses_non_integer_degree_or_count(field, value):
    cert, A = _poly()
    setattr(cert, field, value)
    assert refused(cert, A, 0.05)


@pytest.mark.parametrize("value", [2.0, True, 2.5, "2"])
def test_frobenius_and_norm_refuse_non_integer_rank(value):
    assert refused(FrobeniusTailCertificate(rank=value), SHARP)
    assert refused(NormCertificate(rank=value, row=0), SHARP)


# ---------------------------------------------------------------- eps: NaN / negative / non-real

BAD_EPS = [np.nan, -0.1, -np.inf, np.inf, 0.25 + 0j, None, "0.25", True, np.array([0.25, 0.3])]


def _all_genuine():
    return [(name, cert, A) for name, cert, A in _genuine()]


@pytest.mark.parametrize("eps", BAD_EPS, ids=repr)
@pytest.mark.parametrize("name,cert,A", _all_genuine(), ids=[g[0] for g in _genuine()])
def test_bad_eps_is_refused(name, cert, A, eps):
    if name == "bracket" and eps is None:
        # RankBracket.verify(A, None) means "the stored eps": forge the stored one instead
        cert = RankBracket(np.nan, cert.lower_certificate, cert.upper_certificate)
    assert refused(cert, A, eps), name


def test_bracket_nan_eps_on_the_zero_path_is_a_clear_error():
    b = rank_bracket(np.eye(3), 2.0)
    assert (b.lower, b.upper) == (0, 0) and b.verify(np.eye(3))
    with pytest.raises(ValueError, match="eps"):
        b.verify(np.eye(3), np.nan)
    with pytest.raises(ValueError, match="eps"):
        row_l1_at_most(np.eye(3), np.nan)
    with pytest.raises(ValueError, match="eps"):
        SubspaceCertificate(np.eye(3), np.eye(3)).verify(np.eye(3), np.nan)


# ---------------------------------------------------------------- shapes that do not fit A

SHAPES = ["fewer rows", "fewer cols", "more rows", "more cols", "3-D", "1-D"]
#: a lower bound read off rows / columns of A stays true on a larger matrix that contains them
#: (and the norm certificate stores no column data): those combinations forge nothing
NOT_A_FORGERY = {("cluster", "more rows"), ("cluster", "more cols"), ("neumann", "more rows"),
                 ("neumann", "more cols"), ("frobenius", "more rows"), ("frobenius", "more cols"),
                 ("norm", "more rows"),
                 ("norm", "more cols"), ("norm", "fewer cols")}


def _shape_cases():
    for name, cert, A in _genuine():
        for shape in SHAPES:
            if (name, shape) not in NOT_A_FORGERY:
                yield pytest.param(name, cert, A, shape, id=f"{name}-{shape}")


@pytest.mark.parametrize("name,cert,A,shape", list(_shape_cases()))
def test_shape_mismatch_is_refused(name, cert, A, shape):
    n = A.shape[0]
    B = {"fewer rows": A[:2], "fewer cols": A[:, :2] / A[:, :2].sum(axis=1, keepdims=True),
         "more rows": np.vstack([A, np.eye(1, A.shape[1])]), "more cols": np.hstack([A, np.zeros((n, 1))]),
         "3-D": A[None], "1-D": A[0]}[shape]
    assert refused(cert, B), (name, shape)


def test_subspace_factor_shapes_must_match_exactly():
    A = SHARP
    assert refused(SubspaceCertificate(np.eye(3)[:, :2], A), A)  # inner dimensions differ
    assert refused(SubspaceCertificate(np.ones((1, 3)), A[:1]), A)  # one row would broadcast
    assert refused(SubspaceCertificate(np.eye(3)[0], A), A)  # 1-D factor


# ---------------------------------------------------------------- a rank the data do not support

def test_unsupported_ranks_are_refused():
    A = SHARP
    # Frobenius: the claimed rank exceeds what the tail supports, or the submatrix size
    genuine = FrobeniusTailCertificate(rank=3).verify(A, EPS)
    assert genuine
    assert refused(FrobeniusTailCertificate(rank=4), A)
    assert refused(FrobeniusTailCertificate(rank=3), np.ones((3, 3)) / 3)
    assert refused(FrobeniusTailCertificate(rank=2, rows=[0]), A)
    # Norm: rank 2 is never a norm certificate; rank 1 needs a row heavier than eps
    assert refused(NormCertificate(rank=2, row=0), A)
    assert refused(NormCertificate(rank=1, row=0), A * 0.2)
    # cluster-mass: a row whose group carries no mass, or rows and groups of different lengths
    for cls in GROUP_CLASSES:
        assert refused(cls([0, 1, 2], [[0], [1], []]), A)
        assert refused(cls([0, 1, 2], [[0], [1]]), A)
        assert refused(cls([0, 1], [[0], [1], [2]]), A)
    # subspace: a rank-2 factorisation of a matrix that needs 3 at this eps
    U, s, Vt = np.linalg.svd(A)
    assert refused(SubspaceCertificate(U[:, :2] * s[:2], Vt[:2]), A)
    # polynomial: count must be the monomial count of (dim, degree)
    cert, B = _poly()
    for count in (cert.count - 1, cert.count + 1, 1):
        forged = PolynomialCertificate(cert.Qv, cert.Kv, cert.beta, cert.degree, count, cert.error,
                                       cert.log_weights)
        assert refused(forged, B, 0.05)
    low = PolynomialCertificate(cert.Qv, cert.Kv, cert.beta, 0, 1, cert.error, cert.log_weights)
    assert refused(low, B, 0.05)
    # bracket: a lower end above the upper end, or a forged side
    b = rank_bracket(A, EPS)
    assert refused(RankBracket(EPS, FrobeniusTailCertificate(rank=4), b.upper_certificate), A)
    assert refused(RankBracket(EPS, b.lower_certificate, SubspaceCertificate(U[:, :2] * s[:2], Vt[:2])), A)


def test_polynomial_refuses_two_dimensional_log_weights():
    cert, A = _poly()
    cert.log_weights = cert.log_weights[None, :]
    assert refused(cert, A, 0.05)


# ---------------------------------------------------------------- complex A

@pytest.mark.parametrize("name,cert,A", _all_genuine(), ids=[g[0] for g in _genuine()])
def test_complex_A_is_a_type_error(name, cert, A):
    with pytest.raises(TypeError, match="complex"):
        cert.verify(A + 0j, EPS)
    with pytest.raises(TypeError, match="complex"):
        cert.verify(A * (1 + 1e-300j), EPS)


def test_non_finite_A_is_refused():
    for name, cert, A in _genuine():
        B = A.copy()
        B[0, 0] = np.nan
        assert refused(cert, B), name
        B[0, 0] = np.inf
        assert refused(cert, B), name


# ---------------------------------------------------------------- slots and advertised ranks (issue 17)

def _circle64():
    """The issue's instance: ``A = softmax_attention(circle_points(64), beta=16)``, bracket [9, 11]."""
    from attnrank_lite.laws.geometry import circle_points

    X = circle_points(64)
    return X, softmax_attention(X, beta=16.0)


def _identity(A):
    return SubspaceCertificate(np.eye(A.shape[0]), A.copy(), source="identity")


def test_issue_example_bracket_is_nine_to_eleven():
    _, A = _circle64()
    b = rank_bracket(A, 0.5)
    assert (b.lower, b.upper) == (9, 11) and b.verify(A, 0.5)


def test_norm_certificate_is_refused_in_the_upper_slot():
    # NormCertificate(rank=0) verifies on its own; as an upper end it would claim rank_eps(A) <= 0
    _, A = _circle64()
    assert NormCertificate(rank=0).verify(A, 0.5)
    assert refused(RankBracket(0.5, NormCertificate(rank=0), NormCertificate(rank=0)), A, 0.5)


def test_identity_subspace_is_refused_in_the_lower_slot():
    # the identity factorisation verifies as an upper certificate of rank 64; as a lower end it
    # would claim rank_eps(A) >= 64 while the true rank is at most 11
    _, A = _circle64()
    ident = _identity(A)
    assert ident.verify(A, 0.5) and ident.rank == 64
    assert refused(RankBracket(0.5, ident, ident), A, 0.5)


@pytest.mark.parametrize("cls", GROUP_CLASSES, ids=lambda c: c.__name__)
def test_empty_grouped_certificate_is_refused_in_the_upper_slot(cls):
    _, A = _circle64()
    assert cls().verify(A, 0.5)  # an empty lower certificate claims nothing, and verifies
    assert refused(RankBracket(0.5, NormCertificate(rank=0), cls()), A, 0.5)


def test_polynomial_certificate_is_refused_in_the_lower_slot():
    X, A = _circle64()
    poly = polynomial_certificate(X, X, 16.0, 0.5)
    assert poly.verify(A, 0.5) and poly.rank > 11  # a valid upper bound above the true rank
    assert refused(RankBracket(0.5, poly, _identity(A)), A, 0.5)


def test_polynomial_certificate_is_accepted_in_the_upper_slot():
    X, A = _circle64()
    poly = polynomial_certificate(X, X, 16.0, 0.5)
    b = RankBracket(0.5, rank_bracket(A, 0.5).lower_certificate, poly)
    assert b.verify(A, 0.5) and b.upper == poly.count


class _LyingList(list):
    """A list whose ``len`` claims more items than it holds."""

    def __len__(self):
        return 40


class _LyingShape(np.ndarray):
    """An ndarray whose ``.shape`` attribute claims two columns, whatever it holds."""

    @property
    def shape(self):
        return (np.asarray(self).shape[0], 2)


@pytest.mark.parametrize("cls", GROUP_CLASSES, ids=lambda c: c.__name__)
def test_rows_with_a_lying_len_do_not_raise_the_claimed_rank(cls):
    _, A = _circle64()
    genuine = rank_bracket(A, 0.5)  # [9, 11]: no certificate may claim rank_eps(A) >= 12
    forged = cls(_LyingList(genuine.lower_rows), [list(g) for g in genuine.lower_groups])
    assert not (forged.verify(A, 0.5) and forged.rank > genuine.upper)
    b = RankBracket(0.5, forged, _identity(A))
    assert not (b.verify(A, 0.5) and b.lower > genuine.upper)


def test_factor_with_a_lying_shape_does_not_lower_the_claimed_rank():
    _, A = _circle64()
    genuine = rank_bracket(A, 0.5)  # [9, 11]: no certificate may claim rank_eps(A) <= 8
    L, R = genuine.upper_factors
    forged = SubspaceCertificate(L.view(_LyingShape), R)
    assert np.shape(forged.L) == (64, 2)
    assert not (forged.verify(A, 0.5) and forged.rank < genuine.lower)
    b = RankBracket(0.5, NormCertificate(rank=0), forged)
    assert not (b.verify(A, 0.5) and b.upper < genuine.lower)



def test_bracket_verify_refuses_certificate_subclasses():
    """issue 24 item 3: ``RankBracket.verify`` dispatches to the certificates' own methods, so a
    subclass overriding ``certified_rank`` could claim any rank; only the package's own classes
    (exact type) are accepted."""
    import dataclasses

    from attnrank_lite.engine.certificates import NormCertificate, SubspaceCertificate
    from attnrank_lite.engine.certified_bracket import RankBracket

    A = np.eye(3)
    b = rank_bracket(A, 0.1)
    assert b.verify(A, 0.1) and b.lower == b.upper == 3

    low_cls = type(b.lower_certificate)
    up_cls = type(b.upper_certificate)

    class LiarLow(low_cls):
        def certified_rank(self, A, eps):
            return 3

    class LiarUp(up_cls):
        def certified_rank(self, A, eps):
            return 3

    def clone(cert, cls):
        return cls(**{f.name: getattr(cert, f.name) for f in dataclasses.fields(cert) if f.init})

    lied_low = RankBracket(0.1, clone(b.lower_certificate, LiarLow), b.upper_certificate)
    lied_up = RankBracket(0.1, b.lower_certificate, clone(b.upper_certificate, LiarUp))
    assert not lied_low.verify(A, 0.1)
    assert not lied_up.verify(A, 0.1)
    assert NormCertificate and SubspaceCertificate  # the genuine classes stay importable
