"""Issue 24 item 8: chapter 1 at a small eps, where the bracket's lower end is a Frobenius-tail
certificate (no rows or groups). The chapter used to fail after the work started
(``AttributeError: 'FrobeniusTailCertificate' object has no attribute 'mass_matrix'``); it now
draws a cluster-mass certificate of its own, and eps = 0 is refused before any work."""
from __future__ import annotations

import pandas as pd
import pytest

from attnrank_lite import rank_bracket, softmax_attention
from attnrank_lite.engine.certificates import FrobeniusTailCertificate
from attnrank_lite.laws.geometry import circle_points
from attnrank_lite.site import runner
from attnrank_lite.site.params import ParameterError

SMALL = {"n_circle": 64, "split_factors": [1, 4], "n_trials": 20}


def test_chapter_1_runs_where_the_frobenius_tail_wins(tmp_path):
    eps = 0.01
    A = softmax_attention(circle_points(SMALL["n_circle"]), beta=runner.resolve_parameters(
        "ch01", SMALL, "quick")[1]["beta"])
    assert isinstance(rank_bracket(A, eps).lower_certificate, FrobeniusTailCertificate)  # the case
    rec = runner.run_chapter("ch01", {**SMALL, "eps": eps}, profile="quick", outdir=tmp_path, timeout=300)
    rows = pd.read_csv(tmp_path / "ch01" / "results" / "ch01" / "circle_certificate_rows.csv")
    assert len(rows) > 0 and (rows.own_mass > (1 + eps) / 2).all()
    assert rec["parameters"]["eps"] == eps


def test_chapter_1_refuses_eps_zero_before_any_work(tmp_path):
    with pytest.raises(ParameterError, match="parameter 'eps'"):
        runner.run_chapter("ch01", {"eps": 0.0}, profile="quick", outdir=tmp_path / "out")
    assert not (tmp_path / "out").exists()
