"""The book machinery: chapter specs, notebook execution, the website build (module map: CONTRIBUTING.md)."""
