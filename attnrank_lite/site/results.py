"""Results tables: every figure's numbers saved as CSV next to the executed notebook.

A bracket table also gets its certificates beside it (``SPEC.md`` section 6): its sweep writes
one certificate file per instance into :func:`certificate_folder`, and ``save_table(...,
certificates=folder)`` bundles them into ``name_certificates.zip`` next to ``name.csv`` (stored,
not recompressed: each ``.npz`` is compressed already), links it under the table and removes the
folder. A bundle over :data:`BUNDLE_BUDGET_BYTES` is not published: the page says so and a
one-line ``name_certificates.omitted`` file records why. The whole site publishes at most
:data:`SITE_BUDGET_BYTES` of bundles (``tests/site/test_site_certificates.py`` checks both).
"""
from __future__ import annotations

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
    """``write(tmp)`` a new file beside ``path`` (a plain exclusive open: the usual permissions,
    0644 under umask 022), then rename it into place; a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def certificate_folder(name: str, results_dir: str) -> str:
    """The folder (emptied first) where the sweep of table ``name`` writes its certificate files,
    holding the budget (:data:`attnrank_lite.engine.certificate_io.BUDGET_FILE`): past
    :data:`BUNDLE_BUDGET_BYTES` the sweep writes no more (they would not be published) and counts
    the ones left out."""
    from ..engine.certificate_io import BUDGET_FILE

    folder = Path(results_dir) / CERTIFICATE_DIR / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / BUDGET_FILE).write_text(f"{BUNDLE_BUDGET_BYTES}\n")
    return folder.as_posix()


def bundle_certificates(folder, bundle, budget: int = BUNDLE_BUDGET_BYTES) -> tuple[int, int, int, bool]:
    """Zip every ``*.npz`` under ``folder`` into ``bundle`` when their total is within ``budget``
    and the sweep left none out; remove the folder either way.

    Returns ``(files, bytes, left_out, written)``; members keep their paths relative to
    ``folder``, sorted.
    """
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
        try:
            folder.parent.rmdir()  # the last table's bundle leaves no hidden folder to publish
        except OSError:
            pass
    return len(files), total, left_out, written


def save_table(df: pd.DataFrame, name: str, results_dir: str, show: bool = True,
               certificates=None) -> Path:
    """Write ``df`` to ``results_dir/name.csv`` atomically (:func:`_atomic`) and show a link.

    Parameters
    ----------
    name : str
        File stem (letters, digits, ``_`` and ``-``).
    results_dir : str
        Folder relative to the notebook's working directory (the chapter's ``results_dir``).
    show : bool
        Display an HTML link to the file (relative: it works in Jupyter and on the website).
    certificates : str, optional
        The :func:`certificate_folder` of the table's sweep, bundled by
        :func:`bundle_certificates` into ``name_certificates.zip`` (else the link line says why
        there is none and ``name_certificates.omitted`` records it).

    Returns
    -------
    pathlib.Path
        The written file.
    """
    if not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"table name {name!r} must use letters, digits, '_' and '-' only")
    folder = Path(results_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.csv"

    def write(tmp):
        with open(tmp, "x", newline="") as fh:
            df.to_csv(fh, index=False, float_format="%.10g")
    _atomic(path, write)
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
