"""The independent checker (``attnrank_lite.checker``): it agrees with ``verify`` on valid files of
every kind, decides in exact arithmetic where floats cannot, and its own pieces (the rebuilt
matrix's error bound, the polynomial space) do what they state."""
from __future__ import annotations

import math

import numpy as np
import pytest
from certificate_cases import block_brackets, write_all

from attnrank_lite.checker import Refused, check_file
from attnrank_lite.checker import conditions as C
from attnrank_lite.checker.instance import Instance, SphereSpace, harmonic_count
from attnrank_lite.engine import RankBracket, rank_brackets, softmax_attention
from attnrank_lite.engine.certificate_file import verify_file
from attnrank_lite.engine.certificate_io import save_brackets
from attnrank_lite.engine.right_inverse import right_inverse_lower
from attnrank_lite.laws.geometry import fibonacci_sphere, random_sphere


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("checker")
    out = write_all(folder)
    # a stored matrix too large for the exact path: SVD / l1 factors checked with float bounds
    P = random_sphere(160, 3, seed=2)
    A = softmax_attention(P, beta=12.0)
    out["matrix-svd"] = save_brackets(folder / "matrix-svd.npz", rank_brackets(A, [0.2, 0.4]), A=A)
    # the LP right-inverse certificate on a recipe
    Q = fibonacci_sphere(120)
    low = right_inverse_lower(softmax_attention(Q, beta=16.0), 0.25, points=Q, max_seconds=20)
    up = rank_brackets(softmax_attention(Q, beta=16.0), [0.25])[0].upper_certificate
    out["recipe-lp"] = save_brackets(folder / "lp.npz", RankBracket(0.25, low, up), Q=Q, beta=16.0)
    return out


def test_checker_agrees_with_verify_on_valid_files_of_every_kind(files):
    kinds = set()
    for name, path in files.items():
        v, c = verify_file(path), check_file(path)
        assert v.ok and c.ok, (name, v.line, c.line)
        assert v.line.split(", n =")[0].removeprefix("verified: ") == c.line.split(", n =")[0].removeprefix("checked: ")
        kinds |= set(v.line.split("kinds ")[1].replace(",", " ").replace("/", " ").split())
    assert "right-inverse/subspace" in verify_file(files["recipe-lp"]).line  # the LP's certificate, not Neumann's
    assert kinds >= {"cluster-mass", "neumann", "right-inverse", "frobenius-tail", "norm", "subspace", "harmonic"}


def test_exact_arithmetic_decides_where_floats_cannot(tmp_path, monkeypatch):
    A = np.array([[0.5, 0.5], [0.5, 0.5]])
    L = np.array([[1.0], [1.0]])
    R = np.array([[0.625, 0.375]])  # error exactly 0.25 on each row
    inst = Instance({"kind": "matrix", "A": "A"}, {"A": A})
    assert C.factor_rank(inst, L, R, 0.25) == 1  # exact: <= eps holds with equality
    assert C.factor_rank(inst, L, R, 0.25 - 2.0**-50) is None
    monkeypatch.setattr(C, "EXACT_LIMIT", 0)
    assert C.factor_rank(inst, L, R, 0.25) is None  # the float bound keeps a margin
    assert C.factor_rank(inst, L, R, 0.2500001) == 1


def test_float_path_of_lower_kinds_matches_exact_path(monkeypatch):
    from certificate_cases import block_matrix
    inst = Instance({"kind": "matrix", "A": "A"}, {"A": block_matrix()})
    b = block_brackets()
    rows = np.array(b["neumann"].lower_certificate.rows, dtype=np.int64)
    keys = np.concatenate([np.array(g, dtype=np.int64) for g in b["neumann"].lower_certificate.groups])
    off = np.array([0, 4, 8, 12], dtype=np.int64)
    X = np.asarray(b["right-inverse"].lower_certificate.X)
    for exact_limit in (C.EXACT_LIMIT, 0):
        monkeypatch.setattr(C, "EXACT_LIMIT", exact_limit)
        assert C.cluster_mass_rank(inst, rows, keys, off, 0.25) == 3
        assert C.neumann_rank(inst, rows, keys, off, 0.25) == 3
        assert C.right_inverse_rank(inst, rows, X, 0.25) == 3
        assert C.norm_rank(inst, 1, 0, 0.25) == 1
        # the block rows have defect 0: they hold up to eps just below 1, never at eps = 1
        assert C.cluster_mass_rank(inst, rows, keys, off, 0.999) == 3
        assert C.cluster_mass_rank(inst, rows, keys, off, 1.0) is None
        # a shared key between groups, a repeated row, an index out of range
        bad_keys = keys.copy()
        bad_keys[4] = bad_keys[0]
        for args in ((rows, bad_keys, off), (np.array([0, 0, 4], dtype=np.int64), keys, off),
                     (np.array([0, 4, 12], dtype=np.int64), keys, off)):
            with pytest.raises(ValueError):
                C.cluster_mass_rank(inst, *args, 0.25)


