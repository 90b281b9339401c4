"""Validation of the parameters a chapter notebook runs with.

A chapter declares its parameters once (``site/chapters/chNN.py``); the notebook's ``parameters``
cell repeats the book defaults as literals (papermill needs them; a test keeps the two in sync)
and its validation cell calls :func:`validate_notebook_parameters`. The command line validates
with the same spec before any work, so a bad name or value fails at once, naming the parameter.
"""
from __future__ import annotations

import re
import types

from .chapters import get_chapter
from .memory import check_memory
from .spec import PROFILES, ChapterSpec, Param, ParameterError, parse_value

__all__ = ["validate_notebook_parameters", "Param", "ChapterSpec", "ParameterError", "parse_value", "PROFILES"]

_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}
#: the underscore names IPython itself keeps in a notebook's globals (output and input history,
#: directory history, exit code) and Python's module dunders; any other name starting with "_"
#: is checked like every other global
_IPYTHON_UNDERSCORE = re.compile(r"^(_{1,3}|_i{1,3}|_i\d+|_\d+|_ih|_oh|_dh|_exit_code|__\w+__)$")


def validate_notebook_parameters(key: str, namespace: dict) -> types.SimpleNamespace:
    """Validate the parameters a notebook ran with (its globals after the parameters cells).

    Raises :class:`ParameterError` for a bad value and for a stray global variable that looks
    like a misspelled parameter (``_eps`` included); :class:`~attnrank_lite.site.memory.TooLarge`
    when the values need more memory than this machine has available (as on the command line).
    Returns the validated parameters as a ``types.SimpleNamespace``.
    """
    spec = get_chapter(key)
    known = {p.name for p in spec.params}
    stray = sorted(
        n for n, v in namespace.items()
        if not _IPYTHON_UNDERSCORE.match(n) and n not in known and n not in _IPYTHON_NAMES
        and not isinstance(v, (types.ModuleType, types.FunctionType, type, types.BuiltinFunctionType))
    )
    if stray:
        raise ParameterError(
            f"unknown parameter(s) {', '.join(map(repr, stray))} for {spec.notebook}; allowed names: "
            + ", ".join(sorted(known))
        )
    missing = sorted(known - set(namespace))
    if missing:
        raise ParameterError(f"parameter(s) {', '.join(map(repr, missing))} missing from the parameters cell")
    values = spec.validate({n: namespace[n] for n in known})
    check_memory(spec, values)
    return types.SimpleNamespace(**values)
