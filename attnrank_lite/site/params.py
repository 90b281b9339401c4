"""The notebooks' check of their parameters (``validate_notebook_parameters``), with the chapter spec
the command line validates with before any work."""
from __future__ import annotations

import re
import types

from .chapters import get_chapter
from .memory import check_memory
from .spec import PROFILES, ChapterSpec, Param, ParameterError, parse_value

__all__ = ["validate_notebook_parameters", "Param", "ChapterSpec", "ParameterError", "parse_value", "PROFILES"]

_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}
#: IPython's own underscore names (histories, exit code) and module dunders; other "_" names are checked
_IPYTHON_UNDERSCORE = re.compile(r"^(_{1,3}|_i{1,3}|_i\d+|_\d+|_ih|_oh|_dh|_exit_code|__\w+__)$")


def validate_notebook_parameters(key: str, namespace: dict) -> types.SimpleNamespace:
    """The validated parameters of a notebook's globals ``namespace`` as a ``SimpleNamespace``;
    :class:`ParameterError` for a bad value or a stray global (a misspelled parameter, ``_eps`` too),
    :class:`~.memory.TooLarge` when they need more memory than is available."""
    spec = get_chapter(key)
    known = {p.name for p in spec.params}
    stray = sorted(n for n, v in namespace.items()
                   if not _IPYTHON_UNDERSCORE.match(n) and n not in known and n not in _IPYTHON_NAMES
                   and not isinstance(v, (types.ModuleType, types.FunctionType, type, types.BuiltinFunctionType)))
    if stray:
        raise ParameterError(f"unknown parameter(s) {', '.join(map(repr, stray))} for {spec.notebook}; "
                             f"allowed names: {', '.join(sorted(known))}")
    if missing := sorted(known - set(namespace)):
        raise ParameterError(f"parameter(s) {', '.join(map(repr, missing))} missing from the parameters cell")
    values = spec.validate({n: namespace[n] for n in known})
    check_memory(spec, values)
    return types.SimpleNamespace(**values)
