"""A converted class's name read from a module of the tree that binds no such name refuses
the class.

What it finds
    ``from M import X`` (at any depth), or ``m.X`` where ``m`` is a name an import binds to
    the module ``M``, when ``M`` is a file of the tree, ``X`` is the name of a converted
    class, and ``M`` binds no ``X`` where the rewrites look: no definition, assignment or
    import of it in ``M``'s module scope, no star import of a module that may export it,
    and no submodule ``M.X``. Then ``X`` is made when it is read: by a module
    ``__getattr__`` (``_LAZY = {"Col": "pkg.params"}`` and ``import_module`` on demand,
    as engines do to import heavy parts lazily), or by code that fills the module's
    namespace at run time. The rewrites take such an ``X`` for some other object and
    leave ``isinstance(p, X)`` as it is, while ``X`` may be the class that becomes a
    function (``TypeError`` at run time). Each such read is an escaped use of every
    converted class of that name, which the planner refuses, naming the line.
Not reported
    Modules outside the tree, and a name ``M`` binds in any way (even to something else).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from codemod.analysis.names import (
    import_from_source,
    import_targets,
    literal_all,
    module_name_for,
    statements_in_scope,
)
from codemod.analysis.python_trees import dotted_expr
from codemod.analysis.scope_values import names_bound_by, names_bound_in_body, parameter_names, walk_scope
from codemod.analysis.source_lines import line_text
from codemod.planning.made_at_run_time import made_at_run_time
from codemod.planning.safety_net import Escape, SafetyNet, dotted_mention
from codemod.prefilters import mentioned


def unbound_imports(tree: ast.Module, path: Path, text: str,
                    classes_named: dict[str, list[str]], net: SafetyNet) -> list[Escape]:
    """Each read in ``tree`` (the file ``path``, whose text is ``text``) of a converted
    class's name (``classes_named``: the qualified names of the classes of each name)
    from a module of the tree that binds no such name (see the module doc)."""
    module = module_name_for(path)
    is_package = path.name == "__init__.py"
    escapes: list[Escape] = []

    def report(node: ast.stmt | ast.expr, source: str, name: str) -> None:
        how = made_at_run_time(net, source, name)
        if how is not None:
            for qualname in classes_named[name]:
                escapes.append((node.lineno, node.col_offset, qualname, line_text(text, node.lineno), how))

    for node, _top in statements_in_scope(tree):
        if isinstance(node, ast.ImportFrom):
            source = import_from_source(node, module, is_package)
            for alias in node.names:
                if alias.name in classes_named:
                    report(node, source, alias.name)
                elif alias.name == "*":
                    for name in _star_read(net, source, text, classes_named):
                        report(node, source, name)
    modules = {local: full for local, full in import_targets(tree, module, is_package)
               if net.module_path(full) is not None}
    if modules and dotted_mention(frozenset(classes_named)).search(text):
        for read, shadowed in _attribute_reads(tree, frozenset()):
            if read.attr in classes_named:
                head, dot, rest = (dotted_expr(read.value) or "").partition(".")
                if head in modules and head not in shadowed:
                    report(read, modules[head] + dot + rest, read.attr)
    return escapes


def _star_read(net: SafetyNet, source: str, text: str, classes_named: dict[str, list[str]]) -> list[str]:
    """The converted classes' names ``from source import *`` may read from ``source``
    by name, and so through its ``__getattr__``: with ``__all__``, each name it lists
    (any name the importing ``text`` spells, when the list is not one literal)."""
    scope = net.module_scope(source)
    path = net.module_path(source)
    if scope is None or path is None or "__all__" not in scope:
        return []  # without ``__all__`` a star import reads the namespace, no ``__getattr__``
    listed = literal_all(net.texts[path])
    if listed is not None:
        return sorted(listed & set(classes_named))
    return sorted(mentioned(text, frozenset(classes_named)))


def _attribute_reads(node: ast.AST, shadowed: frozenset[str], outside: frozenset[str] | None = None,
                     ) -> Iterator[tuple[ast.Attribute, frozenset[str]]]:
    """Each ``x.attr`` below ``node``, with the names a scope around it binds itself
    other than by an import (a function's parameter or local, a comprehension's target,
    a class body's name, named like an imported module, is not the module). ``outside``:
    inside a class body, the names shadowed around the class (what its methods see)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            own = parameter_names(child) | (names_bound_in_body(child) - _imported_in(child))
            yield from _attribute_reads(child, (shadowed if outside is None else outside) | own)
        elif isinstance(child, ast.ClassDef):
            own = names_bound_in_body(child) - _imported_in(child)
            yield from _attribute_reads(child, shadowed | own, shadowed if outside is None else outside)
        elif isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            targets = names_bound_by(n for g in child.generators for n in ast.walk(g.target))
            yield from _attribute_reads(child, shadowed | targets, outside)
        else:
            if isinstance(child, ast.Attribute):
                yield child, shadowed
            yield from _attribute_reads(child, shadowed, outside)


def _imported_in(scope: ast.AST) -> set[str]:
    """The names the import statements of ``scope``'s own body bind."""
    body = scope.body if isinstance(scope.body, list) else []  # type: ignore[attr-defined]
    return {(alias.asname or alias.name).split(".")[0] for node in walk_scope(body)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
