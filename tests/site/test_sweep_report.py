"""``sweep --report`` and chapter 7's report: the book's rule, capped rows left out, own commands."""
from __future__ import annotations

import re

import numpy as np
import pytest

from attnrank_lite.laws import law_store, report
from attnrank_lite.laws.verdicts import SLOPE_COLUMNS, WIDTH_SENTENCE
from attnrank_lite.site import cli

SWEEP = ["sweep", "--d", "3", "--n", "60", "--beta", "2", "4", "8", "16", "--eps", "0.25"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "small.sqlite"
    assert cli.main([*SWEEP, "--store", str(path)]) == 0
    return path


def test_the_report_judges_by_the_rule_and_leaves_capped_rows_out(store, capsys):
    """n = 60 points of S^2: at beta = 16 the harmonic count (L+1)^2 of the certificate's degree,
    or its rank, reaches n; such rows must be left out of the fits and counted."""
    capsys.readouterr()
    figure = store.with_name("fig.png")
    assert cli.main(["sweep", "--report", str(store), "--figure", str(figure)]) == 0
    out = capsys.readouterr().out
    rows = law_store.read_store(store)
    deg = rows["degree"].to_numpy(dtype=float)
    capped = (rows["upper"] >= 60) | (np.nan_to_num((deg + 1) ** 2, nan=0) >= 60)
    assert capped.any(), rows  # the check below must be able to fail
    lines = out.splitlines()
    assert f"command: {law_store.read_runs(store).iloc[-1].command}" in lines
    assert "--n 60" in lines[1] and "--store" in lines[1]
    header = next(i for i, ln in enumerate(lines) if ln.split()[:7] == list(SLOPE_COLUMNS))
    table = [ln.split() for ln in lines[header + 1:header + 3]]
    assert [int(t[5]) for t in table] == [int(capped.sum())] * 2  # left_out, both ends
    assert [int(t[3]) for t in table] == [int((~capped).sum())] * 2  # points
    expect = "inconclusive" if (~capped).sum() < 4 else None
    assert expect is None or [t[6] for t in table] == [expect] * 2
    assert re.search(rf"capped rows left out of the fits \({int(capped.sum())}\)", out)
    assert WIDTH_SENTENCE in lines and figure.is_file()


def test_an_empty_store_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "empty.sqlite"
    law_store.open_store(path).close()
    assert cli.main(["sweep", "--report", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'--report'" in err and "no rows" in err and err.count("\n") == 1


def test_the_live_command_is_the_sweep_of_the_parameters():
    cmd = report.sweep_command([2, 3, 5], 400, [2.0, 4.0, 8.0, 16.0], [0.1, 0.25], seed=3)
    args = cli._parser().parse_args(cmd.split()[3:])
    assert (args.d, args.n, args.beta, args.eps, args.seed) == ([2, 3, 5], 400, [2.0, 4.0, 8.0, 16.0], [0.1, 0.25], 3)


def test_the_glued_verdict_counts_are_those_of_the_verdict_column(store):
    rep = report.stored_report(store, prefix="x")
    words = list(rep["law"]["verdict"])
    text = rep["glue"]["x_verdicts"]
    for w in ("inside", "above", "below", "inconclusive"):
        assert f"{w} for {words.count(w)}" in text
    assert text.endswith(f"of {len(words)}")
    assert rep["glue"]["x_capped"] == str(int(rep["law"]["left_out"].max()))


def test_an_exact_law_in_one_plus_beta_has_the_quoted_finite_range_slope():
    """The page says an exact (1+beta)^k shows k times one_plus_slope against log beta."""
    import pandas as pd

    betas = [2.0, 4.0, 8.0, 16.0]
    ends = [int(round(1e6 * (1 + b) ** 1.5)) for b in betas]  # d = 4: k = 1.5
    rows = pd.DataFrame({"d": 4, "n": 10 ** 9, "eps": 0.1, "beta": betas, "lower": ends, "upper": ends})
    slope = report.law_table(rows)["slope"].iloc[0]
    assert slope == pytest.approx(1.5 * report.one_plus_slope(betas), rel=1e-5)
    assert report.one_plus_slope(betas) < 0.9  # noticeably below 1 on this range
