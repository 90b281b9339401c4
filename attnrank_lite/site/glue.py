"""``glue`` for the chapter notebooks, with or without myst-nb.

In the book build the notebooks run with myst-nb installed, and :func:`glue` is myst-nb's own:
it stores a value under a name for the page's ``{glue}`` roles and directives. In a plain
Jupyter kernel, Colab or Binder without myst-nb (the package installed on its own, or the
``book`` extra missing) the same call shows the value instead, so that every chapter still runs
and the numbers the prose refers to are visible under their names.
"""
from __future__ import annotations

import re
from numbers import Number
from typing import Any

__all__ = ["glue", "glue_code", "inline_code", "HAVE_MYST_NB"]

try:
    from myst_nb import glue as _myst_glue
except ImportError:  # no myst-nb: show the value (see the module docstring)
    _myst_glue = None

#: whether myst-nb's glue is used
HAVE_MYST_NB = _myst_glue is not None


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Glue ``variable`` under ``name`` (myst-nb), or display it when myst-nb is absent.

    Parameters
    ----------
    name : str
        The key the book's pages use (``{glue:text}`name```).
    variable : object
        The value: a number, a figure, a table.
    display : bool
        myst-nb: also show it in the notebook. Without myst-nb a number or a text (what the prose
        quotes) is shown as one line ``name: value`` either way, anything else (a figure, a table)
        is displayed as itself when ``display`` is true.
    """
    if _myst_glue is not None:
        _myst_glue(name, variable, display=display)
        return
    if isinstance(variable, (str, int, float, Number)):
        print(f"{name}: {variable}")
    elif display:
        from IPython.display import display as show

        show(variable)


def glue_code(name: str, text: str) -> None:
    """Glue ``text`` as inline code, for ``{glue:md}`name``` in the prose: a command a reader
    copies is shown as typed (glued as plain text, Sphinx's typography would turn ``--`` into
    an en dash and straight quotes into curly ones). Without myst-nb: ``name: text``.
    """
    text = str(text)
    if _myst_glue is None:
        print(f"{name}: {text}")
        return
    from IPython.display import Markdown

    _myst_glue(name, Markdown(inline_code(text)), display=False)


def inline_code(text: str) -> str:
    """Markdown for ``text`` as one inline code span, safe for untrusted text.

    The text (a store's ``runs.command``, a results file's field) may hold backticks, HTML or
    blank lines. Whitespace runs become one space (a blank line would end the paragraph and
    with it the span), and the fence is one backtick longer than the longest backtick run in the
    text, so nothing in it can close the span: inside a code span nothing is HTML.
    """
    flat = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {flat} {fence}"
