"""The BERT calibration: offline model loading, the corpus, whitened head geometry, the study,
rank statistics and the chapter-6 report."""
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

__all__ = ["load_model", "recompute_attention", "DEFAULT_LAYERS", "CalibrationTokens", "collect_states",
           "describe_run", "run_study", "select_heads", "study_head", "tau_curve_rows"]
