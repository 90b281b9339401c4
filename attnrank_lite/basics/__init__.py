"""Chapter 1 (the approximation rank): its exact cases, tables, figures and glued numbers, built on
:mod:`attnrank_lite.engine` alone (brackets and certificates)."""
