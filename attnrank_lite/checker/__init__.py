"""An independent checker of certificate files (``SPEC.md`` sections 2 and 6).

It imports nothing from the rest of the package (``tests/test_import_graph.py`` enforces it): its
own reader, its own rebuild of the matrix with a proven distance to the exact softmax, its own
polynomial space on the sphere and each kind's condition with its own rounding bounds, or in
exact rational arithmetic for small stored matrices.
"""
from .check import CheckReport, check_file
from .reader import Refused

__all__ = ["CheckReport", "Refused", "check_file"]
