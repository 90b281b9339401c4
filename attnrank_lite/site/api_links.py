"""Links from the chapters' prose to the API reference: a chapter's first mention of a package
function or class (written as inline code, `` `rank_bracket` ``) is a ``{py:obj}`` role pointing
at its autodoc entry (``book/api/``), so a reader can go from the page to the docstring."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

from .appendix import API_GROUPS

#: names of package functions that the chapters also use for other things (a table column)
NOT_LINKED = frozenset({"verdict"})

#: inline code that is exactly one identifier, not already inside a role (no ``}`` before it)
_MENTION = re.compile(r"(?<![}\w`])`([A-Za-z_]\w*)`(?!`)")


def api_names() -> dict[str, str]:
    """Public functions and classes of the documented subpackages whose name is unique across
    them: ``{name: dotted path of the defining module's entry}``."""
    seen: dict[str, set[str]] = {}
    for group in API_GROUPS:
        pkg = importlib.import_module(f"attnrank_lite.{group}")
        for info in pkgutil.iter_modules(pkg.__path__):
            mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
            for name, obj in vars(mod).items():
                if (not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                        and obj.__module__ == mod.__name__):
                    seen.setdefault(name, set()).add(f"{mod.__name__}.{name}")
    return {name: paths.pop() for name, paths in seen.items()
            if len(paths) == 1 and name not in NOT_LINKED}


def _prose_lines(text: str):
    """Indices of the lines of a markdown cell outside code fences and directive options."""
    fence = None
    for i, line in enumerate(text.split("\n")):
        s = line.lstrip()
        m = re.match(r"(`{3,}|~{3,})(.*)", s)
        if m:
            if fence is None and not m.group(2).startswith("{"):
                fence = m.group(1)          # a code block: skip until it closes
            elif fence is not None and s.startswith(fence) and not m.group(2).strip():
                fence = None
            continue
        if fence is None and not s.startswith(":"):
            yield i


def link_first_mentions(cells: list[str], names: dict[str, str]) -> list[str]:
    """The markdown ``cells`` of one chapter with each name's first mention made a link."""
    done: set[str] = set()
    out = []
    for text in cells:
        lines = text.split("\n")
        for i in _prose_lines(text):
            def repl(m):
                name = m.group(1)
                if name in names and name not in done:
                    done.add(name)
                    return f"{{py:obj}}`{name} <{names[name]}>`"
                return m.group(0)
            lines[i] = _MENTION.sub(repl, lines[i])
        done.update(re.findall(r"\{py:obj\}`(\w+) <", text))
        out.append("\n".join(lines))
    return out
