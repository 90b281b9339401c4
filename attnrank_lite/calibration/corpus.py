"""The calibration corpus (``claim-bert-calibration``): UTF-8 passages separated by blank lines,
``#`` lines are comments; the book ships ``calibration/data/calibration_corpus.txt``."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

__all__ = ["evenly_spaced", "load_corpus", "select_passages"]


def load_corpus(path: str | Path | None = None, min_passages: int = 1) -> list[str]:
    """The passages of a corpus file (``None``: the shipped one) in file order, inner line
    breaks kept; fewer than ``min_passages`` is an error."""
    p = Path(__file__).resolve().parent / "data" / "calibration_corpus.txt" if path is None else Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"calibration corpus {str(p)!r} not found (a UTF-8 text file, "
                                "passages separated by blank lines)")
    text = p.read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    passages = [q.strip("\n") for q in re.split(r"\n[ \t]*\n", body) if q.strip()]
    if len(passages) < min_passages:
        raise ValueError(f"calibration corpus {str(p)!r} has {len(passages)} passages; "
                         f"need at least {min_passages}")
    return passages


def evenly_spaced(n_total: int, k: int | None) -> list[int]:
    """``k`` indices spread evenly over ``range(n_total)`` (all when ``k`` is None or >= n_total)."""
    if k is None or k >= n_total:
        return list(range(n_total))
    if k <= 0:
        return []
    return sorted(set(np.linspace(0, n_total - 1, k).round().astype(int).tolist()))


def select_passages(texts, n: int | None) -> list:
    """``n`` passages spread evenly over the corpus (all when ``n`` is None), in corpus order."""
    return [texts[i] for i in evenly_spaced(len(texts), n)]
