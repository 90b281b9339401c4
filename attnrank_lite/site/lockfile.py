"""The lock file ``requirements.txt`` (every dependency with an exact version and its hashes, written
by ``make lock``, installed by ``make``), which run records and the cache key name by its sha256."""
from __future__ import annotations

import hashlib
from pathlib import Path

from .paths import REPO

__all__ = ["LOCK_FILE", "lock_record"]

#: the lock file, relative to the repository root
LOCK_FILE = "requirements.txt"


def lock_record(root: Path = REPO) -> dict:
    """``{"file": "requirements.txt", "sha256": <hex digest of its bytes>}``; both None outside a checkout."""
    try:
        return {"file": LOCK_FILE, "sha256": hashlib.sha256((Path(root) / LOCK_FILE).read_bytes()).hexdigest()}
    except OSError:
        return {"file": None, "sha256": None}
