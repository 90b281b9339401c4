"""The code identity of a stored sweep row: the SHA-256 of the docstring-free syntax trees of
every package module in the static import closure of the row's entry module, in name order."""
from __future__ import annotations

import ast
import hashlib
from pathlib import Path

__all__ = ["PACKAGE", "ROW_ENTRY", "module_path", "imported_modules", "import_closure",
           "normalised_tree", "code_identity"]

#: the top-level package whose modules are followed
PACKAGE = "attnrank_lite"

#: the module whose code computes a stored sweep row (its ``sweep_task``)
ROW_ENTRY = "attnrank_lite.laws.scale"

_ROOT = Path(__file__).resolve().parents[2]


def module_path(name: str, root: Path = _ROOT) -> Path | None:
    """The source file of package module ``name`` under ``root`` (``None`` when there is none)."""
    base = root.joinpath(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _absolute(name: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` in module ``name`` refers to."""
    if not node.level:
        return node.module or ""
    is_package = name.endswith(".__init__")
    parts = name.removesuffix(".__init__").split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    return ".".join(parts[:keep] + ([node.module] if node.module else []))


def imported_modules(name: str, tree: ast.AST, root: Path = _ROOT) -> set[str]:
    """Package modules the imports of ``tree`` (module ``name``) load, with their parent packages."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(name, node)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    out = {".".join(parts[:i]) for parts in (m.split(".") for m in found) if parts[0] == PACKAGE
           for i in range(1, len(parts) + 1)}
    return {m for m in out if module_path(m, root) is not None}


def import_closure(entry: str = ROW_ENTRY, root: Path = _ROOT) -> dict[str, Path]:
    """Every package module reachable from ``entry`` through import statements, name -> path."""
    seen: dict[str, Path] = {}
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = module_path(name, root)
        if path is None:
            raise ValueError(f"entry: no module {name!r} under {root}")
        seen[name] = path
        tree = ast.parse(path.read_text(encoding="utf-8"))
        key = name + ".__init__" if path.name == "__init__.py" else name  # relative imports resolve from it
        todo.extend(imported_modules(key, tree, root) - seen.keys())
    return dict(sorted(seen.items()))


def _drop_docstring(body: list) -> list:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:] or [ast.Pass()]
    return body


def normalised_tree(source: str) -> str:
    """``ast.dump`` of ``source`` without positions and the docstrings of modules, classes, functions."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = _drop_docstring(node.body)
    return ast.dump(tree, include_attributes=False)


def code_identity(entry: str = ROW_ENTRY, root: Path = _ROOT) -> str:
    """SHA-256 (first 16 hex digits) of the :func:`normalised_tree` of ``import_closure(entry, root)``."""
    h = hashlib.sha256()
    for name, path in import_closure(entry, root).items():
        h.update(name.encode() + b"\0" + normalised_tree(path.read_text(encoding="utf-8")).encode() + b"\0")
    return h.hexdigest()[:16]
