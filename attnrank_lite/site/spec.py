"""Chapter parameters: declaration, profiles and value checks. Imports nothing else of the package
(the specs, their registry and :mod:`.params` build on it without an import loop)."""
from __future__ import annotations

import ast
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["Param", "ChapterSpec", "ParameterError", "parse_value", "shown", "PROFILES", "chapter_spec"]

PROFILES = ("quick", "book", "paper")
_KINDS = ("int", "float", "str", "bool", "int_list", "float_list", "str_list")
_WORDS = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false"}


class ParameterError(ValueError):
    """A chapter parameter has an unknown name or a value outside what is allowed."""


def parse_value(text: str) -> Any:
    """Parse a command-line value: a Python/JSON literal if it is one, else the string itself."""
    if not isinstance(text, str):
        return text
    low = text.strip().lower()
    if low in ("true", "false", "none", "null"):
        return None if low in ("none", "null") else low == "true"
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
    """One chapter parameter: ``default`` (book profile, the notebook's literal), ``kind`` (``int, float,
    str, bool`` or ``int_list``, ...), inclusive bounds ``low``/``high`` and ``choices`` of a value or
    each element, ``nullable`` (None allowed), ``min_len``/``max_len`` of a list."""

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
        word = _WORDS[self.kind.replace("_list", "")]
        if self.choices is not None:
            word = "one of " + ", ".join(repr(c) for c in self.choices)
        rng = [f"{op} {x:g}" for op, x in ((">=", self.low), ("<=", self.high)) if x is not None]
        word += " " + " and ".join(rng) if rng else ""
        if self.kind.endswith("_list"):
            word = f"a list of {self.min_len} to {self.max_len} values, each {word}"
        return word + (", or None" if self.nullable else "")

    def _scalar(self, v, base):
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        if base == "int" and number and (isinstance(v, int) or v.is_integer()):
            v = int(v)
        elif base == "float" and number and math.isfinite(v):
            v = float(v)
        elif not (base == "bool" and isinstance(v, bool) or base == "str" and isinstance(v, str)):
            raise TypeError
        if (self.choices is not None and v not in self.choices or self.low is not None and v < self.low
                or self.high is not None and v > self.high):
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
            if not self.kind.endswith("_list"):
                return self._scalar(value, base)
            value = list(value) if isinstance(value, tuple) else value
            if not isinstance(value, list) or not self.min_len <= len(value) <= self.max_len:
                raise TypeError
            return [self._scalar(v, base) for v in value]
        except TypeError:
            raise ParameterError(f"parameter {self.name!r} must be {self.allowed()}; got {shown(value)}") from None


@dataclass(frozen=True)
class ChapterSpec:
    """Parameters and profiles of one chapter notebook.

    Attributes
    ----------
    key, notebook, title : str
        Short name (``"ch01"``), file name under ``notebooks/``, title.
    params : tuple of Param
    profiles : dict
        ``{"quick": {...}, "paper": {...}}`` overrides of the book defaults.
    constraints : tuple of callables
        ``f(values) -> str | None``: a cross-parameter check's error message naming the parameters.
    memory : callable, optional
        ``f(values) -> iterable of MemoryNeed`` (:mod:`.memory`): each large step's memory.
    runtime : callable, optional
        ``f(values) -> iterable of Cost`` (:mod:`.runtime`): each costly step's work.
    code : dict
        Statement label -> its functions, given as dotted paths under ``attnrank_lite.`` in one string.
    inputs : callable, optional
        ``f(values) -> iterable of paths`` read outside the package (covered by the cache key).
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
        object.__setattr__(self, "code", {label: paths if isinstance(paths, list) else
                                          [f"attnrank_lite.{p}" for p in paths.split()]
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
        if p := next((p for p in self.params if p.name == name), None):
            return p
        raise ParameterError(f"unknown parameter {name!r} for {self.notebook}; allowed names: "
                             + ", ".join(p.name for p in self.params))

    def defaults(self) -> dict:
        """The book-profile values."""
        return {p.name: p.default for p in self.params}

    def profile(self, name: str = "book") -> dict:
        """Full parameter set of a profile (``quick``, ``book`` or ``paper``)."""
        if name not in PROFILES:
            raise ParameterError(f"unknown profile {name!r}; allowed: {', '.join(PROFILES)}")
        return {**self.defaults(), **self.profiles.get(name, {})}

    def validate(self, values: dict, partial: bool = False) -> dict:
        """Check names and values; return the normalised dict (all parameters unless ``partial``)."""
        out = {} if partial else self.defaults()
        out.update({name: self.param(name).check(value) for name, value in values.items()})
        for rule in () if partial else self.constraints:
            if msg := rule(out):
                raise ParameterError(msg)
        return out


def chapter_spec(module: str, **functions) -> ChapterSpec:
    """The chapter declared in the TOML file beside ``module`` (a chapter's ``__file__``): ``key``,
    ``notebook``, ``title``, a ``[params.NAME]`` table of :class:`Param` fields each (no ``default``: None),
    ``[profiles.NAME]`` (the string ``"None"`` for None) and ``[code]``; ``functions`` are the
    chapter's ``constraints``, ``memory``, ``runtime`` and ``inputs``."""
    path = Path(module).with_suffix(".toml")
    data = tomllib.loads(path.read_text())
    try:
        params = tuple(Param(name, **{"default": None, **p, **({"choices": tuple(p["choices"])} if "choices" in p
                                                                else {})}) for name, p in data.pop("params").items())
        profiles = {name: {k: None if v == "None" else v for k, v in over.items()}
                    for name, over in data.pop("profiles", {}).items()}
        code = {label: " ".join(paths) for label, paths in data.pop("code", {}).items()}
        spec = ChapterSpec(**data, params=params, profiles=profiles, code=code, **functions)
        spec.validate(spec.defaults())
    except (TypeError, ValueError) as exc:  # an unknown field or kind, a default outside its bounds
        raise ValueError(f"{path.name}: {exc}") from None
    return spec
