"""Sweeps on an executor give the sequential brackets; the sweep store; the law table."""
from __future__ import annotations

import sqlite3
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import numpy as np
import pandas as pd
import pytest

from attnrank_lite.engine.streaming import point_bracket
from attnrank_lite.laws import law_store, report, scale
from attnrank_lite.laws import sweeps as sw
from attnrank_lite.laws.geometry import fibonacci_sphere, well_spread_sphere
from attnrank_lite.laws.verdicts import SLOPE_COLUMNS

BRACKET = ["lower", "upper", "lower_kind", "upper_source", "verified"]


@pytest.fixture(scope="module")
def pool():
    with ProcessPoolExecutor(max_workers=2) as ex:
        yield ex


def test_point_sweep_on_worker_processes_gives_the_sequential_brackets(pool):
    X = fibonacci_sphere(300)
    seq = sw.point_sweep(X, [4.0, 16.0, 8.0], [0.1, 0.25], d=3)
    par = sw.point_sweep(X, [4.0, 16.0, 8.0], [0.1, 0.25], d=3, executor=pool)
    assert list(par["beta"]) == [4.0, 4.0, 16.0, 16.0, 8.0, 8.0]  # submission order
    pd.testing.assert_frame_equal(seq[["beta", "eps", "degree", *BRACKET]],
                                  par[["beta", "eps", "degree", *BRACKET]])


def test_bracket_and_configuration_sweeps_on_worker_processes(pool):
    X = fibonacci_sphere(200)
    make = partial(sw.spherical_instance, X)
    seq = sw.bracket_sweep(make, [8.0, 2.0], [0.25], points=X, d=3)
    par = sw.bracket_sweep(make, [8.0, 2.0], [0.25], points=X, d=3, executor=pool)
    pd.testing.assert_frame_equal(seq, par)
    seq = sw.configuration_sweep(150, 3, [4.0, 8.0], [0.25], kinds=("random", "clustered"))
    par = sw.configuration_sweep(150, 3, [4.0, 8.0], [0.25], kinds=("random", "clustered"),
                                 executor=pool)
    pd.testing.assert_frame_equal(seq, par)


def test_sweep_rows_are_certified_brackets_of_the_rebuilt_points(tmp_path):
    store = tmp_path / "s.sqlite"
    res = scale.run_sweep(store, [2, 4], 240, [2.0, 8.0], [0.25], log=lambda s: None)
    assert res["computed"] == 4 and res["skipped"] == 0
    df = law_store.read_store(store)
    assert len(df) == 4 and df["verified"].all()
    for r in df.itertuples():
        X = well_spread_sphere(240, r.d, seed=0)
        b = point_bracket(X, r.beta, r.eps)
        A = sw.spherical_instance(X, r.beta)
        assert b.verify(A, r.eps)
        # the stored bracket is no wider than the plain streamed one, and both are certified
        assert b.lower <= r.upper and r.lower <= b.upper
        assert r.lower <= r.upper and r.wall_s > 0 and r.cpu_s > 0
    again = scale.run_sweep(store, [2, 4], 240, [2.0, 8.0, 4.0], [0.25], log=lambda s: None)
    assert again["skipped"] == 4 and again["computed"] == 2
    df2 = law_store.read_store(store)
    assert len(df2) == 6
    pd.testing.assert_frame_equal(df2[df2.beta != 4.0].reset_index(drop=True), df)


def test_store_refuses_an_inverted_bracket_and_keeps_committed_rows(tmp_path):
    con = law_store.open_store(tmp_path / "s.sqlite")
    row = {"d": 3, "n": 10, "beta": 1.0, "eps": 0.1, "points": "random", "seed": 0, "n_points": 10,
           "lower": 2, "upper": 5, "lower_kind": "norm", "upper_source": "x", "degree": None,
           "verified": True, "wall_s": 0.1, "cpu_s": 0.1}
    law_store.insert_rows(con, [row], "abc")
    with pytest.raises(sqlite3.IntegrityError):
        law_store.insert_rows(con, [{**row, "beta": 2.0}, {**row, "beta": 3.0, "lower": 6}], "abc")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    df = law_store.read_store(tmp_path / "s.sqlite")
    assert list(df["beta"]) == [1.0]  # the failed transaction left nothing behind
    assert law_store.stored_keys(law_store.open_store(tmp_path / "s.sqlite"), "abc") == \
        {(3, 10, 1.0, 0.1, "random", 0)}


