"""The chapter-6 study on worker processes gives the sequential tables, byte for byte."""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import pytest

from attnrank_lite import calibration as cal
from attnrank_lite.calibration import corpus
from attnrank_lite.site.results import save_table


def test_study_on_worker_processes_gives_the_sequential_tables(tmp_path):
    pytest.importorskip("torch")
    from attnrank_lite.calibration.bert import load_model

    model, tok, info = load_model("bundled-minilm", verbose=False)
    texts = corpus.select_passages(corpus.load_corpus(), 3)
    kw = dict(layers=[0, 5], heads=[1, 7], multipliers=[0.5, 2.0], bracket_sequences=2)
    seq = cal.run_study(model, tok, info, texts, **kw)
    with ProcessPoolExecutor(max_workers=2) as ex:
        par = cal.run_study(model, tok, info, texts, executor=ex, **kw)
    for k in ("settings", "sequences", "heads", "curves"):
        a = save_table(seq[k], f"{k}_seq", str(tmp_path), show=False).read_bytes()
        b = save_table(par[k], f"{k}_par", str(tmp_path), show=False).read_bytes()
        assert a == b, k
    assert len(seq["settings"]) == 8 and seq["settings"]["brackets_verified"].all()
    assert list(par["heads"][["layer", "head"]].itertuples(index=False, name=None)) == \
        [(0, 1), (0, 7), (5, 1), (5, 7)]
