"""Forged certificate files (issue 26): every header field edited, arrays swapped between files,
higher claimed ends, recipes whose points do not match their hash, malformed stored data.

Each forgery is rewritten as a forger would (the table of sha256 recomputed, unless the test is
about the hash) and given to both verifiers: ``verify_file`` (the engine's classes) and the
independent ``check_file``. A forgery is *caught* when a verifier refuses the file or does not
verify it.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
from certificate_cases import read_raw, write_all, write_raw

from attnrank_lite.checker import check_file
from attnrank_lite.engine.certificate_file import verify_file


def _verdicts(path) -> tuple[bool, bool]:
    """``(engine accepts, checker accepts)``."""
    try:
        engine = verify_file(path).ok
    except ValueError:
        engine = False
    try:
        checker = check_file(path).ok
    except ValueError:
        checker = False
    return engine, checker


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("forge"))


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(obj, list) and obj and isinstance(obj[0], dict):
        for i, v in enumerate(obj):
            yield from _leaves(v, path + (i,))
    else:
        yield path, obj


def _set(header, path, value):
    h = copy.deepcopy(header)
    node = h
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return h


#: fields the verifiers do not read (for the reader): editing them must change nothing
INFORMATIONAL = {"source", "package_version"}


def _edits(path, value, tight: bool):
    """Edited values of one header leaf that make its statement false or the file malformed.

    Not every edit makes a false statement: on the block matrix every certificate holds for all
    eps < 1 (a tighter eps is still true there, tested on the point sets only, ``tight``), a
    cluster-mass certificate whose rows also pass Neumann's test stays true under either name,
    and ``K = "Q"`` is self-attention again; those edits are left out here.
    """
    last = path[-1]
    if last == "lower":
        return [value + 1, value + 5, True, float(value), str(value)]
    if last == "upper":
        return [value - 1, -1, float(value), None]
    if last == "eps":
        # tighter: the upper certificate no longer meets it; looser at 1: no lower bound holds
        return ([value / 8] if tight else []) + [1.0, -value, "0.25", None]
    if last in ("rank", "degree"):
        return [value + 1, -1, float(value)] + ([value - 1] if value else [])
    if last == "row":
        return [value + 10**6, -1, 1.5]
    if last in ("n", "m"):
        return [value + 1, value - 1]
    if last == "beta":
        return [-1.0, "8", None]
    if last == "kind":
        return ["subspace" if value != "subspace" else "norm", "harmonic" if value != "harmonic" else "subspace",
                "right-inverse" if value != "right-inverse" else "neumann", "exec"]
    if last == "version":
        return [2, "1", 1.0]
    if last in ("format", "package"):
        return ["x"]
    if last == "factors_dtype":
        return ["float64" if value == "float32" else "float32", "object"]
    if last in INFORMATIONAL:
        return []
    # names of arrays (rows, keys, offsets, X, L, R, A, Q, K, log_weights, cols): point elsewhere
    return ["missing_array", None if value is not None else "b0_lower_rows"]


def _edited_files(files, tmp_path):
    """Every leaf of the header of files of every kind, each edit in turn (the table rehashed)."""
    out = []
    for name in ("cluster-mass", "neumann", "right-inverse", "frobenius-tail", "norm", "harmonic",
                 "recipe-weighted"):
        header, arrays = read_raw(files[name])
        for path, value in _leaves({k: v for k, v in header.items() if k != "arrays"}):
            for t, new in enumerate(_edits(path, value, tight=name in ("harmonic", "recipe-weighted"))):
                if new == value and type(new) is type(value):
                    continue
                dst = tmp_path / f"{name}-{'-'.join(map(str, path))}-{t}.npz"
                out.append((name, path, new, write_raw(dst, _set(header, path, new), arrays)))
    return out


def test_every_header_field_edited_is_caught_by_both(files, tmp_path):
    edited = _edited_files(files, tmp_path)
    leaves = {p[-1] for _, p, _, _ in edited}
    all_leaves = set()
    for name in ("cluster-mass", "harmonic", "recipe-weighted", "right-inverse", "frobenius-tail", "norm"):
        header, _ = read_raw(files[name])
        all_leaves |= {p[-1] for p, _ in _leaves({k: v for k, v in header.items() if k != "arrays"})}
    assert all_leaves - INFORMATIONAL <= leaves  # every field that means something was edited
    missed = [(name, path, new, v) for name, path, new, f in edited if (v := _verdicts(f)) != (False, False)]
    assert missed == [], '\n'.join(map(str, missed))
    assert len(edited) > 150


def test_informational_fields_change_nothing(files, tmp_path):
    header, arrays = read_raw(files["neumann"])
    h = _set(_set(header, ("brackets", 0, "upper_certificate", "source"), "anything"), ("package_version",), "9")
    assert _verdicts(write_raw(tmp_path / "info.npz", h, arrays)) == (True, True)


def test_arrays_swapped_between_files_are_caught(files, tmp_path):
    # the same recipe layout on other points: Q swapped, hashes recomputed
    h1, a1 = read_raw(files["harmonic"])
    h2, a2 = read_raw(files["recipe-weighted"])
    swapped = {**a1, "Q": a2["Q"][:a1["Q"].shape[0]] if a2["Q"].shape[0] >= a1["Q"].shape[0] else a2["Q"]}
    assert _verdicts(write_raw(tmp_path / "q.npz", h1, swapped)) == (False, False)
    # keys swapped with other unit vectors of the same shape
    rng = np.random.default_rng(0)
    K = rng.normal(size=a2["K"].shape)
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    assert _verdicts(write_raw(tmp_path / "k.npz", h2, {**a2, "K": K})) == (False, False)
    # the lower rows of one bracket with those of another kind's file (same names, other data)
    hc, ac = read_raw(files["cluster-mass"])
    hr, ar = read_raw(files["right-inverse"])
    ac2 = dict(ac)
    ac2["b0_lower_rows"] = ar["b0_lower_rows"][::-1].copy()
    # rows taken from the right-inverse file, in reverse: no longer each row with its own group
    assert _verdicts(write_raw(tmp_path / "rows.npz", hc, ac2)) == (False, False)
    ac2["b0_lower_rows"] = np.array([0, 1, 4], dtype=np.int64)  # two rows of one block
    assert _verdicts(write_raw(tmp_path / "rows2.npz", hc, ac2)) == (False, False)
    # brackets of two eps in one file: their lower data exchanged
    hh, ah = read_raw(files["harmonic"])
    lo = {k: v for k, v in ah.items() if k.startswith("b0_lower")}
    hi = {k.replace("b0_", "b1_"): v for k, v in lo.items()}
    if set(hi) <= set(ah):
        ah2 = {**ah, **hi, **{k.replace("b1_", "b0_"): ah[k] for k in hi}}
        assert _verdicts(write_raw(tmp_path / "eps.npz", hh, ah2)) == (False, False)


def test_a_header_claiming_a_higher_lower_end(files, tmp_path):
    for name in ("cluster-mass", "neumann", "right-inverse", "frobenius-tail", "harmonic"):
        header, arrays = read_raw(files[name])
        header["brackets"][0]["lower"] += 1
        assert _verdicts(write_raw(tmp_path / f"{name}.npz", header, arrays)) == (False, False)
    # and a certificate with one more row that does not hold: a 4th row from a used block
    header, arrays = read_raw(files["cluster-mass"])
    arrays = dict(arrays)
    arrays["b0_lower_rows"] = np.array([0, 4, 8, 1], dtype=np.int64)
    arrays["b0_lower_offsets"] = np.array([0, 4, 8, 11, 12], dtype=np.int64)
    header["brackets"][0]["lower"] = 4
    header["brackets"][0]["upper"] = 4
    assert _verdicts(write_raw(tmp_path / "four.npz", header, arrays)) == (False, False)


def test_a_recipe_whose_points_do_not_match_their_hash(files, tmp_path):
    header, arrays = read_raw(files["harmonic"])
    Q = arrays["Q"].copy()
    Q[0] = Q[1]
    assert _verdicts(write_raw(tmp_path / "hash.npz", header, {**arrays, "Q": Q}, rehash=False)) == (False, False)
    Q = arrays["Q"].copy()
    Q[5, 0] = np.nextafter(Q[5, 0], 2.0)  # one ulp
    assert _verdicts(write_raw(tmp_path / "ulp.npz", header, {**arrays, "Q": Q}, rehash=False)) == (False, False)


@pytest.mark.parametrize("forge", ["repeated", "out-of-range", "negative", "nan-factor", "complex-factor",
                                   "int32-rows", "float-rows", "2d-rows", "inf-X"])
def test_stored_data_that_does_not_describe_a_certificate(files, tmp_path, forge):
    name = "right-inverse" if forge == "inf-X" else "neumann"
    header, arrays = read_raw(files[name])
    a = dict(arrays)
    rows = a["b0_lower_rows"]
    if forge == "repeated":
        a["b0_lower_rows"] = np.array([rows[0], rows[0], rows[2]], dtype=np.int64)
    elif forge == "out-of-range":
        a["b0_lower_rows"] = np.array([rows[0], rows[1], 12], dtype=np.int64)
    elif forge == "negative":
        a["b0_lower_rows"] = np.array([rows[0], rows[1], -4], dtype=np.int64)  # -4 would wrap to row 8
    elif forge == "nan-factor":
        L = a["b0_upper_L"].copy()
        L[0, 0] = np.nan
        a["b0_upper_L"] = L
    elif forge == "complex-factor":
        a["b0_upper_L"] = a["b0_upper_L"].astype(np.complex64)
    elif forge == "int32-rows":
        a["b0_lower_rows"] = rows.astype(np.int32)
    elif forge == "float-rows":
        a["b0_lower_rows"] = rows.astype(np.float64)
    elif forge == "2d-rows":
        a["b0_lower_rows"] = rows[:, None]
    elif forge == "inf-X":
        X = a["b0_lower_X"].copy()
        X[0, 0] = np.inf
        a["b0_lower_X"] = X
    assert _verdicts(write_raw(tmp_path / "f.npz", header, a)) == (False, False)
