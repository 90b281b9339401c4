"""Chapter 7 (appendix): the spherical law at scale, a live sweep and the stored paper table."""
from ..memory import dense_need
from ..paths import REPO
from ..runtime import Cost
from ..spec import ChapterSpec, Param


def _memory(v):
    """The live sweep re-verifies each bracket on the dense n x n matrix (n <= 4096)."""
    yield dense_need(v["n"], v["n"], "n", "the dense re-verification of a live bracket")


def _inputs(v):
    """The sweep store the chapter reads (``REPO / store``, as the notebook opens it)."""
    yield REPO / v["store"]


def _runtime(v):
    """The work of the costly steps: the live sweep (its tasks' :func:`~attnrank_lite.laws.scale.task_cost`),
    reading the store, and the stored rows rechecked from their certificates (dense A, both sides: n^2 per row)."""
    from ...laws.scale import configurations, task_cost  # here: chapter specs load at every start

    rows = len(v["d_values"]) * len(v["betas"]) * len(v["eps_values"])
    work = sum(task_cost(*k) for k in configurations(v["d_values"], v["n"], v["betas"], v["eps_values"]))
    yield Cost("sweep", work, "n",
               f"{rows} live brackets on {v['n']:,} points (dense re-verification)")
    yield Cost("store", 1, "store", "reading the stored sweep, its law tables and figures")
    rows, n = _stored_rows_to_recheck(v)
    yield Cost("recheck", rows * (n / 6000) ** 2, "recheck_sample",
               f"{rows} stored rows rechecked from their certificates (n = {n:,})")


def _stored_rows_to_recheck(v) -> tuple[int, int]:
    """``(rows, largest n)`` the page rechecks from the store's certificates (none without certificates)."""
    from ...laws import law_store  # here: chapter specs load at every start

    path = REPO / v["store"]
    try:
        if not path.is_file() or not law_store.has_certificates(path):
            return 0, 0
        df = law_store.read_store(path)
    except Exception:  # an unreadable store fails in the notebook, with its own message
        return 0, 0
    rows = len(df) if v["recheck_sample"] is None else min(len(df), int(v["recheck_sample"]))
    return rows, int(df["n"].max()) if len(df) else 0


SPEC = ChapterSpec(
    key="ch07", notebook="07_laws_at_scale.ipynb", title="The laws at scale",
    params=(
        Param("d_values", [2, 3, 4, 5], "int_list", "Dimensions of the live sweep (points on S^(d-1)).",
              low=2, high=8, max_len=7),
        Param("n", 1000, "int", "Well-spread points per sphere in the live sweep.", low=50, high=4096),
        Param("betas", [2.0, 4.0, 8.0, 16.0], "float_list",
              "Inverse temperatures of the live sweep (at least 4: the verdict rule needs 4 points).",
              low=0.5, high=1e3, min_len=4, max_len=8),
        Param("eps_values", [0.25], "float_list", "Error levels of the live sweep.",
              low=0.01, high=0.99, max_len=4),
        Param("seed", 0, "int", "Seed of the point sets (d >= 5 start from random points).",
              low=0, high=2**32 - 1),
        Param("store", "attnrank_lite/laws/data/laws_paper.sqlite", "str",
              ("Sweep store read for the paper table (relative to the repository root, or to the "
               "installed package's folder; the default ships with the package).")),
        Param("recheck_sample", 3, "int",
              ("Stored rows rechecked from their certificates at build time, drawn at random "
               "(None: every row shown)."), low=1, high=10**6, nullable=True),
    ),
    profiles={
        "quick": {"d_values": [2, 3, 4], "n": 400, "betas": [2.0, 4.0, 8.0, 16.0], "recheck_sample": 1},
        "paper": {"d_values": [2, 3, 4, 5, 6], "n": 3000, "betas": [2.0, 4.0, 8.0, 16.0],
                  "eps_values": [0.1, 0.25], "recheck_sample": None},
    },
    memory=_memory,
    runtime=_runtime,
    inputs=_inputs,
    code={  # label -> the functions implementing or checking it (under attnrank_lite.)
        "obs-laws-at-scale": "laws.scale.sweep_task laws.scale.run_sweep laws.report.law_table laws.report.capped "
            "laws.verdicts.judge_slope laws.report.law_report laws.law_store.read_store "
            "laws.row_certificates.verify_row laws.report.recheck_stored engine.parallel.run_tasks",
    },
)
