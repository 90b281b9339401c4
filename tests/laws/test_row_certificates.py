"""Stored sweep rows keep their certificates (issue 26): written with the row, rechecked by
``sweep --verify``, ``sweep --report`` and chapter 7; an edited row, a swapped blob, a forged
blob and a missing blob all fail, and a resumed sweep recomputes rows whose blob disagrees."""
from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import sqlite3
import zipfile

import numpy as np
import pandas as pd
import pytest

from attnrank_lite.laws import law_store, report, row_certificates, scale
from attnrank_lite.site import cli, sweep_cli

CONFIG = ([2, 3], 150, [2.0, 8.0], [0.25])


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "clean.sqlite"
    scale.run_sweep(path, *CONFIG, log=lambda s: None)
    return path


@pytest.fixture
def store(clean, tmp_path):
    path = tmp_path / "s.sqlite"
    shutil.copy(clean, path)
    return path


def _sql(path, query, params=()):
    con = sqlite3.connect(str(path))
    with con:
        con.execute(query, params)
    con.close()


def _verify(path, capsys):
    capsys.readouterr()
    status = cli.main(["sweep", "--verify", str(path)])
    out, err = capsys.readouterr()
    return status, out, err


def test_every_row_is_stored_with_a_certificate_that_verifies(store, capsys):
    rows = law_store.read_store(store, certificates=True)
    assert len(rows) == 4 and all(isinstance(b, bytes) and b for b in rows["certificate"])
    status, out, err = _verify(store, capsys)
    assert status == 0 and err == ""
    assert "4 of 4 rows verified from their certificates, 0 failed" in out and out.count("\n") == 1
    for _, r in rows.iterrows():
        names = zipfile.ZipFile(io.BytesIO(r["certificate"])).namelist()
        assert "Q.npy" not in names and "header.npy" in names  # the points are not stored
        header = row_certificates.blob_header(r["certificate"])
        X = scale._points(r["points"], r["n"], r["d"], r["seed"])
        assert header["arrays"]["Q"]["sha256"] == hashlib.sha256(X.tobytes()).hexdigest()
        assert header["brackets"][0]["lower"] == r["lower"] and header["brackets"][0]["upper"] == r["upper"]
        assert len(r["certificate"]) < 20_000


def test_an_edited_row_fails_verify_chapter_7_and_the_report(store, capsys):
    _sql(store, "UPDATE rows SET lower = 1, upper = 1 WHERE d = 3 AND beta = 8.0")
    status, out, err = _verify(store, capsys)
    assert status == 11
    assert err.count("\n") == 1 and "d=3 n=150 beta=8 eps=0.25 well-spread seed=0 [1, 1]" in err
    assert "does not match the row" in err and "the row says [1, 1]" in err
    assert "3 of 4 rows verified from their certificates, 1 failed" in out
    rows, _, _ = report.stored_rows(store)
    check = report.recheck_stored(store, rows, prefix="ch07_paper")  # chapter 7's call
    assert check["checked"] == 4 and check["passed"] == 3 and len(check["failures"]) == 1
    assert "3 of 4 passed" in check["glue"]["ch07_paper_recheck"]
    capsys.readouterr()
    assert cli.main(["sweep", "--report", str(store), "--figure", str(store.with_suffix(".png"))]) == 11
    out, err = capsys.readouterr()
    assert "no law is fitted" in err and "slope" not in out and not store.with_suffix(".png").exists()


def test_a_swapped_blob_fails(store, capsys):
    con = sqlite3.connect(str(store))
    blobs = dict(con.execute("SELECT beta, blob FROM certificates WHERE d = 2").fetchall())
    with con:
        con.execute("UPDATE certificates SET blob = ? WHERE d = 2 AND beta = 2.0", (blobs[8.0],))
        con.execute("UPDATE certificates SET blob = ? WHERE d = 2 AND beta = 8.0", (blobs[2.0],))
    con.close()
    status, out, err = _verify(store, capsys)
    assert status == 11 and err.count("\n") == 2 and "beta = 8.0, the row's is 2" in err
    assert "2 of 4 rows verified" in out


def test_a_forged_blob_that_agrees_with_an_edited_row_fails_on_its_data(store, capsys):
    """The attacker edits the row and the blob's claims alike: only the arithmetic catches it."""
    con = sqlite3.connect(str(store))
    blob, = con.execute("SELECT blob FROM certificates WHERE d = 3 AND beta = 8.0").fetchone()
    zin = zipfile.ZipFile(io.BytesIO(blob))
    header = row_certificates.blob_header(blob)
    header["brackets"][0]["lower"] = header["brackets"][0]["upper"] = 1
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zout:
        for name in zin.namelist():
            if name == "header.npy":
                npy = io.BytesIO()
                text = json.dumps(header, sort_keys=True).encode("utf-8")
                np.lib.format.write_array(npy, np.frombuffer(text, dtype=np.uint8))
                zout.writestr(name, npy.getvalue())
            else:
                zout.writestr(name, zin.read(name))
    with con:
        con.execute("UPDATE certificates SET blob = ? WHERE d = 3 AND beta = 8.0", (out.getvalue(),))
        con.execute("UPDATE rows SET lower = 1, upper = 1 WHERE d = 3 AND beta = 8.0")
    con.close()
    status, _, err = _verify(store, capsys)
    assert status == 11 and err.count("\n") == 1
    assert re.search(r"\[1, 1\]: not verified: bracket 0 \(eps = 0.25\): lower side \((neumann|right-inverse)\) "
                     r"claims 1, its data prove", err), err
    capsys.readouterr()
    assert cli.main(["sweep", "--report", str(store)]) == 11


