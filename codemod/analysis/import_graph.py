"""Which files of the tree a module executes while it is being imported (a static view).

A rewrite that adds ``from R import helper`` at the top of a file ``F`` creates an import
cycle when importing ``R`` itself (transitively) imports ``F``: ``F`` would then ask for
``helper`` while ``R`` is still at its own import lines. ``loaded_while_importing(R)``
follows the import statements that run at import time (module level, including those in
``if``/``try``/``with`` blocks and class bodies, not those inside functions or under
``if TYPE_CHECKING:``; ``import *`` with the submodules ``__all__`` names; literal
``importlib.import_module("m")`` / ``__import__("m")``), through the
packages' ``__init__.py`` files, and returns every file of the tree they reach. Imports
run by a function called at import time (a plugin registry's loader) are not seen.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from codemod.analysis import python_trees, roots
from codemod.analysis.names import import_from_source


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``: False when the program runs."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_time_imports(tree: ast.Module, module_name: str, is_package: bool) -> list[str]:
    """Dotted names imported by the statements that run when the module is imported."""
    found: list[str] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # runs when called, not when imported
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = import_from_source(node, module_name, is_package)
            found.extend(f"{source}.{alias.name}" if source else alias.name
                         for alias in node.names if alias.name != "*")
            if source:
                found.append(source)
            if any(alias.name == "*" for alias in node.names) and source:
                found.append(f"{source}.*")  # the submodules its ``__all__`` names, too
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)  # the body runs for type checkers only
        elif isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)):
            # ``importlib.import_module("m")`` / ``__import__("m")`` with a literal name.
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant) \
                        and isinstance(call.args[0].value, str) and (
                            (isinstance(call.func, ast.Name) and call.func.id == "__import__")
                            or (isinstance(call.func, ast.Attribute) and call.func.attr == "import_module")):
                    found.append(call.args[0].value)
        elif isinstance(node, ast.stmt):
            stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)
                         or isinstance(child, (ast.ExceptHandler, ast.match_case)))
        elif isinstance(node, (ast.ExceptHandler, ast.match_case)):
            stack.extend(node.body)
    return found


def loaded_while_importing(path: Path, module_name: str, texts: Mapping[Path, str]) -> set[Path]:
    """The files of ``texts`` that importing ``module_name`` (the file ``path``) runs:
    its packages' ``__init__.py`` files, itself, and what their import-time statements
    import, followed. A file that does not parse counts as importing nothing."""
    if not module_name:
        return {path}
    by_module = roots.module_files(sorted(texts))

    def submodules_in_all(package: str) -> list[str]:
        # ``from package import *`` also imports the submodules its ``__all__`` names.
        init = by_module.get(package)
        try:
            tree = python_trees.parse(texts[init]) if init is not None and init.name == "__init__.py" \
                else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        names: list[str] = []
        for stmt in tree.body if tree is not None else ():
            if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets) \
                    and isinstance(stmt.value, (ast.List, ast.Tuple)):
                names += [e.value for e in stmt.value.elts
                          if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return [f"{package}.{name}" for name in names]

    def files_of(dotted: str) -> list[Path]:
        if dotted.endswith(".*"):
            return [f for sub in submodules_in_all(dotted[:-2]) for f in files_of(sub)]
        # ``a.b.c``: a/__init__.py, a/b/__init__.py, then a/b/c.py or a/b/c/__init__.py
        # (``from a.b import c`` may name a module or an object of a/b/__init__.py);
        # a namespace package (no ``__init__.py``) runs no file.
        parts = dotted.split(".")
        out = []
        for end in range(1, len(parts) + 1):
            found = by_module.get(".".join(parts[:end]))
            if found is not None:
                out.append(found)
        return out

    def module_of(found: Path) -> str:
        return roots.current().module_name(found)

    # Importing ``a.b.r`` runs a/__init__.py and a/b/__init__.py first.
    seen = {path, *files_of(module_name)}
    pending = [(found, module_of(found)) for found in sorted(seen)]
    while pending:
        current, name = pending.pop()
        try:
            tree = python_trees.parse(texts[current])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for dotted in import_time_imports(tree, name, current.name == "__init__.py"):
            for found in files_of(dotted):
                if found not in seen:
                    seen.add(found)
                    pending.append((found, module_of(found)))
    return seen
