"""Chapter parameters: declaration, profiles and value checks (:class:`Param`, :class:`ChapterSpec`).

Every chapter declares its parameters once, in ``attnrank_lite/site/chapters/chNN.py``, as a
:class:`ChapterSpec`. This module imports nothing else of the package, so the chapter specs,
the chapter registry and :mod:`attnrank_lite.site.params` (the notebooks' validation entry
point) all build on it without an import loop.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Param", "ChapterSpec", "ParameterError", "parse_value", "shown", "PROFILES"]

PROFILES = ("quick", "book", "paper")
_KINDS = ("int", "float", "str", "bool", "int_list", "float_list", "str_list")


class ParameterError(ValueError):
    """A chapter parameter has an unknown name or a value outside what is allowed."""


def parse_value(text: str) -> Any:
    """Parse a command-line value: a Python/JSON literal if it is one, else the string itself."""
    if not isinstance(text, str):
        return text
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return ast.literal_eval(text.strip())
    except Exception:  # not a literal; also {{}} (TypeError), deep nesting (RecursionError, MemoryError)
        return text


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` for a one-line message, cut to ``limit`` characters with the full length."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


@dataclass(frozen=True)
class Param:
    """One chapter parameter.

    Parameters
    ----------
    name : str
    default : object
        The book-profile value (also the literal in the notebook's ``parameters`` cell).
    kind : {"int", "float", "str", "bool", "int_list", "float_list", "str_list"}
    help : str
    low, high : float, optional
        Inclusive bounds on the number (or on each list element).
    choices : tuple, optional
        Allowed values (or allowed list elements).
    nullable : bool
        ``None`` is allowed (e.g. "use the default model").
    min_len, max_len : int
        Bounds on list length.
    """

    name: str
    default: Any
    kind: str
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    nullable: bool = False
    min_len: int = 1
    max_len: int = 64

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"unknown parameter kind {self.kind!r}")

    def allowed(self) -> str:
        """Human-readable description of the allowed values."""
        base = self.kind.replace("_list", "")
        word = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false"}[base]
        if self.choices is not None:
            word = "one of " + ", ".join(repr(c) for c in self.choices)
        rng = []
        if self.low is not None:
            rng.append(f">= {self.low:g}")
        if self.high is not None:
            rng.append(f"<= {self.high:g}")
        if rng:
            word += " " + " and ".join(rng)
        if self.kind.endswith("_list"):
            word = f"a list of {self.min_len} to {self.max_len} values, each {word}"
        if self.nullable:
            word += ", or None"
        return word

    def _scalar(self, v, base):
        if base == "bool":
            if isinstance(v, bool):
                return v
            raise TypeError
        if base == "int":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
                raise TypeError
            v = int(v)
        elif base == "float":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise TypeError
            v = float(v)
        elif base == "str":
            if not isinstance(v, str):
                raise TypeError
        if self.choices is not None and v not in self.choices:
            raise TypeError
        if self.low is not None and v < self.low:
            raise TypeError
        if self.high is not None and v > self.high:
            raise TypeError
        return v

    def check(self, value: Any) -> Any:
        """Return the normalised value or raise :class:`ParameterError` naming the parameter."""
        if isinstance(value, str) and self.kind != "str":
            value = parse_value(value)
        if value is None:
            if self.nullable:
                return None
            raise ParameterError(f"parameter {self.name!r} must be {self.allowed()}; got None")
        base = self.kind.replace("_list", "")
        try:
            if self.kind.endswith("_list"):
                if isinstance(value, tuple):
                    value = list(value)
                if not isinstance(value, list) or not self.min_len <= len(value) <= self.max_len:
                    raise TypeError
                return [self._scalar(v, base) for v in value]
            return self._scalar(value, base)
        except TypeError:
            raise ParameterError(
                f"parameter {self.name!r} must be {self.allowed()}; got {shown(value)}"
            ) from None


@dataclass(frozen=True)
class ChapterSpec:
    """Parameters and profiles of one chapter notebook.

    Attributes
    ----------
    key : str
        Short name, e.g. ``"ch01"``.
    notebook : str
        File name under ``notebooks/``.
    title : str
    params : tuple of Param
    profiles : dict
        ``{"quick": {...}, "paper": {...}}`` overrides of the book defaults.
    constraints : tuple of callables
        Cross-parameter checks ``f(values) -> str | None``; a string is the error message
        (it should name the parameters involved).
    memory : callable, optional
        ``f(values) -> iterable of MemoryNeed``: the memory each large step needs, estimated from
        the parameters alone; runs that cannot fit are refused before any work
        (:mod:`attnrank_lite.site.memory`).
    runtime : callable, optional
        ``f(values) -> iterable of Cost``: the work of each costly step, from the parameters
        alone; the run-time model's fitted constants turn it into seconds
        (:mod:`attnrank_lite.site.runtime`); runs far beyond ``--max-minutes`` are refused.
    code : dict
        Statement label on the chapter's page -> the functions that implement or check it (the
        "code" column of the theorem index), given as one string of dotted paths under
        ``attnrank_lite.`` separated by spaces, kept as a list of full dotted paths.
    inputs : callable, optional
        ``f(values) -> iterable of paths``: the files and folders the chapter reads that are
        not part of the package (a path parameter such as chapter 7's ``store``), so that the
        build's cache key covers them (:func:`attnrank_lite.site.cache.chapter_key`).
    """

    key: str
    notebook: str
    title: str
    params: tuple
    profiles: dict = field(default_factory=dict)
    constraints: tuple = ()
    memory: Callable | None = None
    runtime: Callable | None = None
    code: dict = field(default_factory=dict)
    inputs: Callable | None = None

    def __post_init__(self):
        object.__setattr__(self, "code", {label: [f"attnrank_lite.{p}" for p in paths.split()]
                                          for label, paths in self.code.items()})
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.key}: duplicate parameter names")
        for prof, over in self.profiles.items():
            if prof not in PROFILES:
                raise ValueError(f"{self.key}: unknown profile {prof!r}")
            self.validate(over, partial=True)

    @property
    def stem(self) -> str:
        return self.notebook.rsplit(".", 1)[0]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(
            f"unknown parameter {name!r} for {self.notebook}; allowed names: "
            + ", ".join(p.name for p in self.params)
        )

    def defaults(self) -> dict:
        """The book-profile values."""
        return {p.name: p.default for p in self.params}

    def profile(self, name: str = "book") -> dict:
        """Full parameter set of a profile (``quick``, ``book`` or ``paper``)."""
        if name not in PROFILES:
            raise ParameterError(f"unknown profile {name!r}; allowed: {', '.join(PROFILES)}")
        values = self.defaults()
        values.update(self.profiles.get(name, {}))
        return values

    def validate(self, values: dict, partial: bool = False) -> dict:
        """Check names and values; return the normalised dict (all parameters unless ``partial``)."""
        out = {} if partial else self.defaults()
        for name, value in values.items():
            out[name] = self.param(name).check(value)
        if not partial:
            for rule in self.constraints:
                msg = rule(out)
                if msg:
                    raise ParameterError(msg)
        return out