def test_a_row_without_a_certificate_fails_and_a_resumed_sweep_recomputes_it(store, capsys):
    before = law_store.read_store(store)
    _sql(store, "DELETE FROM certificates WHERE d = 2 AND beta = 8.0")
    _sql(store, "UPDATE rows SET lower = 1, upper = 1 WHERE d = 3 AND beta = 2.0")
    status, out, err = _verify(store, capsys)
    assert status == 11 and "no stored certificate" in err and "(1 without a certificate)" in out
    lines = []
    res = scale.run_sweep(store, *CONFIG, log=lines.append)
    assert res["computed"] == 2 and res["skipped"] == 2
    assert "(2 stored without a certificate that matches the row: recomputed)" in lines[0]
    after = law_store.read_store(store)
    keep = ["d", "beta", "eps", "lower", "upper", "lower_kind", "upper_source", "degree"]
    assert after[keep].equals(before[keep])  # the edited row is back to its certified bracket
    assert _verify(store, capsys)[0] == 0


def test_the_recheck_reads_the_stored_points_not_a_rebuild(store, monkeypatch):
    """Another CPU's BLAS may rebuild the points with other bits: the store keeps each point set
    once and the recheck reads it, so a rebuild one ulp away changes nothing."""
    rows = law_store.read_store(store, certificates=True)
    assert rows["point_set"].map(lambda b: isinstance(b, bytes)).all()
    con = sqlite3.connect(str(store))
    (count,), = con.execute("SELECT COUNT(*) FROM point_sets").fetchall()
    con.close()
    assert count == rows[["d", "n_points"]].drop_duplicates().shape[0]  # each point set once
    real = row_certificates.point_set
    monkeypatch.setattr(row_certificates, "point_set", lambda *a: np.nextafter(real(*a), 2.0))  # one ulp away
    assert row_certificates.verify_row(rows.iloc[0], rows.iloc[0]["certificate"]).ok
    shown, _, _ = report.stored_rows(store)  # chapter 7's and `sweep --report`'s recheck alike
    check = report.recheck_stored(store, shown, prefix="ch07_paper")
    assert check["checked"] == 4 and check["passed"] == 4, check["failures"]


def test_points_that_differ_from_the_certificates_are_named(store, monkeypatch):
    rows = law_store.read_store(store, certificates=True)
    X = row_certificates.npy_array(rows.iloc[0]["point_set"])
    forged = rows.iloc[0].copy()
    forged["point_set"] = row_certificates.npy_bytes(np.nextafter(X, 2.0))  # the stored points, one ulp away
    v = row_certificates.verify_row(forged, forged["certificate"])
    assert not v.ok and "the points the store keeps for this row are not those" in v.line
    # a store without its point sets rebuilds them; rebuilt one ulp away, they are named
    real = row_certificates.point_set
    monkeypatch.setattr(row_certificates, "point_set", lambda *a: np.nextafter(real(*a), 2.0))
    bare = rows.iloc[0].copy()
    bare["point_set"] = None
    v = row_certificates.verify_row(bare, bare["certificate"])
    assert not v.ok and "points rebuilt from (points = well-spread, n = 150, d = 2, seed = 0) differ" in v.line


def test_a_store_without_certificates_says_so(tmp_path, capsys):
    """Stores written before rows kept certificates (the committed one until it is recomputed)."""
    path = tmp_path / "old.sqlite"
    con = law_store.open_store(path)
    row = {"d": 3, "n": 60, "beta": 2.0, "eps": 0.25, "points": "well-spread", "seed": 0, "n_points": 60,
           "lower": 2, "upper": 5, "lower_kind": "neumann", "upper_source": "x", "degree": None,
           "verified": True, "wall_s": 0.1, "cpu_s": 0.1}
    law_store.insert_rows(con, [row, {**row, "beta": 4.0}], law_store.code_hash())
    con.close()
    status, out, err = _verify(path, capsys)
    assert status == 11 and err.count("no stored certificate") == 2
    assert "keeps no certificates: rerun its command" in out
    rows, _, _ = report.stored_rows(path)
    check = report.recheck_stored(path, rows, prefix="ch07_paper")
    assert not check["has_certificates"] and check["checked"] == 0
    assert "keeps no certificates" in check["glue"]["ch07_paper_recheck"]
    assert "2 rows were not rechecked" in check["line"]
    assert sweep_cli.refuse_unverified(path, err=lambda s: None) == 11


