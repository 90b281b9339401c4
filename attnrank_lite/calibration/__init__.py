"""The BERT calibration: offline model loading, the corpus, whitened head geometry, the study,
rank statistics and the chapter-6 report.

The study's public names are also importable from here (``attnrank_lite.calibration.run_study``),
as they were when the study was the module ``attnrank_lite.calibration``.
"""
from .bert import load_model, recompute_attention
from .study import (
    DEFAULT_LAYERS,
    CalibrationTokens,
    collect_states,
    describe_run,
    run_study,
    select_heads,
    study_head,
    tau_curve_rows,
)

__all__ = [
    "load_model", "recompute_attention",
    "DEFAULT_LAYERS", "CalibrationTokens", "collect_states", "describe_run", "run_study",
    "select_heads", "study_head", "tau_curve_rows",
]
