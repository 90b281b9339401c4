"""An independent checker of certificate files (``SPEC.md`` sections 2 and 6).

It imports nothing from the rest of the package (numpy, scipy, ``fractions`` and the standard
library only; ``tests/test_import_graph.py`` enforces it): its own file reader
(:mod:`.reader`), its own rebuild of the matrix with a proven distance to the exact softmax of
the stored points (:mod:`.instance`), its own polynomial space on the sphere, and each
certificate kind's condition with its own rounding bounds or in exact rational arithmetic for
small stored matrices (:mod:`.conditions`). ``check_file`` (:mod:`.check`) gives its verdict;
``python -m attnrank_lite verify --independent FILE`` compares it with ``verify``'s.
"""
from .check import CheckReport, check_file
from .reader import Refused

__all__ = ["CheckReport", "Refused", "check_file"]