def _rows(d, betas, lower, upper, n=10 ** 9, eps=0.1, degree=None):
    return [{"d": d, "n": n, "n_points": n, "points": "well-spread", "eps": eps, "beta": b,
             "lower": lo, "upper": up, "degree": None if degree is None else degree[i]}
            for i, (b, lo, up) in enumerate(zip(betas, lower, upper))]


def test_law_table_recovers_exact_power_laws_and_judges_them_by_the_rule():
    noise = {64.0: 1.05, 256.0: 0.95, 1024.0: 1.02, 4096.0: 0.98}  # symmetric: the fit stays near
    rows = [r for d in (3, 5) for r in _rows(
        d, list(noise), [int(round(3 * v * b ** ((d - 1) / 2))) for b, v in noise.items()],
        [int(round(9 * v * b ** ((d - 1) / 2))) for b, v in noise.items()])]
    t = report.law_table(pd.DataFrame(rows))
    assert list(t.columns[:7]) == list(SLOPE_COLUMNS)
    assert list(t["d"]) == [3, 3, 5, 5] and list(t["end"]) == ["lower", "upper"] * 2
    np.testing.assert_allclose(t["slope"], [1.0, 1.0, 2.0, 2.0], atol=0.02)
    assert (t["ci_low"] < t["slope"]).all() and (t["slope"] < t["ci_high"]).all()
    assert list(t["verdict"]) == ["inside"] * 4 and list(t["reference"]) == [1.0, 1.0, 2.0, 2.0]
    assert (t["points"] == 4).all() and (t["left_out"] == 0).all()


def test_a_law_table_verdict_can_fail():
    """Ends growing like beta^1.5 on d = 3 (exponent 1): the rule says above, not inside."""
    betas = [4.0, 8.0, 16.0, 32.0, 64.0]
    up = [int(round(5 * b ** 1.5 * (1.03 if i % 2 else 0.97))) for i, b in enumerate(betas)]
    lo = [int(round(0.5 * b ** 0.5)) + 1 for b in betas]
    t = report.law_table(pd.DataFrame(_rows(3, betas, lo, up))).set_index("end")
    assert t.loc["upper", "verdict"] == "above" and t.loc["upper", "ci_low"] > 1.0
    assert t.loc["lower", "verdict"] == "below"


def test_capped_rows_are_left_out_of_both_fits_and_counted():
    """d = 6: a harmonic degree-11 certificate spans N(6, <= 11) = 7,371 functions; with n = 6,000
    it is the trivial one. The fit of the other rows must equal a plain fit without them."""
    betas = [2.0, 4.0, 8.0, 16.0, 32.0]
    lower, upper = [7, 17, 67, 150, 224], [27, 182, 1254, 3000, 6000]
    rows = pd.DataFrame(_rows(6, betas, lower, upper, n=6000, degree=[2, 4, 7, 11, None]))
    assert list(report.capped(rows)) == [False, False, False, True, True]  # count, then upper = n
    t = report.law_table(rows).set_index("end")
    assert (t["left_out"] == 2).all() and (t["points"] == 3).all()
    assert (t["verdict"] == "inconclusive").all()  # 3 points: the rule gives no verdict
    for end, ends in (("lower", lower), ("upper", upper)):
        slope = np.polyfit(np.log(betas[:3]), np.log(ends[:3]), 1)[0]
        assert t.loc[end, "slope"] == pytest.approx(slope)


