"""Sweeps keep their certificates as files (issue 26): the rows are unchanged, the files verify."""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from attnrank_lite.checker import check_file
from attnrank_lite.engine.certificate_file import verify_file
from attnrank_lite.laws import ball_law as bl
from attnrank_lite.laws import sweeps as sw
from attnrank_lite.laws.geometry import well_spread_sphere
from attnrank_lite.site import results


def _all_verify(folder):
    files = sorted(folder.rglob("*.npz"))
    assert files
    for f in files:
        assert verify_file(f).ok, f
        assert check_file(f).ok, f
    return files


def test_bracket_sweep_rows_unchanged_and_files_verify(tmp_path):
    X = well_spread_sphere(120, 3)
    kw = dict(points=X, d=3)
    plain = sw.bracket_sweep(lambda b: sw.spherical_instance(X, b), [4.0, 16.0], [0.1, 0.25], **kw)
    kept = sw.bracket_sweep(lambda b: sw.spherical_instance(X, b), [4.0, 16.0], [0.1, 0.25], **kw,
                            certificates=tmp_path / "s", recipe=lambda b: {"Q": X, "beta": b})
    pd.testing.assert_frame_equal(plain, kept)
    files = _all_verify(tmp_path / "s")
    assert [f.name for f in files] == ["beta-16.npz", "beta-4.npz"]


def test_ball_point_and_configuration_sweeps_write_files(tmp_path):
    ball = sw.bracket_sweep(bl.ball_maker(2, 1.0), [16.0], [0.25], certificates=tmp_path / "b")
    assert ball["verified"].all()
    _all_verify(tmp_path / "b")
    X = well_spread_sphere(100, 3)
    plain = sw.point_sweep(X, [8.0], [0.25])
    kept = sw.point_sweep(X, [8.0], [0.25], certificates=tmp_path / "p")
    pd.testing.assert_frame_equal(plain, kept)
    _all_verify(tmp_path / "p")
    sw.configuration_sweep(60, 3, [8.0], [0.25], kinds=("random", "clustered"), certificates=tmp_path / "c")
    assert {f.parent.name for f in _all_verify(tmp_path / "c")} == {"random", "clustered"}


def test_save_table_bundles_and_respects_the_budget(tmp_path, monkeypatch):
    res = tmp_path / "results"
    X = well_spread_sphere(60, 3)
    folder = results.certificate_folder("t", str(res))
    df = sw.bracket_sweep(lambda b: sw.spherical_instance(X, b), [8.0], [0.25], points=X, certificates=folder,
                          recipe=lambda b: {"Q": X, "beta": b})
    results.save_table(df, "t", str(res), show=False, certificates=folder)
    with zipfile.ZipFile(res / "t_certificates.zip") as zf:
        assert zf.namelist() == ["beta-8.npz"]
    assert not (res / results.CERTIFICATE_DIR).exists()  # nothing hidden left to publish
    monkeypatch.setattr(results, "BUNDLE_BUDGET_BYTES", 10)
    folder = results.certificate_folder("t", str(res))
    sw.bracket_sweep(lambda b: sw.spherical_instance(X, b), [8.0], [0.25], certificates=folder,
                     recipe=lambda b: {"Q": X, "beta": b})
    results.save_table(df, "t", str(res), show=False, certificates=folder)
    assert not (res / "t_certificates.zip").exists()
    assert (res / "t_certificates.omitted").read_text().startswith("t: 1 files, ")
    # once the folder's budget is spent the sweep writes no more files, and says how many it left out
    folder = results.certificate_folder("t", str(res))
    again = sw.bracket_sweep(lambda b: sw.spherical_instance(X, b), [8.0, 16.0, 32.0], [0.25],
                             certificates=folder, recipe=lambda b: {"Q": X, "beta": b})
    assert len(list(Path(folder).glob("*.npz"))) == 1
    results.save_table(again, "t", str(res), show=False, certificates=folder)
    assert "1 files, " in (res / "t_certificates.omitted").read_text()
    assert "and 2 more not written" in (res / "t_certificates.omitted").read_text()


def test_certificate_stem():
    assert sw.certificate_stem(beta=16.0) == "beta-16"
    stem = sw.certificate_stem(configuration="well spread", beta=np.float64(0.5))
    assert stem == "configuration-well-spread_beta-0.5"
