"""The book machinery: chapter specs and parameters, notebook execution, the website build.

Nothing outside ``site/`` imports from here. :mod:`.spec`, :mod:`.paths` (declarations, the
``_toc.yml`` reader); :mod:`.chapters` (one ``SPEC`` per chapter), :mod:`.params`, :mod:`.results`
(what the notebooks call); :mod:`.runner` (papermill, atomic outputs, run records);
:mod:`.appendix`, :mod:`.site_assets`, :mod:`.build`, :mod:`.sphinx_ext` (the site);
:mod:`.cli` (``python -m attnrank_lite``). The module map is in CONTRIBUTING.md.
"""
