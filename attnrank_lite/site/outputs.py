"""Output folders that never lose what a user has: checked before work, filled atomically.

Rules shared by ``python -m attnrank_lite run`` and ``build``:

* An output folder must not lie inside the sources (the repository root itself, ``notebooks/``,
  ``book/``, the package, ``tests/``, ...), must not be a file or sit under one, must be
  writable, and is either new, empty, or one this package created (it holds the marker file
  :data:`MARKER`). Anything else is refused with an :class:`OutputError` before any work.
* New content is written into a hidden sibling folder ``.partial-<pid>-XXXX`` in the same
  output folder, then swapped in place with one ``rename``: :func:`exchange` uses Linux's atomic
  ``renameat2(RENAME_EXCHANGE)``, so a reader finds the old folder or the new one, never a mix
  and never nothing (elsewhere it falls back to two renames with a moment of absence).
* The replaced folder is kept, hidden, as ``.retired-<name>`` until the next replacement
  (:func:`retire`), so that a reader who was inside it when the swap happened (a directory
  listing, a web server) still finds it whole; it is deleted at the next replacement.
* Whose work is live is decided by locks, not process ids (which mean nothing across PID
  namespaces: containers sharing an output folder). Each partial folder has a lock file beside
  it, ``.partial-...lock``, held (``flock``, through :mod:`filelock`) by its owner for as long
  as the folder exists; a partial folder whose lock nobody holds was left by a killed process
  (``kill -9``, power loss) and is removed by the next run in the same output folder. The swap
  of a finished folder into place, the retiring of the previous one and that cleaning happen
  under the output folder's own lock, :data:`LOCK`, so that writers released at once queue
  instead of racing.
* Symbolic links inside an output folder, where a run or build puts its folders, are refused:
  swapping or deleting through them would act on something outside.
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import time
import uuid
from pathlib import Path

from filelock import FileLock, Timeout

from .errors import OutputError
from .paths import REPO

__all__ = ["OutputError", "MARKER", "LOCK", "SOURCE_DIRS", "prepare_output", "check_slot", "partial_dir",
           "release_partial", "folder_lock", "exchange", "retire", "replace_folder", "remove_tree",
           "remove_stale_partials", "normal_mode"]

#: the marker file that says "this folder was created by attnrank_lite" (safe to replace inside)
MARKER = ".attnrank-output"
#: top-level entries of the repository that are sources: no output folder may lie inside them
SOURCE_DIRS = ("notebooks", "book", "attnrank_lite", "tests", "tools", "benchmarks", "data", ".git",
               ".venv", ".mathjax", ".ci", "binder")
#: the output folder's lock file (held while folders are swapped, retired or cleaned)
LOCK = ".attnrank-output.lock"
_PARTIAL = ".partial-"




def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _check_not_source(out: Path, flag: str) -> None:
    repo = REPO.resolve()
    if out == repo or _inside(repo, out):
        raise OutputError(f"output folder {out} is the repository (or contains it): {flag} would write "
                          "into the sources; choose a folder such as runs/ or _build/")
    for name in SOURCE_DIRS:
        if _inside(out, repo / name):
            raise OutputError(f"output folder {out} is inside the sources ({name}/): outputs there would "
                              "overwrite or mix with committed files; choose a folder such as runs/ or _build/")


def prepare_output(out: str | os.PathLike, flag: str = "-o") -> Path:
    """Check an output folder before any work; create and mark it. Returns its absolute path.

    Parameters
    ----------
    out : path
        The folder the user asked for.
    flag : str
        How the user named it (for messages).

    Raises
    ------
    OutputError
        The name is empty; the folder is, or is inside, the sources; is a file or sits under a
        file; is read-only; or is a non-empty folder this package did not create (without the
        marker file: names that merely look like outputs, a ``results/`` or a ``ch01/``, do not
        make a folder ours).
    """
    if not os.fspath(out).strip():
        raise OutputError(f"the output folder name is empty; name a folder with {flag} (e.g. {flag} runs)")
    out = Path(os.path.abspath(os.path.expanduser(os.fspath(out))))
    # the first existing ancestor decides whether it can be created at all
    probe = out
    while not probe.exists() and not probe.is_symlink():
        probe = probe.parent
    if probe != out and not probe.is_dir():
        raise OutputError(f"output folder {out} cannot be created: {probe} is a file; "
                          "choose another folder with " + flag)
    out = out.resolve()
    _check_not_source(out, flag)
    if out.exists():
        if not out.is_dir():
            raise OutputError(f"output folder {out} is a file, not a folder; choose another folder with {flag}")
        if not os.access(out, os.W_OK | os.X_OK):
            raise OutputError(f"output folder {out} is not writable; choose another folder with {flag}")
        if not (out / MARKER).is_file():
            if any(out.iterdir()):
                raise OutputError(f"output folder {out} is not empty and was not created by attnrank_lite "
                                  f"(no {MARKER} file); choose a new or empty folder with {flag}")
    else:
        if not os.access(probe, os.W_OK | os.X_OK):
            raise OutputError(f"output folder {out} cannot be created: {probe} is not writable; "
                              f"choose another folder with {flag}")
        try:
            out.mkdir(parents=True)
        except OSError as exc:
            raise OutputError(f"output folder {out} cannot be created ({exc.strerror}); "
                              f"choose another folder with {flag}") from None
    marker = out / MARKER
    if not marker.is_file():
        marker.write_text(json.dumps({"created_by": "attnrank_lite",
                                      "note": "outputs of python -m attnrank_lite; safe to delete"}) + "\n")
    with folder_lock(out):
        remove_stale_partials(out)
    return out


def check_slot(out: Path, name: str, flag: str = "-o") -> Path:
    """Check the place ``out/name`` where a finished folder will be swapped in, and the hidden
    ``out/.retired-name`` beside it: each is absent or a real folder, never a symbolic link (a
    swap or a deletion would act on its target) nor a file. Returns ``out/name``.

    Raises
    ------
    OutputError
    """
    for path in (Path(out) / name, Path(out) / f".retired-{name}"):
        if path.is_symlink():
            raise OutputError(f"{path} is a symbolic link; outputs are not written through links: remove it "
                              f"or choose another output folder with {flag}")
        if path.exists() and not path.is_dir():
            raise OutputError(f"{path} is a file, not an output folder; remove it or choose another output "
                              f"folder with {flag}")
    return Path(out) / name


def folder_lock(out: Path) -> FileLock:
    """The lock of an output folder (a context manager; blocks until it is free)."""
    return FileLock(str(Path(out) / LOCK))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def normal_mode(path: Path, directory: bool = True) -> None:
    """Give ``path`` the permissions of a freshly created file/folder (0755/0644 under umask 022)."""
    os.chmod(path, (0o777 if directory else 0o666) & ~_umask())


def _lock_of(partial: Path) -> Path:
    return partial.with_name(partial.name + ".lock")


def partial_dir(out: Path, label: str) -> Path:
    """A new hidden work folder ``out/.partial-<label>-<random>``, and its lock, held by this
    process until :func:`release_partial` (see the module docstring).

    The lock is taken before the folder is created, so that a folder without a held lock is
    never someone's live work.
    """
    out = Path(out)
    while True:
        tmp = out / f"{_PARTIAL}{label}-{uuid.uuid4().hex[:12]}"
        lock = FileLock(str(_lock_of(tmp)))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            # a fresh random name, but taking a lock is two steps (create the file, then lock
            # it): another writer's remove_stale_partials can see the new file in between, take
            # it as a lock whose folder is gone and hold it for a moment. Draw another name.
            continue
        try:
            tmp.mkdir()
        except FileExistsError:
            lock.release()
            continue
        break
    _HELD[tmp] = lock
    return tmp


#: the partial folders of this process and their held locks
_HELD: dict = {}


def release_partial(tmp: Path) -> None:
    """Delete a partial folder (whatever it holds now) and then release and delete its lock."""
    tmp = Path(tmp)
    remove_tree(tmp)
    lock = _HELD.pop(tmp, None)
    _lock_of(tmp).unlink(missing_ok=True)
    if lock is not None:
        lock.release()


def remove_stale_partials(out: Path) -> list[Path]:
    """Delete the ``.partial-*`` folders in ``out`` whose lock nobody holds (their owner was killed).

    Call with the output folder's lock held (:func:`folder_lock`). Returns the removed folders.
    """
    removed = []
    out = Path(out)
    for p in sorted(out.glob(_PARTIAL + "*")):
        if p.name.endswith(".lock") or p.is_symlink() or not p.is_dir() or p in _HELD:
            continue
        lock_path = _lock_of(p)
        if not lock_path.exists():  # owners create the lock first and delete it last
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
            continue
        lock = FileLock(str(lock_path))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            continue  # live work of another process, in this container or another
        try:
            shutil.rmtree(p, ignore_errors=True)
            lock_path.unlink(missing_ok=True)
            removed.append(p)
        finally:
            lock.release()
    for lock_path in out.glob(_PARTIAL + "*.lock"):  # a lock whose folder is gone
        folder = lock_path.with_name(lock_path.name.removesuffix(".lock"))
        if not folder.exists() and folder not in _HELD:
            lock = FileLock(str(lock_path))
            try:
                lock.acquire(timeout=0)
            except Timeout:
                continue
            try:
                lock_path.unlink(missing_ok=True)
            finally:
                lock.release()
    return removed


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2_exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux >= 3.15, glibc >= 2.28); False where unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (18, 22, 38, 95):  # EXDEV (overlayfs lower dirs), EINVAL, ENOSYS, EOPNOTSUPP: cannot exchange
        return False
    raise OSError(err, os.strerror(err), str(b))


def exchange(new: Path, dst: Path) -> Path | None:
    """Put the folder ``new`` at ``dst``; return where the previous ``dst`` now is (or None).

    ``new`` and ``dst`` must be on one filesystem (siblings). The caller deletes the returned
    folder. With ``renameat2(RENAME_EXCHANGE)`` the swap is one atomic step; the fallback moves
    the old folder aside first and the new one in next.
    """
    new, dst = Path(new), Path(dst)
    if not dst.exists() and not dst.is_symlink():
        os.rename(new, dst)
        return None
    if _renameat2_exchange(new, dst):
        return new  # now holds the previous content
    aside = dst.with_name(f"{_PARTIAL}old-{uuid.uuid4().hex[:12]}-{dst.name}")
    os.rename(dst, aside)
    os.rename(new, dst)
    return aside


def retire(old: Path | None, dst: Path) -> None:
    """Keep ``old`` (the folder that was at ``dst``) as the hidden ``.retired-<name>`` beside it,
    deleting the one retired before (two versions old)."""
    if old is None:
        return
    keep = Path(dst).with_name(f".retired-{Path(dst).name}")
    if keep.is_symlink() or (keep.exists() and not keep.is_dir()):
        keep.unlink()  # never follow a link: only the link itself goes
    elif keep.exists():
        shutil.rmtree(keep)
    os.rename(old, keep)


def replace_folder(new: Path, dst: Path) -> None:
    """Swap ``new`` in at ``dst`` (:func:`exchange`) and retire the previous folder (:func:`retire`),
    under the output folder's lock (:func:`folder_lock`).

    Raises
    ------
    OutputError
        ``dst`` became a symbolic link or a file since the run was checked; nothing is swapped.
    """
    dst = Path(dst)
    with folder_lock(dst.parent):
        check_slot(dst.parent, dst.name)
        retire(exchange(new, dst), dst)


def remove_tree(path: Path, attempts: int = 50) -> None:
    """Delete a folder, retrying while a process that is shutting down still writes into it."""
    path = Path(path)
    for _ in range(attempts):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.1)
