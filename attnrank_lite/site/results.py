"""Results tables saved as CSV beside the executed notebook, and a bracket table's certificates
bundled beside it within a size budget (``SPEC.md`` section 6; ``tests/site/test_site_certificates.py``)."""
from __future__ import annotations

import contextlib
import os
import shutil
import uuid
import zipfile
from pathlib import Path

import pandas as pd

__all__ = ["save_table", "certificate_folder", "bundle_certificates", "BUNDLE_BUDGET_BYTES",
           "SITE_BUDGET_BYTES", "CERTIFICATE_DIR"]

#: largest certificate bundle one table may publish (bytes)
BUNDLE_BUDGET_BYTES = 3_300_000
#: largest total of every certificate bundle of the site (bytes): the site grows by at most this
SITE_BUDGET_BYTES = 40_000_000
#: the hidden folder of the results where sweeps write certificate files before bundling
CERTIFICATE_DIR = ".certificates"


def _atomic(path: Path, write) -> None:
    """``write(tmp)`` a new file beside ``path`` (umask permissions), then rename it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def certificate_folder(name: str, results_dir: str) -> str:
    """The emptied folder where table ``name``'s sweep writes its certificate files, with the budget
    file (:data:`~attnrank_lite.engine.certificate_io.BUDGET_FILE`) past which the sweep counts, not writes, them."""
    from ..engine.certificate_io import BUDGET_FILE

    folder = Path(results_dir) / CERTIFICATE_DIR / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / BUDGET_FILE).write_text(f"{BUNDLE_BUDGET_BYTES}\n")
    return folder.as_posix()


def bundle_certificates(folder, bundle, budget: int = BUNDLE_BUDGET_BYTES) -> tuple[int, int, int, bool]:
    """Zip (stored) every ``*.npz`` under ``folder`` into ``bundle`` when their total is within ``budget``
    and the sweep left none out; remove the folder. Returns ``(files, bytes, left_out, written)``."""
    from ..engine.certificate_io import SKIPPED_FILE

    folder, bundle = Path(folder), Path(bundle)
    files = sorted(folder.rglob("*.npz")) if folder.exists() else []
    total = sum(f.stat().st_size for f in files)
    skipped = folder / SKIPPED_FILE
    left_out = len(skipped.read_text().splitlines()) if skipped.exists() else 0
    written = bool(files) and total <= budget and not left_out
    if written:
        def write(tmp):
            with zipfile.ZipFile(tmp, "x", compression=zipfile.ZIP_STORED) as zf:
                for f in files:
                    zf.write(f, f.relative_to(folder).as_posix())
        _atomic(bundle, write)
        total = bundle.stat().st_size
    shutil.rmtree(folder, ignore_errors=True)
    if folder.parent.name == CERTIFICATE_DIR:
        with contextlib.suppress(OSError):
            folder.parent.rmdir()  # the last table's bundle leaves no hidden folder to publish
    return len(files), total, left_out, written


def save_table(df: pd.DataFrame, name: str, results_dir: str, show: bool = True,
               certificates=None) -> Path:
    """Write ``df`` to ``results_dir/name.csv`` atomically; the written path.

    Parameters
    ----------
    name : str
        File stem (letters, digits, ``_`` and ``-``).
    results_dir : str
        Folder relative to the notebook's working directory.
    show : bool
        Display a relative HTML link to the file (works in Jupyter and on the website).
    certificates : str, optional
        Its :func:`certificate_folder`, zipped to ``name_certificates.zip``; else why not, in ``*.omitted``.
    """
    if not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"table name {name!r} must use letters, digits, '_' and '-' only")
    folder = Path(results_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.csv"
    _atomic(path, lambda tmp: df.to_csv(tmp, mode="x", index=False, float_format="%.10g"))
    cert = ""
    if certificates is not None:
        bundle, omitted = folder / f"{name}_certificates.zip", folder / f"{name}_certificates.omitted"
        bundle.unlink(missing_ok=True)
        omitted.unlink(missing_ok=True)
        files, size, left_out, written = bundle_certificates(certificates, bundle, budget=BUNDLE_BUDGET_BYTES)
        if written:
            cert = (f'; certificates: <a href="{bundle.as_posix()}" download>{bundle.name}</a> '
                    f"({files} files, {size / 1e6:.2f} MB; recheck with <code>python -m attnrank_lite verify</code>)")
        else:
            more = f" and {left_out} more not written" if left_out else ""
            why = (f"{files} files, {size / 1e6:.1f} MB{more}, over this table's budget of "
                   f"{BUNDLE_BUDGET_BYTES / 1e6:.1f} MB" if files else "the sweep wrote none")
            omitted.write_text(f"{name}: {why}\n")
            cert = (f"; certificates not published: {why} (the sweep above writes them with "
                    "<code>certificates=FOLDER</code>)")
    if show:
        from IPython.display import HTML, display

        display(HTML(f'<p class="attnrank-table-link">Results table: <a href="{path.as_posix()}" download>'
                     f"{path.as_posix()}</a> ({len(df)} rows){cert}</p>"))
    return path
