"""``glue`` for the chapter notebooks: myst-nb's own in the book build (a value stored under a name
for the page's ``{glue}`` roles); without myst-nb (Colab, Binder, no ``book`` extra) the value is
shown instead, so every chapter still runs and shows its numbers by name."""
from __future__ import annotations

import re
from numbers import Number
from typing import Any

__all__ = ["glue", "glue_code", "inline_code"]

try:
    from myst_nb import glue as _myst_glue
except ImportError:  # no myst-nb: show the value (see the module docstring)
    _myst_glue = None


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Glue ``variable`` under ``name`` (myst-nb), or show it when myst-nb is absent: a number or
    a text as one line ``name: value`` whatever ``display``, anything else (a figure, a table)
    displayed as itself when ``display`` is true."""
    if _myst_glue is not None:
        _myst_glue(name, variable, display=display)
    elif isinstance(variable, (str, Number)):
        print(f"{name}: {variable}")
    elif display:
        from IPython.display import display as show

        show(variable)


def glue_code(name: str, text: str) -> None:
    """Glue ``text`` as inline code for ``{glue:md}`name``` (a command shown as typed: as plain
    text Sphinx would turn ``--`` into a dash and quotes into curly ones); without myst-nb
    ``name: text``."""
    if _myst_glue is None:
        print(f"{name}: {text}")
        return
    from IPython.display import Markdown

    _myst_glue(name, Markdown(inline_code(text)), display=False)


def inline_code(text: str) -> str:
    """Markdown for ``text`` as one inline code span, safe for untrusted text: whitespace runs
    become one space (a blank line would end the span) and the fence is one backtick longer than
    the longest backtick run in the text, so nothing in it can close the span (inside, nothing is HTML)."""
    flat = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    return f"{fence} {flat} {fence}"
