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
* A partial folder left by a killed process (``kill -9``, power loss) is removed by the next
  run in the same folder: its name carries the pid of its owner, and a folder whose owner is no
  longer running is stale.
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from .paths import REPO

__all__ = ["OutputError", "MARKER", "SOURCE_DIRS", "prepare_output", "partial_dir", "exchange", "retire",
           "replace_folder", "remove_tree", "remove_stale_partials", "normal_mode"]

#: the marker file that says "this folder was created by attnrank_lite" (safe to replace inside)
MARKER = ".attnrank-output"
#: top-level entries of the repository that are sources: no output folder may lie inside them
SOURCE_DIRS = ("notebooks", "book", "attnrank_lite", "tests", "tools", "benchmarks", "data", ".git",
               ".venv", ".mathjax")
_PARTIAL = ".partial-"


class OutputError(OSError):
    """An output folder cannot be used; the message says why and what to do."""


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


def _legacy_ok(out: Path, legacy: frozenset, signature: frozenset) -> bool:
    """A folder written by a version of this package from before the marker file: nothing but
    ``legacy`` names, and at least one of the ``signature`` names only this package writes."""
    entries = {p.name for p in out.iterdir()}
    return bool(entries & signature) and entries <= legacy


def prepare_output(out: str | os.PathLike, flag: str = "-o", legacy: frozenset = frozenset(),
                   signature: frozenset = frozenset()) -> Path:
    """Check an output folder before any work; create and mark it. Returns its absolute path.

    Parameters
    ----------
    out : path
        The folder the user asked for.
    flag : str
        How the user named it (for messages).
    legacy, signature : frozenset of str
        A folder written before the marker file existed is accepted when it holds only ``legacy``
        names and at least one ``signature`` name (e.g. a build's ``staging/``, a run's
        ``*.run.json``).

    Raises
    ------
    OutputError
        The folder is, or is inside, the sources; is a file or sits under a file; is read-only;
        or is a non-empty folder this package did not create.
    """
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
            if any(out.iterdir()) and not _legacy_ok(out, legacy, signature):
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
    remove_stale_partials(out)
    return out


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def normal_mode(path: Path, directory: bool = True) -> None:
    """Give ``path`` the permissions of a freshly created file/folder (0755/0644 under umask 022)."""
    os.chmod(path, (0o777 if directory else 0o666) & ~_umask())


def partial_dir(out: Path, label: str) -> Path:
    """A new hidden work folder in ``out``, named after this process (see the module docstring)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"{_PARTIAL}{os.getpid()}-{label}-", dir=out))
    normal_mode(tmp)  # mkdtemp makes 0700; the folder becomes a published one after the swap
    return tmp


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_partials(out: Path) -> list[Path]:
    """Delete ``.partial-<pid>-*`` folders in ``out`` whose process is no longer running."""
    removed = []
    for p in Path(out).glob(_PARTIAL + "*"):
        pid = p.name[len(_PARTIAL):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
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
    aside = dst.with_name(f"{_PARTIAL}{os.getpid()}-old-{dst.name}")
    os.rename(dst, aside)
    os.rename(new, dst)
    return aside


def retire(old: Path | None, dst: Path) -> None:
    """Keep ``old`` (the folder that was at ``dst``) as the hidden ``.retired-<name>`` beside it,
    deleting the one retired before (two versions old)."""
    if old is None:
        return
    keep = Path(dst).with_name(f".retired-{Path(dst).name}")
    if keep.exists():
        shutil.rmtree(keep)
    os.rename(old, keep)


def replace_folder(new: Path, dst: Path) -> None:
    """Swap ``new`` in at ``dst`` (:func:`exchange`) and retire the previous folder (:func:`retire`)."""
    retire(exchange(new, dst), dst)


def remove_tree(path: Path, attempts: int = 50) -> None:
    """Delete a folder, retrying while a process that is shutting down still writes into it."""
    path = Path(path)
    for _ in range(attempts):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.1)
