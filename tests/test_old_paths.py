"""The flat layout's names keep working: every name ``attnrank_lite`` exported before the concern
subpackages, and every old module path (deprecated, for one release) with all of its names."""
from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import attnrank_lite
from attnrank_lite._moved import MOVED, SPLIT

#: ``attnrank_lite.__all__`` of the flat layout (commit 30eb60a), written out, not read from the code
FLAT_EXPORTS = [
    "softmax_attention", "row_softmax", "logits", "row_l1", "worst_case_values", "bounded_output_error",
    "rank_bracket", "RankBracket", "ClusterMassCertificate", "FrobeniusTailCertificate", "NormCertificate",
    "SubspaceCertificate", "softmax_perturbation_bound", "polynomial_certificate", "PolynomialCertificate",
    "NeumannCertificate", "point_bracket", "point_brackets",
]

#: the flat modules, by file name, of that commit: each must still import under its old path
FLAT_MODULES = [
    "attention", "ball_law", "ball_report", "bert", "bracket", "bracket_algebra", "calibration",
    "calibration_report", "certificates", "checks", "constructions", "corpus", "fitting", "geometric",
    "geometry", "harmonic", "interaction", "law_tables", "lower", "neumann", "norms", "plot_calibration",
    "plot_laws", "plotting", "polynomial", "progress", "rank_checks", "rank_stats", "spectra",
    "sphere_proofs", "streaming", "sweeps", "threads", "truncation", "upper", "verdicts", "whitened",
]


@pytest.mark.parametrize("name", FLAT_EXPORTS)
def test_top_level_names_stay(name):
    assert name in attnrank_lite.__all__
    assert getattr(attnrank_lite, name) is not None


def test_readme_example_imports():
    from attnrank_lite import rank_bracket, softmax_attention  # noqa: F401
    from attnrank_lite.geometry import circle_points  # noqa: F401


@pytest.mark.parametrize("old", FLAT_MODULES)
def test_every_flat_module_path_still_imports(old):
    code = (f"import warnings, importlib; warnings.simplefilter('error', DeprecationWarning)\n"
            f"import attnrank_lite\n"
            f"try:\n    importlib.import_module('attnrank_lite.{old}')\n"
            f"except DeprecationWarning as w:\n    print('WARNED', w)\n"
            f"else:\n    print('SILENT')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    if old == "calibration":   # the old module is now the subpackage, which exports the study's names
        assert "SILENT" in out
        from attnrank_lite.calibration import run_study, study
        assert run_study is study.run_study
    else:
        assert "WARNED" in out and MOVED[f"attnrank_lite.{old}"] in out


@pytest.mark.parametrize("old,new", sorted(MOVED.items()))
def test_old_path_is_the_new_module(old, new):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mod = importlib.import_module(old)
    real = importlib.import_module(new)
    if old in SPLIT:
        homes = [real] + [importlib.import_module(h) for h in SPLIT[old]]
        for home in homes:
            for name in home.__all__:
                assert getattr(mod, name) is getattr(home, name)
        with pytest.raises(AttributeError):
            mod.no_such_name
    else:
        assert mod is real
        assert getattr(attnrank_lite, old.rsplit(".", 1)[1]) is real


def test_split_modules_keep_their_old_names():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from attnrank_lite.constructions import exact_cases, hidden_instance
        from attnrank_lite.interaction import oscillation_bound, visible_dimension
    from attnrank_lite.engine.examples import exact_cases as e
    from attnrank_lite.engine.perturbation import oscillation_bound as o
    from attnrank_lite.quotient.constructions import hidden_instance as h
    from attnrank_lite.quotient.interaction import visible_dimension as v
    assert (exact_cases, hidden_instance, oscillation_bound, visible_dimension) == (e, h, o, v)
