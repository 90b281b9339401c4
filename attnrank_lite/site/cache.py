"""The build's cache of executed chapters: a chapter's run folder, reused while nothing it depends on changed.

An entry is one run folder of :func:`~attnrank_lite.site.runner.run_chapter` (executed notebook,
run record, results tables) at ``<cache>/<key>``, :func:`chapter_key` being one SHA-256 of the
notebook's bytes, chapter, profile and parameter values, the files of the package an install
ships, the files the chapter reads outside it, and :func:`environment` (Python, the installed
distributions, the lock file's sha256). An entry is copied into a hidden folder and renamed into
place, so it is whole or absent. It is not authenticated: use a cache folder you wrote.

Not ``jupyter-cache`` (installed with myst-nb): it keys a notebook on its code and kernel, blind
to the package and its dependencies, and keeps the notebook only, not the record and tables.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import tomllib
from importlib.metadata import distributions
from pathlib import Path

from .lockfile import lock_record
from .paths import REPO

__all__ = ["DEFAULT_CACHE", "CACHE_ENV", "package_files", "package_digest", "input_digest", "environment",
           "chapter_key", "ChapterCache"]

#: where ``build`` keeps its cache unless ``--cache DIR`` or ``ATTNRANK_CACHE`` says otherwise
DEFAULT_CACHE = REPO / ".attnrank-cache"
CACHE_ENV = "ATTNRANK_CACHE"
#: the package whose shipped files enter the key
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _tree_digest(root: Path, files) -> str:
    """SHA-256 over the relative path and the SHA-256 of each of ``files`` (all under ``root``)."""
    return hashlib.sha256("".join(f"{f.relative_to(root).as_posix()}\0{_sha256(f)}\n" for f in files).encode()
                          ).hexdigest()


def _files(root: Path) -> list[Path]:
    """Every file under ``root``, bytecode left out, sorted."""
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix not in (".pyc", ".pyo"))


def package_files(root: str | os.PathLike | None = None) -> list[Path]:
    """The files of the package ``root`` (default ``attnrank_lite``) an install ships: with a
    ``pyproject.toml`` beside it (a checkout), its modules and the files its
    ``[tool.setuptools.package-data]`` patterns match (a stray note or backup is left out);
    without one (installed), every file but bytecode."""
    root = Path(root if root is not None else PACKAGE_DIR)
    if not (root.parent / "pyproject.toml").is_file():
        return _files(root)
    pyproject = tomllib.loads((root.parent / "pyproject.toml").read_text())
    table = pyproject.get("tool", {}).get("setuptools", {}).get("package-data", {})
    data = [Path(*pkg.split(".")[1:], pat) for pkg, pats in table.items() if pkg.split(".")[0] in (root.name, "*")
            for pat in pats]
    return [p for p in _files(root) if p.suffix == ".py" or any(p.relative_to(root).match(str(d)) for d in data)]


def package_digest(root: str | os.PathLike | None = None) -> str:
    """SHA-256 of :func:`package_files` (relative paths and contents)."""
    root = Path(root if root is not None else PACKAGE_DIR)
    return _tree_digest(root, package_files(root))


def input_digest(path: str | os.PathLike) -> str:
    """SHA-256 of what a chapter reads at ``path``: a file's bytes, a folder's files (bytecode left
    out), or ``"missing"`` (a file put there later gives a new key)."""
    path = Path(path)
    return _sha256(path) if path.is_file() else _tree_digest(path, _files(path)) if path.is_dir() else "missing"


def environment() -> dict:
    """Python's version, every installed distribution with its version, and the lock file's sha256."""
    return {"python": sys.version, "lock": lock_record()["sha256"],
            "installed": sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())}


def chapter_key(notebook: str | os.PathLike, chapter: str, profile: str, values: dict,
                package: str | None = None, env: dict | None = None, inputs=()) -> str:
    """SHA-256 of the canonical JSON of one chapter run's description: the ``notebook`` file's bytes,
    ``chapter``, ``profile``, the resolved parameter ``values``, ``package`` (default
    :func:`package_digest`), ``env`` (default :func:`environment`) and the :func:`input_digest` of
    each of ``inputs`` (the files its spec's ``inputs(values)`` names)."""
    desc = {"chapter": chapter, "profile": profile, "parameters": values, "notebook": _sha256(Path(notebook)),
            "package": package if package is not None else package_digest(),
            "environment": env if env is not None else environment(),
            "inputs": {str(p): input_digest(p) for p in inputs}}
    return hashlib.sha256(json.dumps(desc, sort_keys=True, default=repr).encode()).hexdigest()


class ChapterCache:
    """The entries ``<root>/<key>/``, each a whole run folder."""

    def __init__(self, root: str | os.PathLike = DEFAULT_CACHE):
        self.root = Path(root).resolve()

    def restore(self, key: str, dst: str | os.PathLike) -> bool:
        """Copy the entry ``key`` to ``dst`` (which must not exist); False when there is none."""
        if not (self.root / key).is_dir():
            return False
        shutil.copytree(self.root / key, dst)
        return True

    def store(self, key: str, run: str | os.PathLike) -> None:
        """Copy the run folder ``run`` into a hidden folder of the cache and rename it to the entry
        ``key``; an entry already there (a build beside this one stored it) is kept."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        try:
            shutil.copytree(run, tmp / "run")
            os.rename(tmp / "run", self.root / key)
        except OSError:
            if not (self.root / key).is_dir():
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
