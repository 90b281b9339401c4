"""Shared fixtures.

The website is built once per test run: the tests that use it are grouped ("book"), and in
case they still land on several xdist workers the build is guarded by a file lock and reused
by every worker of the same run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex


@pytest.fixture(scope="session")
def built_site() -> Path:
    """Execute every chapter in the table of contents with the quick profile and build the site.

    Returns the ``html`` folder (``.test-build/test-site/html``; not under ``_build``, which is
    ``make book``'s output folder and must stay one that ``build`` created).
    """
    from attnrank_lite.site.build import build_book

    out = REPO / ".test-build" / "test-site"
    out.parent.mkdir(parents=True, exist_ok=True)
    stamp = out / "built-by-run.txt"
    with FileLock(str(out.parent / "test-site.lock")):
        if stamp.exists() and stamp.read_text() == RUN_ID and (out / "html" / "index.html").exists():
            return out / "html"
        if stamp.exists():
            stamp.unlink()
        html = build_book(profile="quick", out=out, warnings_as_errors=True, cache=False)  # every notebook runs
        stamp.write_text(RUN_ID)
    return html


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Make ``--dist loadgroup`` group again under pytest >= 9.2.

    pytest-xdist 3.8 sends tests marked ``xdist_group(name)`` to one worker by appending
    ``@name`` to each item's ``_nodeid``; pytest 9.2 keeps the node id in ``_id`` (a ``NodeId``)
    and ignores ``_nodeid``, so the groups were silently dropped and the tests that share the
    built site waited for each other's build on two workers. This applies the same suffix to
    ``_id`` where xdist's did not take (``tests/site/test_book.py`` checks that it did).
    """
    if not getattr(config.option, "loadgroup", False):
        return
    from _pytest.nodeid import NodeId

    # the longest units first (the site build with its group, the fresh-venv install), so that
    # neither worker is left alone with one of them at the end (pytest 290 -> 275 s, idle 2 cores)
    items.sort(key=lambda item: not (item.get_closest_marker("slow")
                                     or any(m.args[:1] == ("book",) for m in item.iter_markers("xdist_group"))))

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and isinstance(getattr(item, "_id", None), NodeId):
            item._id = NodeId.parse(item.nodeid + suffix)


@pytest.fixture
def read_only_folder():
    """``read_only_folder(folder)``, a context manager: ``folder`` unwritable for this process
    (``chattr +i``, which binds root too, else ``chmod 555`` for a user that is not root); skips
    the test where neither can hold."""
    @contextmanager
    def make(folder: Path):
        if shutil.which("chattr") and subprocess.run(["chattr", "+i", str(folder)],
                                                     capture_output=True).returncode == 0:
            try:
                yield
            finally:
                subprocess.run(["chattr", "-i", str(folder)], check=True)
        elif os.geteuid() != 0:
            folder.chmod(0o555)
            try:
                yield
            finally:
                folder.chmod(0o755)
        else:
            pytest.skip("root without chattr: no folder can be made read-only here")

    return make
