"""Shared fixtures.

The website is built once per test run: the tests that use it are grouped ("book"), and in
case they still land on several xdist workers the build is guarded by a file lock and reused
by every worker of the same run.
"""
from __future__ import annotations

import os
import uuid
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
