"""Chapter 1 (the approximation rank): its exact cases, tables, figures and glued numbers.

Built on :mod:`attnrank_lite.engine` (brackets and certificates); imports nothing else of the package.
"""
