"""The geometric laws: point sets, spectra, the sphere and ball laws, sweeps, slope fits, tables."""
from .fitting import fit_loglog_slope
from .geometry import circle_points, fibonacci_sphere, gaussian_ball, uniform_ball
from .sweeps import bracket_sweep, point_sweep

__all__ = ["circle_points", "fibonacci_sphere", "gaussian_ball", "uniform_ball",
           "bracket_sweep", "point_sweep", "fit_loglog_slope"]
