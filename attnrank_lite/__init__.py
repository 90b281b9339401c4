"""attnrank_lite — helper package of the *attnrank* book.

Certified brackets on the max-row-l1 approximation rank of softmax attention, the geometry,
spectra and interaction tools behind the paper's laws, and the BERT calibration, in four
concern subpackages whose imports run one way: ``calibration`` -> ``quotient`` -> ``laws`` ->
``engine``; ``site`` (the book machinery) sits on top and the mathematics never imports it.
"""
from . import _moved
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
from .quotient import PolynomialCertificate, polynomial_certificate

_moved.install()


def __getattr__(name: str):
    """``attnrank_lite.geometry`` and the other old module paths, as attributes (deprecated)."""
    if f"{__name__}.{name}" in _moved.MOVED:
        import importlib

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
