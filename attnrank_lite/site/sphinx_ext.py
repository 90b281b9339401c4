"""The website's Sphinx extension (``_config.yml``): assets, footer, PDF menu entry, math in ``{doc}``
titles, ``:ref:`` to boxes as ``:prf:ref:``, ``singlehtml`` translators, plain search titles and ranking."""
from __future__ import annotations

import html
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.nodes import clean_astext

__all__ = ["setup", "DocLinkMath", "STATIC_DIR", "STYLESHEET", "CHANGELOG_DOC", "version_footer", "plain_tex"]

#: the package's static files (copied into the site's ``_static``): the stylesheet and the search scores
STATIC_DIR, STYLESHEET, SEARCH_SCORER = Path(__file__).resolve().parent / "static", "attnrank.css", "search_scorer.js"
#: the changelog page the footer links
CHANGELOG_DOC = "book/changelog"


class DocLinkMath(SphinxPostTransform):
    """Give resolved ``{doc}`` links to pages whose title has math the title's own nodes."""

    default_priority = 20  # after Sphinx's ReferencesResolver (priority 10)

    def run(self, **kwargs):
        titles = {clean_astext(t): t for t in self.env.titles.values() if next(t.findall(nodes.math), None)}
        for ref in list(self.document.findall(nodes.reference)) if titles else ():
            if (len(ref.children) == 1 and isinstance(ref[0], nodes.inline) and "doc" in ref[0]["classes"]
                    and (title := titles.get(ref[0].astext())) is not None):
                ref[0][:] = [child.deepcopy() for child in title.children]


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    if scripts := context.get("script_files"):
        unique: dict = {}
        for js in scripts:  # an inline script's filename is None or "" depending on the extension
            key = (str(getattr(js, "filename", js) or ""), repr(sorted(getattr(js, "attributes", {}).items())))
            unique.setdefault(key, js)
        context["script_files"] = list(unique.values())


#: labels of the book's statement boxes (sphinx-proof), as docstrings name them in ``:ref:``
_BOX_REF = re.compile(r"(?<![\w:]):ref:`((?:def|prop|thm|lem|cor|rem|obs|conj|alg)-[A-Za-z0-9_-]+)`")


def _box_refs(app, what, name, obj, options, lines):
    lines[:] = [_BOX_REF.sub(r":prf:ref:`\1`", line) for line in lines]


def _singlehtml_handlers(app):
    """The one-page build translates every node the HTML build does (Sphinx's fallback to ``html`` is all or none)."""
    if app.builder.name == "singlehtml":
        handlers = app.registry.translation_handlers
        handlers["singlehtml"] = {**handlers.get("html", {}), **handlers.get("singlehtml", {})}


def _book_pdf_button(app, pagename, templatename, context, doctree):
    """Add the whole book's PDF to the theme's download menu (after the theme built the menu)."""
    name = app.config.attnrank_book_pdf
    for button in context.get("header_buttons", []) if name and "pathto" in context else ():
        if button.get("label") == "download-buttons":
            button["buttons"].append({"type": "link", "url": context["pathto"](name, 1), "text": "book (.pdf)",
                                      "tooltip": "Download the whole book as one PDF", "icon": "fas fa-book",
                                      "label": "download-book-pdf-button"})


def version_footer(version: str, pathto) -> str:
    """The footer line of every page: ``attnrank-lite version VERSION · changelog`` (linked)."""
    return (f'<p class="attnrank-version">attnrank-lite version {version} · '
            f'<a href="{pathto(CHANGELOG_DOC)}">changelog</a></p>')


def _version_footer(app, pagename, templatename, context, doctree):
    version = app.config.attnrank_version
    if version and "pathto" in context and CHANGELOG_DOC in app.env.found_docs:
        context["theme_extra_footer"] = version_footer(version, context["pathto"])


#: TeX control words of the book's titles and their plain-text forms
_TEX_WORDS = {"ell": "ℓ", "varepsilon": "ε", "epsilon": "ε", "beta": "β", "tau": "τ", "Theta": "Θ",
              "alpha": "α", "lambda": "λ", "sigma": "σ", "rho": "ρ", "langle": "⟨", "rangle": "⟩",
              "le": "≤", "ge": "≥", "leq": "≤", "geq": "≥", "infty": "∞", "cdot": "·", "times": "×",
              "in": "∈", "to": "→", "sim": "∼", "approx": "≈", "min": "min", "max": "max", "log": "log"}
_SUBSCRIPT_DIGITS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
_MATH_SPAN = re.compile(r'<span class="math[^"]*">\\\((.*?)\\\)</span>', re.S)


def plain_tex(tex: str) -> str:
    """A TeX formula of a title as plain text: ``\\ell_1`` -> ``ℓ₁``, ``(d-1)/2`` -> ``(d−1)/2``,
    ``\\operatorname{rank}_\\varepsilon`` -> ``rank_ε``; unknown control words lose their backslash."""
    t = re.sub(r"\\(?:operatorname|mathrm|text|mathbf|mathit|mathcal|mathbb)\{([^{}]*)\}", r"\1", tex)
    t = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX_WORDS.get(m.group(1), m.group(1)), t)
    t = re.sub(r"_\{?([0-9]+)\}?", lambda m: m.group(1).translate(_SUBSCRIPT_DIGITS), t)
    t = re.sub(r"\\[,;:! ]", " ", t).replace("{", "").replace("}", "").replace("\\", "")
    return re.sub(r"(?<=\b\w)-(?=\d)", "−", t)  # a minus in d-1, not a hyphen in a word


def _plain_html_title(title: str) -> str:
    return _MATH_SPAN.sub(lambda m: html.escape(plain_tex(html.unescape(m.group(1)))), title)


def _plain_search_titles(app):
    """Wrap the HTML builder's ``index_page`` so that the titles it feeds the search index are plain."""
    builder = app.builder
    if (orig := getattr(builder, "index_page", None)) is None:
        return

    def index_page(pagename, doctree, title):
        orig(pagename, doctree, title)
        indexer = getattr(builder, "indexer", None)
        if pagename in getattr(indexer, "_titles", {}):
            indexer._titles[pagename] = _plain_html_title(indexer._titles[pagename])
        if pagename in getattr(indexer, "_all_titles", {}):
            indexer._all_titles[pagename] = [(plain_tex(t), i) for t, i in indexer._all_titles[pagename]]

    builder.index_page = index_page


def _theme_defaults(app, config):
    config.html_context = {"default_mode": "light", **(config.html_context or {})}  # read by pydata-sphinx-theme
    if not config.html_search_scorer:  # chapters above API objects whose names merely contain the query
        config.html_search_scorer = str(STATIC_DIR / SEARCH_SCORER)
    if str(STATIC_DIR) not in (static := list(config.html_static_path or [])):
        config.html_static_path = static + [str(STATIC_DIR)]


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.connect("autodoc-process-docstring", _box_refs)
    app.connect("builder-inited", _singlehtml_handlers)
    app.connect("builder-inited", _plain_search_titles)
    app.set_html_assets_policy("always")
    app.add_post_transform(DocLinkMath)
    app.add_css_file(STYLESHEET)
    app.connect("config-inited", _theme_defaults)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.add_config_value("attnrank_book_pdf", "", "html")
    app.add_config_value("attnrank_version", "", "html")
    app.connect("html-page-context", _version_footer)
    app.connect("html-page-context", _book_pdf_button, priority=600)  # after sphinx-book-theme's (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
