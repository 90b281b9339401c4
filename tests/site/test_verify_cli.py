"""``python -m attnrank_lite verify FILE...``: one line per file, exit status of the first failure."""
from __future__ import annotations

import pytest
from certificate_cases import read_raw, write_all, write_raw

from attnrank_lite.site import cli


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("cli"))


def test_verify_prints_one_line_per_file(files, capsys):
    paths = [str(files["neumann"]), str(files["harmonic"])]
    assert cli.main(["verify", *paths]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert out[0] == f"{paths[0]}: verified: 3 <= rank_0.25(A) <= 3, n = 12, kinds neumann/subspace"
    assert out[1].startswith(f"{paths[1]}: verified: ") and "kinds neumann/harmonic" in out[1]


def test_verify_independent_agrees(files, capsys):
    assert cli.main(["verify", "--independent", str(files["right-inverse"])]) == 0
    assert capsys.readouterr().out.strip().endswith("independent checker agrees")


def test_verify_names_the_failing_side_and_goes_on(tmp_path, files, capsys):
    header, arrays = read_raw(files["cluster-mass"])
    header["brackets"][0]["lower"] = 4  # claims more than its 3 rows prove
    forged = write_raw(tmp_path / "forged.npz", header, arrays)
    status = cli.main(["verify", str(forged), str(files["norm"])])
    assert status == cli.EXIT["certificate not verified"] == 11
    cap = capsys.readouterr()
    assert cap.err.count("\n") == 1 and "lower side (cluster-mass)" in cap.err and cap.err.startswith("error: ")
    assert cap.out.count("verified:") == 1  # the second file was still checked
    header, arrays = read_raw(files["cluster-mass"])
    header["brackets"][0]["upper"] = 2
    forged = write_raw(tmp_path / "forged2.npz", header, arrays)
    assert cli.main(["verify", "--independent", str(forged)]) == 11
    assert "upper side (subspace)" in capsys.readouterr().err


def test_verify_refuses_bad_files_with_one_line(tmp_path, files, capsys):
    (tmp_path / "pickle.npz").write_bytes(b"\x80\x04K\x01.")
    data = files["neumann"].read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 3])
    for name in ("pickle.npz", "cut.npz"):
        assert cli.main(["verify", str(tmp_path / name)]) == cli.EXIT["certificate file refused"] == 12
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "refused" in err
    assert cli.main(["verify", str(tmp_path / "missing.npz")]) == cli.EXIT["file system error"]
    with pytest.raises(SystemExit) as info:
        cli.main(["verify"])
    assert info.value.code == 2


def test_verify_through_the_entry_point(files, tmp_path):
    """``python -m attnrank_lite verify`` in a fresh process: one line out, one line err, statuses."""
    import os
    import subprocess
    import sys

    from attnrank_lite.site.paths import REPO

    (tmp_path / "evil.npz").write_bytes(b"\x80\x04K\x01.")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, "-m", "attnrank_lite", "verify", str(files["frobenius-tail"]),
                          str(tmp_path / "evil.npz")], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 12
    assert res.stdout.count("\n") == 1 and "verified: 3 <= rank_0.25(A) <= 3" in res.stdout
    assert res.stderr.count("\n") == 1 and "evil.npz: refused" in res.stderr
