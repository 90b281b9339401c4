"""The notebooks' ``glue``: myst-nb's in the book build; without myst-nb (Colab, Binder) the value is shown."""
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
    """Glue ``variable`` under ``name`` (myst-nb); without it a number or text as ``name: value``, anything
    else displayed when ``display``."""
    if _myst_glue is not None:
        _myst_glue(name, variable, display=display)
    elif isinstance(variable, (str, Number)):
        print(f"{name}: {variable}")
    elif display:
        from IPython.display import display as show

        show(variable)


def glue_code(name: str, text: str) -> None:
    """Glue ``text`` as inline code for ``{glue:md}`name``` (a command as typed); without myst-nb ``name: text``."""
    if _myst_glue is None:
        print(f"{name}: {text}")
        return
    from IPython.display import Markdown

    _myst_glue(name, Markdown(inline_code(text)), display=False)


def inline_code(text: str) -> str:
    """``text`` as one Markdown code span nothing in it can close: whitespace runs folded, the fence one
    backtick longer than the text's longest run."""
    flat = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    return f"{fence} {flat} {fence}"
