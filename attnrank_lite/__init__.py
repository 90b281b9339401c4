"""attnrank_lite — helper package of the *attnrank* book.

Certified brackets on the max-row-l1 approximation rank of softmax attention, the geometry,
spectra and interaction tools behind the paper's laws, and the BERT calibration, in concern
subpackages whose imports run one way: ``calibration`` -> ``quotient`` -> ``laws`` -> ``basics``
(chapter 1) -> ``engine``; ``site`` (the book machinery) sits on top and the mathematics never imports it.
"""
from .engine import (
    ClusterMassCertificate,
    FrobeniusTailCertificate,
    NeumannCertificate,
    NormCertificate,
    RankBracket,
    SubspaceCertificate,
    bounded_output_error,
    logits,
    point_bracket,
    point_brackets,
    rank_bracket,
    row_l1,
    row_softmax,
    softmax_attention,
    softmax_perturbation_bound,
    worst_case_values,
)

#: top-level names imported on first use: ``quotient`` pulls in ``laws`` (scipy.stats, pandas),
#: about a second of CPU that a command line run (``python -m attnrank_lite``) does not need
_LAZY = {"PolynomialCertificate": "quotient", "polynomial_certificate": "quotient"}
_SUBPACKAGES = ("engine", "basics", "laws", "quotient", "calibration", "site")


def __getattr__(name: str):
    """The lazily imported names of ``_LAZY`` and the subpackages, as attributes."""
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__version__ = "0.1.0"

__all__ = [
    "softmax_attention",
    "row_softmax",
    "logits",
    "row_l1",
    "worst_case_values",
    "bounded_output_error",
    "rank_bracket",
    "RankBracket",
    "ClusterMassCertificate",
    "FrobeniusTailCertificate",
    "NormCertificate",
    "SubspaceCertificate",
    "softmax_perturbation_bound",
    "polynomial_certificate",
    "PolynomialCertificate",
    "NeumannCertificate",
    "point_bracket",
    "point_brackets",
]
