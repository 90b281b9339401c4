"""The row-softmax quotient: visible interaction dimension, truncations, polynomial certificates."""
from .interaction import visible_coordinates, visible_dimension
from .polynomial import PolynomialCertificate, polynomial_certificate

__all__ = ["visible_dimension", "visible_coordinates", "polynomial_certificate", "PolynomialCertificate"]
