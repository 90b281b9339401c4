r"""The softmax perturbation lemma (``lem-softmax-perturbation``): with
:math:`\mathrm{osc}(\delta) = \max_j \delta_j - \min_j \delta_j`,
:math:`\|\mathrm{softmax}(a + \delta) - \mathrm{softmax}(a)\|_1 \le 2\tanh(\mathrm{osc}(\delta)/4)
\le \mathrm{osc}(\delta)/2`."""
from __future__ import annotations

import numpy as np

__all__ = ["oscillation", "oscillation_bound", "softmax_perturbation_bound"]


def oscillation(delta) -> np.ndarray:
    r"""Row oscillation :math:`\max_j \delta_{ij} - \min_j \delta_{ij}`: shape (n,) for (n, m), 0-d for (m,)."""
    d = np.asarray(delta, dtype=np.float64)
    if d.ndim not in (1, 2) or d.shape[-1] == 0:
        raise ValueError(f"delta must have shape (n, m) or (m,) with m >= 1, got {d.shape}")
    if not np.isfinite(d).all():
        raise ValueError("delta must be finite")
    return d.max(axis=-1) - d.min(axis=-1)


def oscillation_bound(osc) -> np.ndarray:
    r"""The lemma's bound :math:`2\tanh(\mathrm{osc}/4)`, elementwise, for oscillations ``>= 0`` (``inf``
    gives 2); attained by a two-level ``delta``."""
    o = np.asarray(osc, dtype=np.float64)
    if np.isnan(o).any() or (o < 0).any():
        raise ValueError("osc must be >= 0 (no NaN)")
    return 2.0 * np.tanh(o / 4.0)


def softmax_perturbation_bound(delta_logits) -> np.ndarray:
    """The lemma per row of ``delta_logits`` ((n, m) or (m,)): ``oscillation_bound(oscillation(delta))``."""
    return oscillation_bound(oscillation(delta_logits))
