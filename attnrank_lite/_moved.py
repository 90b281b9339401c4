"""Old module paths, kept importable for one release (deprecated; see CONTRIBUTING.md).

Before the concern subpackages, every module sat directly in ``attnrank_lite/``. An import of an
old path such as ``attnrank_lite.geometry`` is answered with the module at its new home
(``attnrank_lite.laws.geometry``): the very same module object, so every name, private ones
included, keeps working. Each such import warns once with a ``DeprecationWarning`` naming the new
path. Two modules were split: ``interaction`` gave the perturbation lemma to
``engine.perturbation`` and ``constructions`` gave chapter 1's examples to ``engine.examples``;
their old paths answer with a small module that looks a name up in both new homes.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

#: old module path -> new module path
MOVED: dict[str, str] = {
    f"attnrank_lite.{old}": f"attnrank_lite.{new}" for old, new in {
        "checks": "engine.checks", "attention": "engine.attention", "norms": "engine.norms",
        "certificates": "engine.certificates", "lower": "engine.lower", "upper": "engine.upper",
        "harmonic": "engine.harmonic", "neumann": "engine.neumann", "geometric": "engine.assemble",
        "streaming": "engine.streaming", "bracket": "engine.bracket",
        "bracket_algebra": "engine.bracket_algebra", "rank_checks": "engine.rank_checks",
        "threads": "engine.threads", "progress": "engine.progress", "plotting": "engine.plots",
        "geometry": "laws.geometry", "spectra": "laws.spectra", "sphere_proofs": "laws.sphere_proofs",
        "ball_law": "laws.ball_law", "ball_report": "laws.ball_report", "fitting": "laws.fitting",
        "sweeps": "laws.sweeps", "law_tables": "laws.law_tables", "verdicts": "laws.verdicts",
        "plot_laws": "laws.plots",
        "interaction": "quotient.interaction", "truncation": "quotient.truncation",
        "polynomial": "quotient.polynomial", "constructions": "quotient.constructions",
        "bert": "calibration.bert", "corpus": "calibration.corpus", "whitened": "calibration.whitened",
        "rank_stats": "calibration.rank_stats", "calibration_report": "calibration.report",
        "plot_calibration": "calibration.plots",
    }.items()
}

#: old paths of split modules -> the further modules their names now live in
SPLIT: dict[str, tuple[str, ...]] = {
    "attnrank_lite.interaction": ("attnrank_lite.engine.perturbation",),
    "attnrank_lite.constructions": ("attnrank_lite.engine.examples",),
}


def _joined(name: str, homes: tuple[str, ...]) -> types.ModuleType:
    """A module named ``name`` whose attributes are looked up in ``homes``, in order."""
    mods = [importlib.import_module(h) for h in homes]
    joined = types.ModuleType(name, f"Deprecated path; the names live in {', '.join(homes)}.")

    def __getattr__(attr):
        for m in mods:
            if hasattr(m, attr):
                return getattr(m, attr)
        raise AttributeError(f"module {name!r} has no attribute {attr!r}")

    joined.__getattr__ = __getattr__
    joined.__all__ = [a for m in mods for a in getattr(m, "__all__", ())]
    return joined


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an import of an old path with the module at its new path."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; the old path goes away in the next release",
                      DeprecationWarning, stacklevel=3)
        if spec.name in SPLIT:
            return _joined(spec.name, (new,) + SPLIT[spec.name])
        return importlib.import_module(new)

    def exec_module(self, module):
        """The module returned by ``create_module`` is already executed."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())
