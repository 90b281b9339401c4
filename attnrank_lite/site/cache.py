"""The build's cache of executed run folders, keyed on the notebook, parameters, package files and
installed versions (``jupyter-cache`` is blind to the package and keeps no run record or tables)."""
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

from .paths import REPO, lock_record

__all__ = ["DEFAULT_CACHE", "CACHE_ENV", "package_files", "package_digest", "input_digest", "environment",
           "chapter_key", "ChapterCache"]

#: the cache unless ``--cache DIR`` or ``$ATTNRANK_CACHE`` names another; the package the key covers
DEFAULT_CACHE, CACHE_ENV, PACKAGE_DIR = REPO / ".attnrank-cache", "ATTNRANK_CACHE", Path(__file__).resolve().parents[1]


def _files(root: Path) -> list[Path]:
    """Every file under ``root`` but bytecode, sorted."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in (".pyc", ".pyo")
                  and "__pycache__" not in p.parts)


def _digest(root: Path, files) -> str:
    """SHA-256 of the relative path and bytes of each of ``files`` (under ``root``)."""
    return hashlib.sha256(b"".join(f"{f.relative_to(root).as_posix()}\0".encode() + hashlib.sha256(
        f.read_bytes()).digest() for f in files)).hexdigest()


def package_files(root: str | os.PathLike | None = None) -> list[Path]:
    """The files an install of the package ``root`` ships, sorted (in a checkout: modules and package-data)."""
    root = Path(root if root is not None else PACKAGE_DIR)
    files = _files(root)
    if not (root.parent / "pyproject.toml").is_file():
        return files
    table = tomllib.loads((root.parent / "pyproject.toml").read_text()).get("tool", {}).get("setuptools", {})
    data = [str(Path(*pkg.split(".")[1:], pat)) for pkg, pats in table.get("package-data", {}).items()
            if pkg.split(".")[0] in (root.name, "*") for pat in pats]
    return [p for p in files if p.suffix == ".py" or any(p.relative_to(root).match(d) for d in data)]


def package_digest(root: str | os.PathLike | None = None) -> str:
    """SHA-256 of :func:`package_files` (relative paths and contents)."""
    return _digest(Path(root if root is not None else PACKAGE_DIR), package_files(root))


def input_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file, of a folder's files (no bytecode), or ``"missing"``."""
    path = Path(path)
    return (_digest(path.parent, [path]) if path.is_file() else _digest(path, _files(path)) if path.is_dir()
            else "missing")


def environment() -> dict:
    """Python's version, every installed distribution with its version, and the lock file's sha256."""
    return {"python": sys.version, "lock": lock_record()["sha256"],
            "installed": sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())}


def chapter_key(notebook: str | os.PathLike, chapter: str, profile: str, values: dict,
                package: str | None = None, env: dict | None = None, inputs=()) -> str:
    """SHA-256 of what a chapter's page depends on: ``notebook``, ``chapter``, ``profile``, ``values``,
    ``package`` (:func:`package_digest`), ``env`` (:func:`environment`) and the files ``inputs``."""
    return hashlib.sha256(json.dumps({
        "chapter": chapter, "profile": profile, "parameters": values, "notebook": input_digest(notebook),
        "package": package_digest() if package is None else package, "env": environment() if env is None else env,
        "inputs": {str(p): input_digest(p) for p in inputs}}, sort_keys=True, default=repr).encode()).hexdigest()


class ChapterCache:
    """Entries ``<root>/<key>/``, whole run folders renamed into place (whole or absent); not authenticated."""

    def __init__(self, root: str | os.PathLike = DEFAULT_CACHE):
        self.root = Path(root).resolve()

    def restore(self, key: str, dst: str | os.PathLike) -> bool:
        """Copy the entry ``key`` to ``dst`` (which must not exist); False when there is none."""
        return (self.root / key).is_dir() and bool(shutil.copytree(self.root / key, dst))

    def store(self, key: str, run: str | os.PathLike) -> None:
        """Copy the run folder ``run`` in as the entry ``key`` (OSError when another build stored it first)."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        try:
            os.rename(shutil.copytree(run, tmp / "run"), self.root / key)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