def test_rebuilt_rows_are_within_their_stated_distance_of_a_longer_computation():
    rng = np.random.default_rng(5)
    Q = rng.normal(size=(20, 4)) * 3
    K = rng.normal(size=(30, 4))
    lw = rng.uniform(-50, 0, size=30)
    lw[3] = -np.inf
    inst = Instance({"kind": "attention", "Q": "Q", "K": "K", "beta": 40.0, "log_weights": "w"},
                    {"Q": Q, "K": K, "w": lw})
    Ahat, delta = inst.rows(np.arange(20))
    ell = 40.0 * (Q.astype(np.longdouble) @ K.T.astype(np.longdouble)) + lw.astype(np.longdouble)
    e = np.exp(ell - ell.max(axis=1, keepdims=True))
    exact = e / e.sum(axis=1, keepdims=True)
    dist = np.abs(Ahat.astype(np.longdouble) - exact).sum(axis=1).astype(np.float64)
    assert np.all(dist <= delta)
    assert np.all(delta < 1e-10)  # and the bound is not vacuous
    assert Ahat[:, 3].max() == 0.0


def test_the_checkers_polynomial_space_on_the_sphere():
    K = fibonacci_sphere(300)
    for deg in (0, 1, 4, 7):
        V = SphereSpace(K, np.zeros(300), deg).V
        assert V.shape[1] == sum(harmonic_count(3, l) for l in range(deg + 1)) == (deg + 1) ** 2
        np.testing.assert_allclose(V.T @ V, np.eye(V.shape[1]), atol=1e-10)
        # it contains every monomial of degree <= deg (restricted to the points)
        for a in [(deg, 0, 0), (0, deg // 2, deg - deg // 2), (1, 1, max(deg - 2, 0))]:
            if sum(a) > deg:
                continue
            f = np.prod(K ** np.array(a), axis=1)
            assert np.linalg.norm(f - V @ (V.T @ f)) <= 1e-8 * max(np.linalg.norm(f), 1.0)
    assert [harmonic_count(4, l) for l in range(4)] == [1, 4, 9, 16]
    assert math.comb(5, 2) + math.comb(4, 2) == sum(harmonic_count(3, l) for l in range(4))  # N(3, <=3) = 16


def test_checker_refuses_malformed_files(tmp_path, files):
    (tmp_path / "p.npz").write_bytes(b"\x80\x04K\x01.")
    with pytest.raises(Refused):
        check_file(tmp_path / "p.npz")
    data = files["neumann"].read_bytes()
    (tmp_path / "t.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(Refused):
        check_file(tmp_path / "t.npz")
    assert isinstance(Refused("x"), ValueError)


@pytest.mark.parametrize("beta", [1e4, 1e6])
def test_extreme_recipes_verify_in_both(tmp_path, beta):
    """beta up to 1e6 and log-weights down to -1e4 (SPEC section 7): no overflow, both agree."""
    P = fibonacci_sphere(100)
    lw = np.linspace(-1e4, 0.0, 100)
    brackets = rank_brackets(softmax_attention(P, beta=beta, log_weights=lw), [0.25])
    path = save_brackets(tmp_path / "x.npz", brackets, Q=P, beta=beta, log_weights=lw)
    v, c = verify_file(path), check_file(path)
    assert v.ok and c.ok
    assert f"{brackets[0].lower} <= rank_0.25(A) <= {brackets[0].upper}" in c.line
