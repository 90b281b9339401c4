"""One compute thread for torch and every BLAS in the process (via ``threadpoolctl``), restored on
exit: many small operations otherwise spin thread pools against each other, and one thread makes
them reproducible."""
from __future__ import annotations

from threadpoolctl import threadpool_limits

__all__ = ["single_threaded"]


class single_threaded:
    """Context manager: torch (when already imported) and all BLAS/OpenMP pools limited to one thread,
    restored on exit, also after an exception."""

    def __enter__(self):
        import sys

        self._torch = sys.modules.get("torch")
        self._torch_threads = self._torch.get_num_threads() if self._torch else None
        if self._torch:
            self._torch.set_num_threads(1)
        self._limits = threadpool_limits(limits=1)
        return self

    def __exit__(self, *exc):
        self._limits.restore_original_limits()
        if self._torch:
            self._torch.set_num_threads(self._torch_threads)
        return False