def test_a_sample_is_stated(store):
    rows, _, _ = report.stored_rows(store)
    check = report.recheck_stored(store, rows, sample=2, prefix="p")
    assert check["checked"] == 2 and check["passed"] == 2
    assert check["line"].startswith("a sample of 2 of the 4 rows shown (seed 0) was rechecked")
    assert check["line"].endswith(" s") and "2 of 2 passed" in check["line"]


def test_a_row_and_its_certificate_are_committed_together(store):
    con = law_store.open_store(store)
    row = {"d": 5, "n": 10, "beta": 1.0, "eps": 0.1, "points": "random", "seed": 0, "n_points": 10,
           "lower": 6, "upper": 5, "lower_kind": "norm", "upper_source": "x", "degree": None,
           "verified": True, "wall_s": 0.1, "cpu_s": 0.1, "certificate": b"PK"}
    with pytest.raises(sqlite3.IntegrityError):
        law_store.insert_rows(con, [{**row, "lower": 1}, row], "abc")
    assert con.execute("SELECT COUNT(*) FROM certificates WHERE d = 5").fetchone()[0] == 0
    assert con.execute("SELECT COUNT(*) FROM rows WHERE d = 5").fetchone()[0] == 0
    con.close()


def test_chapter_7_estimates_its_recheck_from_the_store(store, tmp_path):
    from attnrank_lite.site.chapters import ch07, get_chapter

    spec = get_chapter("ch07")
    v = {**spec.defaults(), "store": str(store)}  # an absolute path stays itself under REPO /
    assert ch07._stored_rows_to_recheck(v) == (3, 150)
    assert ch07._stored_rows_to_recheck({**v, "recheck_sample": None}) == (4, 150)
    assert any("3 stored rows rechecked from their certificates" in t.what for t in spec.runtime(v))
    old = tmp_path / "old.sqlite"
    law_store.open_store(old).close()
    assert ch07._stored_rows_to_recheck({**v, "store": str(old)}) == (0, 0)


def test_independent_checker_agrees_on_every_row_and_a_disagreement_fails(store, capsys, monkeypatch):
    capsys.readouterr()
    assert cli.main(["sweep", "--verify", str(store), "--independent"]) == 0
    assert "4 of 4 rows verified from their certificates (and by the independent checker)" in capsys.readouterr().out
    _sql(store, "UPDATE rows SET lower = 1, upper = 1 WHERE d = 3 AND beta = 8.0")
    assert cli.main(["sweep", "--verify", str(store), "--independent"]) == 11
    assert capsys.readouterr().err.count("\n") == 1
    # a checker that says the opposite of verify fails every row, naming the disagreement
    import attnrank_lite.checker as checker

    class Report:
        ok, line = False, "checked: nothing"

    monkeypatch.setattr(checker, "check_file", lambda path: Report())
    assert cli.main(["sweep", "--verify", str(store), "--independent"]) == 11
    err = capsys.readouterr().err
    assert err.count("the independent checker disagrees with verify (verify: verified, checker: checked") == 3
    assert cli.main(["sweep", "--report", str(store), "--independent"]) == 2


def test_chapter_7_prints_where_its_stored_rows_come_from(store):
    paper = report.stored_report(store, prefix="ch07_paper")
    rows, _, _ = report.stored_rows(store)
    recheck = report.recheck_stored(store, rows, sample=1, prefix="ch07_paper")
    lines = report.provenance_lines("the.sqlite", paper, recheck)
    assert lines[0] == f"rechecked: {recheck['line']}" and lines[1] == "store: the.sqlite"
    assert f"command: {law_store.read_runs(store).iloc[-1].command}" in lines  # the store's own runs table
    assert lines[-1] == f"code hash of this build: {law_store.code_hash()}"


def test_a_store_of_several_runs_names_every_command_in_order():
    runs = pd.DataFrame({"command": ["sweep --d 2 3 --n 600", "sweep --d 3 --n 1200"],
                         "executor": ["this process", "this process"],
                         "finished_utc": ["2026-12-05T01:00:00Z", "2026-12-05T02:00:00Z"],
                         "wall_s": [10.0, 32.5], "computed": [4, 2]})
    run = report.combined_run(runs)
    assert run.command == "sweep --d 2 3 --n 600; sweep --d 3 --n 1200" and run.executor == "this process"
    assert (run.wall_s, run.computed, run["count"], run.finished_utc) == (42.5, 6, 2, "2026-12-05T02:00:00Z")
    lines = report.provenance_lines("s.sqlite", {"run": run, "summary": {"task_cpu_s": 1.0}, "code": "c",
                                                 "code_now": "c"}, {"line": "ok"})
    assert [x for x in lines if x.startswith("command: ")] == [f"command: {c}" for c in runs.command]
    assert "run wall time: 42 s for 6 rows (2 runs)" in lines
    assert report.combined_run(runs.iloc[:0])["count"] == 0
