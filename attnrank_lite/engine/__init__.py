"""The engine: attention, the max-row-l1 norm, certificates and certified rank brackets; everything
else in the package is built on this subpackage, and it imports from no other."""
from .attention import logits, row_softmax, softmax_attention
from .bracket import RankBracket, rank_bracket, rank_brackets
from .certificates import ClusterMassCertificate, FrobeniusTailCertificate, NormCertificate, SubspaceCertificate
from .neumann import NeumannCertificate
from .norms import bounded_output_error, row_l1, worst_case_values
from .perturbation import oscillation, oscillation_bound, softmax_perturbation_bound
from .streaming import point_bracket, point_brackets

__all__ = ["softmax_attention", "row_softmax", "logits", "row_l1", "worst_case_values", "bounded_output_error",
           "rank_bracket", "rank_brackets", "RankBracket", "point_bracket", "point_brackets",
           "ClusterMassCertificate", "FrobeniusTailCertificate", "NormCertificate", "SubspaceCertificate",
           "NeumannCertificate", "oscillation", "oscillation_bound", "softmax_perturbation_bound"]
