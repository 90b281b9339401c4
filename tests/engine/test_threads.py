"""single_threaded limits BLAS through threadpoolctl and restores the previous limits."""
from __future__ import annotations

from threadpoolctl import threadpool_info

from attnrank_lite.engine.threads import single_threaded


def test_blas_limited_inside_and_restored_after():
    before = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    with single_threaded():
        inside = threadpool_info()
        assert inside, "numpy's BLAS should be visible to threadpoolctl"
        assert all(p["num_threads"] == 1 for p in inside)
    after = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    assert after == before


def test_restored_after_an_exception():
    before = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    try:
        with single_threaded():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert {p["filepath"]: p["num_threads"] for p in threadpool_info()} == before
