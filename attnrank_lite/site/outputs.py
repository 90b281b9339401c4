"""Output folders that never lose what a user has: checked before work, filled atomically.

An output folder of ``run`` or ``build`` is new, empty or marked as ours (:data:`MARKER`), and
never inside the sources. A writer holds the folder's lock (:data:`LOCK`, a
:class:`filelock.FileLock`) from :func:`partial_dir` to :func:`release_partial`, so writers into
one folder take turns and a hidden ``.partial-*`` folder found by the next writer was left by a
killed process and is removed. The finished folder is exchanged with its destination in one
atomic step (:func:`replace_folder`): a reader finds the old folder or the new one, whole.
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

from filelock import FileLock, Timeout

from .errors import OutputError
from .paths import REPO

__all__ = ["OutputError", "MARKER", "LOCK", "SOURCE_DIRS", "prepare_output", "check_slot", "partial_dir",
           "replace_folder", "release_partial"]

#: the marker file that says "this folder was created by attnrank_lite" (safe to replace inside)
MARKER = ".attnrank-output"
#: the output folder's lock file, held by its writer
LOCK = ".attnrank-output.lock"
#: top-level entries of the repository that are sources: no output folder may lie inside them
SOURCE_DIRS = ("notebooks", "book", "attnrank_lite", "tests", "tools", "benchmarks", "data", ".git",
               ".venv", ".mathjax", ".ci", "binder")


def prepare_output(out: str | os.PathLike, flag: str = "-o") -> Path:
    """Check an output folder before any work, create and mark it; its absolute path.

    Raises :class:`OutputError` (one line, naming ``flag``) when the name is empty, or the folder
    is or holds the repository, lies inside the sources, is or sits under a file, is not writable,
    or is a non-empty folder without :data:`MARKER` (names that look like outputs do not count).
    """
    if not os.fspath(out).strip():
        raise OutputError(f"the output folder name is empty; name a folder with {flag} (e.g. {flag} runs)")
    out = Path(os.path.abspath(os.path.expanduser(os.fspath(out))))
    probe = out  # the first existing ancestor decides whether it can be created at all
    while not probe.exists() and not probe.is_symlink():
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"output folder {out} " + ("is a file, not a folder" if probe == out else
                                                     f"cannot be created: {probe} is a file")
                          + f"; choose another folder with {flag}")
    out, repo = out.resolve(), REPO.resolve()
    if out == repo or out in repo.parents:
        raise OutputError(f"output folder {out} is the repository (or contains it): {flag} would write into "
                          "the sources; choose a folder such as runs/ or _build/")
    for name in SOURCE_DIRS:
        if out == repo / name or repo / name in out.parents:
            raise OutputError(f"output folder {out} is inside the sources ({name}/): outputs there would overwrite "
                              "or mix with committed files; choose a folder such as runs/ or _build/")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {out} " + ("is not writable" if probe == out else
                                                     f"cannot be created: {probe} is not writable")
                          + f"; choose another folder with {flag}")
    if probe == out and not (out / MARKER).is_file() and any(out.iterdir()):
        raise OutputError(f"output folder {out} is not empty and was not created by attnrank_lite (no {MARKER} "
                          f"file); choose a new or empty folder with {flag}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        if not (out / MARKER).is_file():
            (out / MARKER).write_text(json.dumps({"created_by": "attnrank_lite", "note": "safe to delete"}) + "\n")
    except OSError as exc:
        raise OutputError(f"output folder {out} cannot be created ({exc.strerror}); "
                          f"choose another folder with {flag}") from None
    return out


def check_slot(out: Path, name: str, flag: str = "-o") -> Path:
    """``out/name``, where a finished folder will go; :class:`OutputError` when it is a symbolic link
    (an exchange or deletion would act on its target) or a file."""
    path = Path(out) / name
    if path.is_symlink() or path.exists() and not path.is_dir():
        raise OutputError(f"{path} is " + ("a symbolic link; outputs are not written through links"
                                           if path.is_symlink() else "a file, not an output folder")
                          + f": remove it or choose another output folder with {flag}")
    return path


def partial_dir(out: Path, label: str) -> Path:
    """Take the output folder's lock (waiting for another writer), remove the ``.partial-*`` folders
    a killed writer left, and return a new hidden folder ``out/.partial-<label>-<random>``."""
    lock = FileLock(Path(out) / LOCK, is_singleton=True)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"[attnrank] waiting for the other process writing into {out}", file=sys.stderr, flush=True)
        lock.acquire()
    if lock.lock_counter == 1:  # this process's first hold: no partial folder here is live
        for old in Path(out).glob(".partial-*"):
            shutil.rmtree(old, ignore_errors=True)  # a link or a file is left alone
    tmp = Path(out) / f".partial-{label}-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    _HELD[tmp] = lock  # filelock keeps singletons weakly: an unreferenced lock would be released
    return tmp


#: the folders of :func:`partial_dir` in this process, and the output folder's lock each holds
_HELD: dict[Path, FileLock] = {}


def release_partial(tmp: Path) -> None:
    """Delete a folder of :func:`partial_dir` (retrying while a stopping kernel still writes into it)
    and release the output folder's lock."""
    for _ in range(50):
        shutil.rmtree(tmp, ignore_errors=True)
        if not Path(tmp).exists():
            break
        time.sleep(0.1)
    lock = _HELD.pop(Path(tmp), None)
    if lock is not None:
        lock.release()


def replace_folder(new: Path, dst: Path) -> None:
    """Put the folder ``new`` at ``dst`` (same filesystem) in one atomic exchange (Linux's ``renameat2``
    with ``RENAME_EXCHANGE``); the previous ``dst`` is then at ``new``. Where the exchange is not
    supported, two renames with a moment without ``dst``. Call it holding the lock of ``dst``'s folder.

    Raises :class:`OutputError` when ``dst`` became a link or a file since it was checked.
    """
    new, dst = Path(new), check_slot(Path(dst).parent, Path(dst).name)
    if not dst.exists():
        return os.rename(new, dst)
    try:
        if ctypes.CDLL(None, use_errno=True).renameat2(-100, os.fsencode(new), -100, os.fsencode(dst), 2):
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(dst))
    except (AttributeError, OSError) as exc:  # no renameat2 in the C library, or a filesystem without it
        if getattr(exc, "errno", errno.ENOSYS) not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
        os.rename(dst, aside := new.with_name(new.name + "-old"))
        os.rename(new, dst)
        os.rename(aside, new)
