"""Output folders that never lose what a user has: checked before work, filled atomically; a writer
holds the folder's lock (:data:`LOCK`) from :func:`partial_dir` to :func:`release_partial`."""
from __future__ import annotations

import atexit
import ctypes
import errno
import os
import shutil
import time
import uuid
from pathlib import Path

from filelock import FileLock

from .errors import OutputError
from .paths import REPO

__all__ = ["OutputError", "MARKER", "LOCK", "SOURCE_DIRS", "prepare_output", "check_slot", "partial_dir",
           "replace_folder", "release_partial"]

#: the marker file of a folder attnrank_lite created, its lock file, and the sources (repository entries)
MARKER, LOCK = ".attnrank-output", ".attnrank-output.lock"
SOURCE_DIRS = ("notebooks", "book", "attnrank_lite", "tests", "tools", "benchmarks", "data", ".git",
               ".venv", ".mathjax", ".ci", "binder")
#: this process's folders of :func:`partial_dir` and their locks (an unreferenced FileLock is released)
_HELD: dict[Path, FileLock] = {}


def prepare_output(out: str | os.PathLike, flag: str = "-o") -> Path:
    """The output folder, checked before any work, created and marked; :class:`OutputError` when it is
    empty, is or holds the repository, lies in the sources, is not writable or is foreign (no :data:`MARKER`)."""
    if not os.fspath(out).strip():
        raise OutputError(f"the output folder name is empty; name a folder with {flag} (e.g. {flag} runs)")
    out = probe = Path(os.path.abspath(os.path.expanduser(os.fspath(out))))
    while not probe.exists() and not probe.is_symlink():  # the first existing ancestor
        probe = probe.parent
    exists, out, repo = probe == out, out.resolve(), REPO.resolve()
    if out == repo or out in repo.parents:
        raise OutputError(f"output folder {out} is the repository (or contains it): {flag} would write into "
                          "the sources; choose a folder such as runs/ or _build/")
    for name in (n for n in SOURCE_DIRS if out == repo / n or repo / n in out.parents):
        raise OutputError(f"output folder {out} is inside the sources ({name}/): outputs there would overwrite "
                          "or mix with committed files; choose a folder such as runs/ or _build/")
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {out} {'is' if exists else f'cannot be created: {probe} is'} "
                          f"{'not writable' if probe.is_dir() else 'a file'}; choose another folder with {flag}")
    if exists and not (out / MARKER).is_file() and any(out.iterdir()):
        raise OutputError(f"output folder {out} is not empty and was not created by attnrank_lite (no {MARKER} "
                          f"file); choose a new or empty folder with {flag}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / MARKER).write_text("outputs of python -m attnrank_lite; safe to delete\n")
    except OSError as exc:
        raise OutputError(f"output folder {out} cannot be created ({exc.strerror}); "
                          f"choose another folder with {flag}") from None
    return out


def check_slot(out: Path, name: str, flag: str = "-o") -> Path:
    """``out/name``; :class:`OutputError` when it is a symbolic link or a file."""
    path = Path(out) / name
    if path.is_symlink() or path.exists() and not path.is_dir():
        raise OutputError(f"{path} is " + ("a symbolic link; outputs are not written through links"
                                           if path.is_symlink() else "a file, not an output folder")
                          + f": remove it or choose another output folder with {flag}")
    return path


def partial_dir(out: Path, label: str) -> Path:
    """Take the folder's lock (waiting for another writer), remove ``.partial-*`` folders a killed writer left;
    a new ``out/.partial-<label>-<random>`` removed by :func:`release_partial`, at the latest at exit.
    Interrupted before it returns, nothing of the call stays (lock released, a lock file it made removed)."""
    path = Path(out) / LOCK
    fresh, lock, tmp, held = not path.exists(), FileLock(path, is_singleton=True), None, False
    try:
        lock.acquire()
        held = True
        for old in Path(out).glob(".partial-*") if lock.lock_counter == 1 else ():  # none is live: remove them
            shutil.rmtree(old, ignore_errors=True)  # (a link or a file is left alone)
        _HELD[tmp := Path(out) / f".partial-{label}-{uuid.uuid4().hex[:12]}"] = lock
        atexit.register(release_partial, tmp)  # before it exists: also an interrupt before the caller's cleanup
        tmp.mkdir()
        return tmp
    except BaseException:  # an interrupt (SIGINT, SIGTERM) included
        if tmp is not None:
            _HELD.pop(tmp, None)
            shutil.rmtree(tmp, ignore_errors=True)
        if held:
            lock.release()
        if fresh and not lock.is_locked:
            path.unlink(missing_ok=True)
        raise


def release_partial(tmp: Path) -> None:
    """Delete a folder of :func:`partial_dir` (retrying while a stopping kernel still writes into it)
    and release the output folder's lock."""
    for _ in range(50):
        shutil.rmtree(tmp, ignore_errors=True)
        if not Path(tmp).exists():
            break
        time.sleep(0.1)
    if (lock := _HELD.pop(Path(tmp), None)) is not None:
        lock.release()


def replace_folder(new: Path, dst: Path) -> None:
    """Put the folder ``new`` at ``dst`` in one atomic exchange (Linux ``renameat2``; elsewhere three
    renames), the previous ``dst`` left at ``new``."""
    new, dst = Path(new), check_slot(Path(dst).parent, Path(dst).name)
    if not dst.exists():
        return os.rename(new, dst)
    try:
        if ctypes.CDLL(None, use_errno=True).renameat2(-100, os.fsencode(new), -100, os.fsencode(dst), 2):
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(dst))
    except (AttributeError, OSError) as exc:  # no renameat2 in the C library, or not on this filesystem
        if getattr(exc, "errno", errno.ENOSYS) not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
        for a, b in ((dst, aside := new.with_name(new.name + "-old")), (new, dst), (aside, new)):
            os.rename(a, b)
