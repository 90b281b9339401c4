"""Certificate files (SPEC section 6): round trips of every kind and one-line refusals."""
from __future__ import annotations

import json
import os
import pickle
import zipfile

import numpy as np
import pytest
from certificate_cases import block_brackets, block_matrix, harmonic_brackets, read_raw, write_all, write_raw

from attnrank_lite.engine import RankBracket, SubspaceCertificate, softmax_attention
from attnrank_lite.engine.certificate_file import CertificateFileError, load_bracket, load_brackets, verify_file
from attnrank_lite.engine.certificate_io import read_certificate_file, save_brackets


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("certs"))


def test_every_kind_round_trips_and_verifies(files):
    expect = {"cluster-mass": (3, 3), "neumann": (3, 3), "right-inverse": (3, 3), "frobenius-tail": (3, 3),
              "norm": (1, 3), "float64-factors": (3, 3)}
    for name, path in files.items():
        verdict = verify_file(path)
        assert verdict.ok, (name, verdict.line)
        assert verdict.line.startswith("verified: ")
        if name in expect:
            lo, up = expect[name]
            assert f"{lo} <= rank_0.25(A) <= {up}, n = 12" in verdict.line
            assert (name if name != "float64-factors" else "neumann") in verdict.line
    # the file's brackets are the saved ones, and they verify on the matrix rebuilt independently
    b = load_bracket(files["right-inverse"])
    assert (b.lower, b.upper, b.lower_kind) == (3, 3, "right-inverse")
    assert b.verify(block_matrix(), 0.25)


def test_several_brackets_share_a_file_and_harmonic_is_stored_as_its_degree(files):
    P, beta, hb = harmonic_brackets()
    cf, brackets = load_brackets(files["harmonic"])
    assert [(b.eps, b.lower, b.upper) for b in brackets] == [(x.eps, x.lower, x.upper) for x in hb]
    assert all(e["upper_certificate"]["kind"] == "harmonic" for e in cf.header["brackets"])
    assert set(cf.arrays) == {"Q"} | {k for k in cf.arrays if "lower" in k}  # no factors stored
    A = softmax_attention(P, beta=beta)
    assert all(b.verify(A) for b in brackets)
    with pytest.raises(ValueError, match="pass eps"):
        load_bracket(files["harmonic"])
    assert load_bracket(files["harmonic"], eps=0.5).upper == hb[1].upper


def test_factors_are_float32_only_when_the_rounded_factors_verify(tmp_path, files):
    header, arrays = read_raw(files["neumann"])
    assert header["brackets"][0]["upper_certificate"]["factors_dtype"] == "float32"
    header64, _ = read_raw(files["float64-factors"])
    assert header64["brackets"][0]["upper_certificate"]["factors_dtype"] == "float64"
    # factors whose float32 rounding breaks the certificate: error exactly eps in float64
    A = np.array([[0.5, 0.5], [0.5, 0.5]])
    L = np.array([[1.0], [1.0]])
    R = np.array([[0.5 + 0.125 / 3, 0.5 - 0.125 / 3]])  # not exact in float32
    err = np.abs(A - L @ R).sum(axis=1).max()
    b = RankBracket(float(err), block_brackets()["norm"].lower_certificate, SubspaceCertificate(L, R))
    assert b.verify(A)
    save_brackets(tmp_path / "tight.npz", b, A=A)
    h, arr = read_raw(tmp_path / "tight.npz")
    assert h["brackets"][0]["upper_certificate"]["factors_dtype"] == "float64"
    assert verify_file(tmp_path / "tight.npz").ok


def test_save_refuses_a_bracket_that_does_not_verify(tmp_path):
    good = block_brackets()["cluster-mass"]
    bad = RankBracket(0.25, good.lower_certificate, SubspaceCertificate(np.ones((12, 1)), np.full((1, 12), 1 / 12)))
    with pytest.raises(ValueError, match="does not verify"):
        bad.save(tmp_path / "bad.npz", A=block_matrix())
    assert not (tmp_path / "bad.npz").exists()
    with pytest.raises(ValueError, match="either"):
        good.save(tmp_path / "x.npz")


