"""The book machinery: chapter specs and parameters, notebook execution, the website build.

Layers (each imports only those above it; nothing outside ``site/`` imports from here):

* :mod:`.spec` — :class:`~.spec.Param`, :class:`~.spec.ChapterSpec` (declarations only);
  :mod:`.paths` — repository root, notebooks folder, the ``_toc.yml`` reader.
* :mod:`.chapters` — one ``SPEC`` per chapter (``chNN.py``), discovered automatically;
  :mod:`.params` — the notebooks' validation cell; :mod:`.results` — ``save_table``.
* :mod:`.runner` — papermill execution with atomic outputs and a run record.
* :mod:`.appendix`, :mod:`.site_assets`, :mod:`.build` — generated pages, MathJax, the site build;
  :mod:`.sphinx_ext` — the Sphinx extension; :mod:`.cli` — ``python -m attnrank_lite``.
"""
