"""Chapters side by side: at most ``jobs`` at once, within the memory available, one BLAS thread
each at the default (issue 16)."""
import pytest

from attnrank_lite.site import schedule
from attnrank_lite.site.chapters import all_chapters
from attnrank_lite.site.memory import largest_need
from attnrank_lite.site.schedule import KERNEL_OVERHEAD, THREAD_VARS, next_to_start, plan_memory, thread_env

GiB = 2.0 ** 30


def test_at_most_jobs_at_once():
    assert next_to_start([1.0, 1.0], [1.0, 1.0], jobs=2, budget=None) is None
    assert next_to_start([1.0, 1.0], [1.0], jobs=2, budget=None) == 0


def test_memory_bounds_what_runs_together():
    # 6 GiB free, 4 GiB running: the 3 GiB chapter waits, the 1 GiB one behind it may start
    assert next_to_start([3 * GiB, 1 * GiB], [4 * GiB], jobs=4, budget=6 * GiB) == 1
    assert next_to_start([3 * GiB], [4 * GiB], jobs=4, budget=6 * GiB) is None
    # alone a chapter always starts (it was checked against the machine before the build)
    assert next_to_start([7 * GiB], [], jobs=4, budget=6 * GiB) == 0


def test_simulated_build_never_exceeds_the_budget():
    """Drive next_to_start like the build loop does (finish the oldest when nothing can start)."""
    needs = [5 * GiB, 1 * GiB, 4 * GiB, 2 * GiB, 3 * GiB, 0.5 * GiB]
    budget, jobs = 6 * GiB, 3
    pending, running, peak, started = list(needs), [], 0.0, 0
    while pending or running:
        i = next_to_start(pending, running, jobs, budget)
        if i is None:
            running.pop(0)
            continue
        running.append(pending.pop(i))
        started += 1
        assert len(running) <= jobs
        peak = max(peak, sum(running))
    assert started == len(needs) and peak <= budget


def test_thread_limits():
    env = thread_env(jobs=2, cores=2)
    assert set(env) == set(THREAD_VARS) and set(env.values()) == {"1"}
    assert set(thread_env(jobs=2, cores=16).values()) == {"8"}
    assert set(thread_env(jobs=32, cores=16).values()) == {"1"}


@pytest.mark.parametrize("spec", all_chapters(), ids=lambda s: s.key)
def test_plan_memory_is_the_estimate_plus_a_kernel(spec):
    values = spec.validate(spec.profile("book"))
    need = largest_need(spec, values)
    assert plan_memory(spec, values) == pytest.approx((need.bytes if need else 0) + KERNEL_OVERHEAD)


def test_side_by_side_reports_a_failing_chapter(tmp_path, monkeypatch):
    """A chapter whose process fails is reported with that process's one-line error and exit
    status (5: cell timeout); the chapter running beside it is stopped."""
    fake = tmp_path / "fake-cli"
    fake.write_text("#!/bin/sh\n"
                    'case "$2" in ch05) echo "error: ch05: cell 3 ran longer than the timeout" >&2; exit 5;; '
                    "*) sleep 30;; esac\n")
    fake.chmod(0o755)
    monkeypatch.setattr(schedule, "CHILD", (str(fake),))
    items = [(s, s.validate(s.profile("quick"))) for s in all_chapters() if s.key in ("ch01", "ch05")]
    with pytest.raises(schedule.CellTimeout, match="^ch05: cell 3 ran longer than the timeout$"):
        schedule.execute_chapters(items, "quick", tmp_path / "runs", jobs=2, log=lambda *_: None)
