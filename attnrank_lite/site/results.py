"""Results tables: every figure's numbers saved as CSV next to the executed notebook."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pandas as pd

__all__ = ["save_table"]


def save_table(df: pd.DataFrame, name: str, results_dir: str, show: bool = True) -> Path:
    """Write ``df`` to ``results_dir/name.csv`` atomically and (optionally) show a download link.

    The file is written beside its final name and renamed into place, with the permissions any
    new file gets (``0666`` less the umask: ``0644`` usually), so a reader never sees half a table.

    Parameters
    ----------
    df : pandas.DataFrame
    name : str
        File stem (letters, digits, ``_`` and ``-``).
    results_dir : str
        Folder relative to the notebook's working directory (the chapter's ``results_dir``).
    show : bool
        Display an HTML link to the file (relative, so it works in Jupyter and on the website).

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
    # a plain exclusive open, not mkstemp: the file gets the usual permissions (0644 under umask 022)
    tmp = folder / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(tmp, "x", newline="") as fh:
            df.to_csv(fh, index=False, float_format="%.10g")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    if show:
        from IPython.display import HTML, display

        display(HTML(f'<p class="attnrank-table-link">Results table: <a href="{path.as_posix()}" download>'
                     f"{path.as_posix()}</a> ({len(df)} rows)</p>"))
    return path
