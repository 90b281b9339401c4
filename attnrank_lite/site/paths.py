"""Where the book's sources live, the table of contents' reader, and the lock file (``requirements.txt``)."""
from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["REPO", "NOTEBOOK_DIR", "TOC", "LOCK_FILE", "toc_files", "toc_notebooks", "lock_record"]

#: the repository root, the chapter notebooks, the table of contents and the lock file (relative to the root)
REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR, TOC, LOCK_FILE = REPO / "notebooks", REPO / "_toc.yml", "requirements.txt"


def toc_files(toc_path: Path = TOC) -> list[str]:
    """Every ``root``/``file`` entry of a ``_toc.yml``, in reading order (suffix-less, as written)."""
    import yaml  # the book extra's PyYAML: only the book machinery reads the table of contents

    def walk(node):
        if isinstance(node, dict):
            yield from (node[k] for k in ("root", "file") if isinstance(node.get(k), str))
            node = list(node.values())
        for child in node if isinstance(node, list) else ():
            yield from walk(child)

    return list(walk(yaml.safe_load(Path(toc_path).read_text())))


def toc_notebooks(toc_path: Path = TOC) -> list[str]:
    """Stems of the chapter notebooks listed in the table of contents (``01_slug``), in reading order."""
    return [Path(f).name for f in toc_files(toc_path) if f.startswith("notebooks/")]


def lock_record(root: Path = REPO) -> dict:
    """``{"file": "requirements.txt", "sha256": <hex digest of its bytes>}``; both None outside a checkout."""
    try:
        return {"file": LOCK_FILE, "sha256": hashlib.sha256((Path(root) / LOCK_FILE).read_bytes()).hexdigest()}
    except OSError:
        return {"file": None, "sha256": None}
