"""Chapter 6's cell helpers in calibration/report.py: the study from the chapter's parameters,
the recompute check and the bracket check (issue 22, thin chapters)."""
from __future__ import annotations

import inspect

import pandas as pd

from attnrank_lite.calibration import report as rep
from attnrank_lite.calibration.study import run_study
from attnrank_lite.site.chapters import get_chapter


def test_chapter_study_passes_every_study_parameter_of_the_chapter():
    """No chapter parameter that run_study takes is dropped, and none is invented."""
    chapter = {p.name for p in get_chapter("ch06").params}
    # the keyword parameters (model, tokenizer, info, texts come from the loaded model and corpus;
    # the chapter's ``model`` is the model's name)
    accepted = {name for name, p in inspect.signature(run_study).parameters.items()
                if p.default is not inspect.Parameter.empty}
    assert set(rep.STUDY_PARAMETERS) <= chapter & accepted
    assert chapter & accepted == set(rep.STUDY_PARAMETERS)


def test_recompute_check_applies_its_threshold():
    heads = pd.DataFrame({"recompute_error": [2e-7, 3e-6], "recompute_l1": [1e-6, 4e-5]})
    good = rep.recompute_check(heads)
    assert good["ok"] and good["error"] == 3e-6 and good["l1"] == 4e-5
    assert "3.0e-06 (threshold 1e-05)" in good["message"] and "4.0e-05" in good["message"]
    bad = rep.recompute_check(heads.assign(recompute_error=[2e-7, 1e-5]))
    assert not bad["ok"]  # the threshold is strict: an entry equal to it fails


def test_bracket_check_counts_and_can_fail():
    seqs = pd.DataFrame({"verified": [True, True, True], "poly_verified": [True, False, True]})
    out = rep.bracket_check(seqs)
    assert out == {"ok": True, "poly_verified": 2, "brackets": 3,
                   "message": "3 brackets, all verified: True\n"
                              "polynomial certificates verified against A: 2 of 3"}
    assert not rep.bracket_check(seqs.assign(verified=[True, False, True]))["ok"]
