"""One compute thread for torch and every BLAS in the process (via ``threadpoolctl``), restored on
exit: many small operations otherwise spin thread pools against each other, and one thread makes
them reproducible."""
from __future__ import annotations

import contextlib
import sys

from threadpoolctl import threadpool_limits

__all__ = ["single_threaded"]


@contextlib.contextmanager
def single_threaded():
    """Context manager: torch (when already imported) and all BLAS/OpenMP pools limited to one thread,
    restored on exit, also after an exception."""
    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch else None
    if torch:
        torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        if torch:
            torch.set_num_threads(torch_threads)
