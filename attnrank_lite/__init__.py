"""attnrank_lite — helper package of the *attnrank* book.

Certified brackets on the max-row-l1 approximation rank of softmax attention, the geometry,
spectra and interaction tools behind the paper's laws, and the BERT calibration.
"""
from .attention import logits, row_softmax, softmax_attention
from .bracket import RankBracket, rank_bracket
from .certificates import (
    ClusterMassCertificate,
    FrobeniusTailCertificate,
    NormCertificate,
    SubspaceCertificate,
)
from .interaction import softmax_perturbation_bound
from .neumann import NeumannCertificate
from .norms import bounded_output_error, row_l1, worst_case_values
from .polynomial import PolynomialCertificate, polynomial_certificate
from .streaming import point_bracket, point_brackets

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
