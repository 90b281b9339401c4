"""A small Sphinx extension for the attnrank website (listed in ``_config.yml``).

* MathJax is loaded on **every** page, not only on pages with their own formulas: the sidebar,
  the theorem index and the search page show chapter and statement titles that contain math.
* Page scripts are de-duplicated: sphinx-thebe (pulled in by Jupyter Book) registers its inline
  configuration script twice, and the second ``const THEBE_JS_URL`` declaration is a JavaScript
  error on every page.
* The theme's colour mode defaults to ``light`` (an empty default is reported by the theme as a
  console error on a reader's first visit).
"""
from __future__ import annotations

__all__ = ["setup"]


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, out = set(), []
    for js in scripts:
        # an inline script is registered with filename None or "" depending on the extension
        key = (str(getattr(js, "filename", js) or ""), repr(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            out.append(js)
    context["script_files"] = out


def _theme_defaults(app, config):
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "light")  # pydata-sphinx-theme reads it from html_context
    config.html_context = context


def setup(app):
    app.set_html_assets_policy("always")
    app.connect("config-inited", _theme_defaults)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
