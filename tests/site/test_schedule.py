"""Chapters side by side: at most ``jobs`` at once, within the memory available, one BLAS thread
each at the default (issue 16)."""
import json
import os
import sys

import pytest

from attnrank_lite.engine.parallel import THREAD_VARS
from attnrank_lite.site import schedule
from attnrank_lite.site.chapters import all_chapters
from attnrank_lite.site.memory import MemoryNeed
from attnrank_lite.site.schedule import KERNEL_OVERHEAD
from attnrank_lite.site.spec import ChapterSpec, Param

GiB = 2.0 ** 30


#: a stand-in for ``python -m attnrank_lite run KEY ... -o OUT``: logs its start and end, writes a run
FAKE_RUN = """
import json, os, sys, time
from pathlib import Path
key, out, log = sys.argv[3], Path(sys.argv[sys.argv.index("-o") + 1]), sys.argv[1]
env = json.dumps({v: os.environ.get(v) for v in NAMES}).replace(" ", "")
with open(log, "a") as f:
    f.write(f"{time.time()} start {key} {env}\\n")
time.sleep(0.6)
(out / key).mkdir(parents=True)
(out / key / f"{key[2:]}_fake.run.json").write_text(json.dumps({"chapter": key, "seconds": 0.6}))
with open(log, "a") as f:
    f.write(f"{time.time()} end {key}\\n")
"""


def test_side_by_side_stays_within_jobs_and_memory(tmp_path, monkeypatch):
    """Six chapter processes through the real pool: at no moment do more than ``jobs`` run, nor
    more than the budget's worth of memory unless one runs alone (each counted as its estimate plus a
    kernel); each child gets its share of the memory and cores // jobs BLAS threads; every run lands
    in its folder."""
    needs = [5, 1, 4, 2, 3, 0.5]  # GiB, with a budget of 6 and 3 jobs
    specs = [ChapterSpec(key=f"ch9{i}", notebook=f"9{i}_fake.ipynb", title="fake",
                         params=(Param("n", 1, "int", "size", low=1, high=9),),
                         memory=lambda v, g=g: [MemoryNeed(g * GiB - KERNEL_OVERHEAD, "n", "arrays")])
             for i, g in enumerate(needs)]
    script, log = tmp_path / "fake_run.py", tmp_path / "events.log"
    script.write_text(FAKE_RUN.replace("NAMES", repr([*THREAD_VARS, "ATTNRANK_MEMORY_LIMIT"])))
    monkeypatch.setattr(schedule, "CHILD", (sys.executable, str(script), str(log)))
    monkeypatch.setattr(schedule, "available_memory", lambda: 6 * GiB)
    monkeypatch.delenv("ATTNRANK_MEMORY_LIMIT", raising=False)  # each child gets its share of the 6 GiB
    recs = schedule.execute_chapters([(s, {"n": 1}) for s in specs], "quick", tmp_path / "runs", jobs=3,
                                     log=lambda *_: None)
    assert [r["chapter"] for r in recs] == [s.key for s in specs]
    assert all((tmp_path / "runs" / s.key / f"{s.stem}.run.json").is_file() for s in specs)
    running, peak_jobs, threads = set(), 0, str(max(1, (os.cpu_count() or 1) // 3))
    for line in sorted(log.read_text().splitlines(), key=lambda ln: float(ln.split()[0])):
        _, event, key, *env = line.split()
        if event == "end":
            running.discard(key)
            continue
        env = json.loads(env[0])
        assert {env[v] for v in THREAD_VARS} == {threads}
        assert needs[int(key[3])] * GiB - KERNEL_OVERHEAD <= int(env["ATTNRANK_MEMORY_LIMIT"]) <= 6 * GiB
        assert not running or sum(needs[int(k[3])] for k in running | {key}) <= 6, (running, key)
        running.add(key)
        peak_jobs = max(peak_jobs, len(running))
    assert 2 <= peak_jobs <= 3  # side by side, never more than jobs


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
