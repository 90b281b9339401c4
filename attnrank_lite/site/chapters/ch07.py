"""Chapter 7 (appendix): the spherical law at scale, a live sweep and the stored paper table.

Its declaration (parameters, profiles, code map) is ``ch07.toml``."""
from ..memory import dense_need
from ..paths import REPO
from ..runtime import Cost
from ..spec import chapter_spec


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


SPEC = chapter_spec(
    __file__,
    memory=_memory,
    runtime=_runtime,
    inputs=_inputs,
)
