"""One compute thread for torch and for every BLAS in the process, restored on exit.

Used by the BERT calibration study (``claim-bert-calibration``): it runs many small matrix
operations, and on a busy machine the BLAS and torch thread pools spin against each other
(measured 4-15x slower on 2 shared cores). One thread also makes the forward pass and the
linear algebra reproducible run to run. BLAS libraries are found and limited with
``threadpoolctl`` (OpenBLAS, MKL, BLIS, OpenMP), not by reading the process's memory map.
"""
from __future__ import annotations

from threadpoolctl import threadpool_limits

__all__ = ["single_threaded"]


class single_threaded:
    """Context manager: torch and all BLAS/OpenMP pools limited to one thread.

    Torch is limited only when it is already imported (importing it here would cost seconds
    for callers that never use it). Everything is restored on exit, also after an exception.

    Examples
    --------
    >>> import numpy as np
    >>> with single_threaded():
    ...     _ = np.ones((4, 4)) @ np.ones((4, 4))
    """

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
