"""The BERT calibration: offline model loading, the corpus, whitened head geometry, the study,
rank statistics and the chapter-6 report."""
from .bert import load_model, recompute_attention
from .study import collect_states, describe_run, run_study, select_heads, study_head

__all__ = ["load_model", "recompute_attention", "collect_states", "describe_run", "run_study", "select_heads",
           "study_head"]
