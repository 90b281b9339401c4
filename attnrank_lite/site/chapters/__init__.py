"""The book's chapters: one module ``chNN.py`` per notebook defining ``SPEC`` from its ``chNN.toml``, found by name."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from ..paths import NOTEBOOK_DIR
from ..spec import ChapterSpec, ParameterError

__all__ = ["all_chapters", "get_chapter", "NOTEBOOK_DIR"]


def all_chapters() -> list[ChapterSpec]:
    """All chapter specs, ordered by key."""
    mods = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("ch"))
    return [importlib.import_module(f"{__name__}.{mod}").SPEC for mod in mods]


def get_chapter(name: str) -> ChapterSpec:
    """Look a chapter up by key (``ch01``), number (``1``), notebook stem or file name or path."""
    name = str(name)
    stem = Path(name).name.rsplit(".ipynb", 1)[0]
    specs = all_chapters()
    for s in specs:
        if stem in (s.key, s.stem) or (stem.isdigit() and int(stem) == int(s.key[2:])):
            return s
    raise ParameterError(f"unknown chapter {name!r}; available: " + ", ".join(f"{s.key} ({s.notebook})" for s in specs))
