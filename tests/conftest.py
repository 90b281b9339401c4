"""Shared fixtures. The website is built once per test worker (tests that use it share the
xdist group "book", so they run on one worker and the build happens once)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def built_site() -> Path:
    """Execute every chapter in the table of contents with the quick profile and build the site.

    Returns the ``html`` folder (``_build/test-site/html``).
    """
    from attnrank_lite.build import build_book

    out = REPO / "_build" / "test-site"
    html = build_book(profile="quick", out=out, warnings_as_errors=True)
    return html
