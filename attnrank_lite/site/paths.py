"""Where the book's sources live, and the one reader of the table of contents (``_toc.yml``)."""
from __future__ import annotations

from pathlib import Path

__all__ = ["REPO", "NOTEBOOK_DIR", "TOC", "toc_files", "toc_notebooks"]

#: the repository root (the folder holding ``_toc.yml``, ``book/``, ``notebooks/`` and the package)
REPO = Path(__file__).resolve().parents[2]
#: where the chapter notebooks live
NOTEBOOK_DIR = REPO / "notebooks"
#: the table of contents of the book
TOC = REPO / "_toc.yml"


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