def test_rankbracket_save_writes_the_recipe(tmp_path):
    P, beta, hb = harmonic_brackets((0.3,))
    path = hb[0].save(tmp_path / "one.npz", Q=P, beta=beta)
    header, arrays = read_raw(path)
    assert header["instance"]["kind"] == "attention" and header["instance"]["beta"] == beta
    np.testing.assert_array_equal(arrays["Q"], P)  # stored as given: no arithmetic, exact on any CPU
    assert verify_file(path).ok


def _refused(path, match):
    with pytest.raises(CertificateFileError, match=match) as info:
        read_certificate_file(path)
    assert "\n" not in str(info.value)


def test_refuses_pickles_and_never_runs_them(tmp_path):
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    with open(tmp_path / "evil.npz", "wb") as fh:
        pickle.dump(Evil(), fh)
    _refused(tmp_path / "evil.npz", "no zip archive")
    # an .npz whose member is a pickled object array
    with open(tmp_path / "obj.npz", "wb") as fh:
        np.savez(fh, header=np.frombuffer(b"{}", dtype=np.uint8), x=np.array([Evil()], dtype=object))
    _refused(tmp_path / "obj.npz", "dtype")
    assert not marker.exists()


def test_refuses_truncated_files(tmp_path, files):
    data = files["neumann"].read_bytes()
    for cut in (len(data) // 2, len(data) - 30, 100):
        (tmp_path / "t.npz").write_bytes(data[:cut])
        _refused(tmp_path / "t.npz", "truncated|corrupt|sha256|no header")


def test_refuses_wrong_versions_and_formats(tmp_path, files):
    header, arrays = read_raw(files["neumann"])
    for version in (2, 0, "1", 1.0, None):
        write_raw(tmp_path / "v.npz", {**header, "version": version}, arrays)
        _refused(tmp_path / "v.npz", "version")
    write_raw(tmp_path / "f.npz", {**header, "format": "something-else"}, arrays)
    _refused(tmp_path / "f.npz", "format")


def test_refuses_sha256_mismatch(tmp_path, files):
    header, arrays = read_raw(files["cluster-mass"])
    arrays["A"] = arrays["A"].copy()
    arrays["A"][0, 0] = 0.3
    write_raw(tmp_path / "s.npz", header, arrays, rehash=False)
    _refused(tmp_path / "s.npz", "sha256")


def test_refuses_oversized_arrays(tmp_path, files):
    with pytest.raises(CertificateFileError, match="larger than the limit"):
        read_certificate_file(files["cluster-mass"], max_array_bytes=1000)
    # a member whose .npy header declares a huge shape is refused before anything is allocated
    header, arrays = read_raw(files["cluster-mass"])
    path = write_raw(tmp_path / "big.npz", header, arrays)
    raw = np.lib.format.header_data_from_array_1_0(arrays["A"])
    with zipfile.ZipFile(path, "a") as zf:
        with zf.open("huge.npy", "w") as fp:
            np.lib.format.write_array_header_1_0(fp, {**raw, "shape": (10**6, 10**6)})
    _refused(path, "larger than the limit")


def test_refuses_malformed_headers(tmp_path, files):
    header, arrays = read_raw(files["cluster-mass"])
    blob = json.dumps(header).replace('"eps": 0.25', '"eps": NaN').encode()
    assert b"NaN" in blob
    with open(tmp_path / "nan.npz", "wb") as fh:
        np.savez(fh, header=np.frombuffer(blob, dtype=np.uint8), **arrays)
    _refused(tmp_path / "nan.npz", "non-finite")
    with open(tmp_path / "junk.npz", "wb") as fh:
        np.savez(fh, header=np.frombuffer(b"\xff\xfe not json", dtype=np.uint8), **arrays)
    _refused(tmp_path / "junk.npz", "JSON")
    write_raw(tmp_path / "extra.npz", {**header, "run": "rm -rf /"}, arrays)
    _refused(tmp_path / "extra.npz", "unknown fields")
    write_raw(tmp_path / "member.npz", header, {**arrays, "spare": np.zeros(3)})
    _refused(tmp_path / "member.npz", "named by no field")
    complex_arrays = {**arrays, "A": arrays["A"].astype(np.complex128)}
    write_raw(tmp_path / "complex.npz", header, complex_arrays)
    _refused(tmp_path / "complex.npz", "dtype")