def test_the_harmonic_count_of_a_row_is_the_dimension_of_polynomials_on_the_sphere():
    """Brute force: the rank of all monomials of degree <= L at many points of S^(d-1)."""
    from itertools import combinations_with_replacement

    rng = np.random.default_rng(0)
    for d, L in ((3, 4), (4, 3), (6, 2)):
        X = rng.standard_normal((400, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        cols = [np.prod(X[:, list(c)], axis=1) for k in range(L + 1)
                for c in combinations_with_replacement(range(d), k)]
        rank = np.linalg.matrix_rank(np.column_stack(cols))
        got = report.certificate_count(pd.DataFrame({"d": [d], "degree": [L]}))
        assert got[0] == rank
    assert np.isnan(report.certificate_count(pd.DataFrame({"d": [3], "degree": [None]}))[0])


def test_exactly_geometric_ends_give_a_zero_width_interval_and_need_four_points():
    """Integer ends 4, 8, 16, 32 lie on one line: the interval has zero width, and with 4 points
    the rule judges it (slope 1 against 1: inside; against 0.5: above); 3 points: inconclusive."""
    betas, ends = [2.0, 4.0, 8.0, 16.0], [4, 8, 16, 32]
    for d, verdict in ((3, "inside"), (2, "above")):
        t = report.law_table(pd.DataFrame(_rows(d, betas, ends, ends)))
        assert (t["ci_high"] - t["ci_low"]).abs().max() < 1e-9 and (t["verdict"] == verdict).all()
    t = report.law_table(pd.DataFrame(_rows(3, betas[:3], ends[:3], ends[:3])))
    assert (t["verdict"] == "inconclusive").all()


@pytest.mark.parametrize("args, param", [
    (([1], 100, [1.0, 2.0], [0.1]), "'d'"),
    (([3], 4, [1.0, 2.0], [0.1]), "'n'"),
    (([3], 100, [1.0], [0.1]), "'beta'"),
    (([3], 100, [1.0, -2.0], [0.1]), "'beta'"),
    (([3], 100, [1.0, 2.0], [1.5]), "'eps'"),
])
def test_parameter_errors_name_the_parameter(args, param):
    with pytest.raises(ValueError, match=f"parameter {param}"):
        scale.check_sweep_parameters(*args)


def test_task_memory_grows_with_beta_and_d():
    a, _ = scale.task_memory(4, 20000, 8.0, 0.1, "well-spread", 0)
    b, what = scale.task_memory(4, 20000, 64.0, 0.1, "well-spread", 0)
    assert 0 < a < b and "20,000" in what
    # chapter 2's estimate for n = 20,000, beta = 64 (3 copies of 20,000 x (6,289 + 2,048)), and
    # the row's certificate, written and checked on the dense matrix (4 arrays of 20,000 x 20,000)
    assert b == pytest.approx(8 * 3 * 20000 * (12 * 65 ** 1.5 + 2048) + 8 * 4 * 20000 ** 2)
    assert "certificate's dense 20,000 x 20,000" in what


def test_sweeps_check_each_task_against_the_smallest_worker(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from attnrank_lite.engine import parallel

    monkeypatch.setattr(parallel, "executor_memory_limit", lambda ex: (2.0 ** 20, "tcp://w:1"))
    X = fibonacci_sphere(200)
    with ThreadPoolExecutor(1) as ex:
        with pytest.raises(parallel.TaskTooLarge, match=r"task beta=4 needs about .* basis and row blocks "
                                                        r"\(200 x 2,108\).* smallest worker \(tcp://w:1\)"):
            sw.point_sweep(X, [4.0, 8.0], [0.25], executor=ex)  # 2,108 = 12 (1 + 4) + 2048
        with pytest.raises(parallel.TaskTooLarge, match="random beta=4"):
            sw.configuration_sweep(150, 3, [4.0], [0.25], kinds=("random",), executor=ex)


def test_a_task_row_does_not_depend_on_the_tasks_run_before_it():
    """A Dask worker runs whichever tasks it is given: a row computed after a hotter task of the
    same point set (whose shared harmonic basis grows further) must equal the row computed first
    in a fresh process, its l1-fitted upper certificate's source included (CI once found
    "l1 fit in harmonic degree 11" after the eps = 0.1 task and "degree 9" without it)."""
    from attnrank_lite.laws import scale

    keep = ("lower", "upper", "lower_kind", "upper_source", "degree", "verified")
    rows = []
    scale._basis.cache_clear()
    for beta, eps in [(4.0, 0.25), (16.0, 0.25)]:
        rows.append(scale.sweep_task(3, 300, beta, eps, "well-spread", 0))
    scale.sweep_task(3, 300, 16.0, 0.1, "well-spread", 0)
    scale._basis("well-spread", 300, 3, 0).grow_to(20)  # far beyond what any task here needs
    for (beta, eps), first in zip([(4.0, 0.25), (16.0, 0.25)], rows):
        again = scale.sweep_task(3, 300, beta, eps, "well-spread", 0)
        assert {k: first[k] for k in keep} == {k: again[k] for k in keep}
    assert rows[1]["upper_source"].startswith("l1 fit in harmonic")  # the case CI caught


def test_the_costliest_configurations_are_submitted_first():
    from attnrank_lite.laws import scale

    keys = scale.configurations([4], 4200, [8.0, 16.0, 32.0, 64.0], [0.1, 0.25])
    ranked = sorted(keys, key=lambda k: -scale.task_cost(*k))
    assert ranked[0][2:4] == (64.0, 0.1) and ranked[-1][2:4] == (8.0, 0.25)
    assert scale.task_cost(3, 2000, 8.0, 0.1, "random", 0) > scale.task_cost(3, 1000, 8.0, 0.1, "random", 0)


def test_the_committed_paper_store_was_computed_by_this_code():
    """Chapter 7's paper table is read from the store its ``store`` parameter names (it ships with
    the package); an edit of the code a row's computation imports changes the code identity
    (laws/code_identity.py), and the page would then show a table of other code. Recompute the
    store with the command in its runs table (n = 12,000: over an hour with --workers 2; see
    benchmarks/README.md, "The stored sweep at n = 12,000", for its memory)."""
    from attnrank_lite.laws import law_store
    from attnrank_lite.site.chapters import get_chapter
    from attnrank_lite.site.paths import REPO

    store = REPO / get_chapter("ch07").defaults()["store"]
    rows, runs = law_store.read_store(store), law_store.read_runs(store)
    assert len(rows) == 40 and rows["verified"].all()
    assert set(rows["code_hash"]) == {law_store.code_hash()}, (
        f"recompute the store: move it away and run `{runs.iloc[-1].command}`")


def test_the_committed_paper_store_keeps_certificates_that_verify():
    """Every row of chapter 7's store is stored with its certificate (issue 26); the two cheapest
    rows are rechecked here (``sweep --verify STORE`` rechecks all, chapter 7 a sample). A store
    written before rows kept certificates fails with what to do, not a traceback."""
    from attnrank_lite.laws import law_store
    from attnrank_lite.laws.row_certificates import recheck_rows
    from attnrank_lite.site.chapters import get_chapter
    from attnrank_lite.site.paths import REPO

    store = REPO / get_chapter("ch07").defaults()["store"]
    rows, runs = law_store.read_store(store, certificates=True), law_store.read_runs(store)
    missing = int(sum(b is None for b in rows["certificate"]))
    assert missing == 0, (f"the store keeps no certificate for {missing} of its {len(rows)} rows (written "
                          f"before rows kept them): move it away and run `{runs.iloc[-1].command}`")
    res = recheck_rows(rows.sort_values(["d", "beta", "eps"]).head(2))
    assert res["ok"].all(), list(res["line"])


def test_the_l1_family_keeps_its_columns_at_the_stored_sweeps_n():
    """The engine bounds the l1 family by ``n m upper``: 111 columns at n = 6,000, 27 at 12,000. A
    sweep row keeps ``L1_COLUMNS`` at any n and the engine's limit where that is larger."""
    from attnrank_lite.engine.assemble import L1_LIMIT

    assert scale.sweep_l1_limit(12_000) // 12_000 ** 2 == scale.L1_COLUMNS >= 111
    assert scale.sweep_l1_limit(3_000) == L1_LIMIT  # smaller n: the engine's limit allows more columns
    assert L1_LIMIT // 12_000 ** 2 < 30  # what the engine's limit alone would allow
