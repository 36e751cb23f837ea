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
    module_name_for,
    statements_in_scope,
)
from codemod.analysis.python_trees import dotted_expr
from codemod.analysis.scope_values import names_bound_in_body, parameter_names
from codemod.analysis.source_lines import line_text
from codemod.planning.made_at_run_time import made_at_run_time
from codemod.planning.safety_net import Escape, SafetyNet, dotted_mention


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
                    # With ``__all__``, a star import reads each name it lists from the
                    # module, through its ``__getattr__`` too.
                    info = net.info(source)
                    for name in sorted(set(info.declared_all or ()) & set(classes_named) if info else ()):
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


def _attribute_reads(node: ast.AST, shadowed: frozenset[str]) -> Iterator[tuple[ast.Attribute, frozenset[str]]]:
    """Each ``x.attr`` below ``node``, with the names a function around it binds itself
    (a parameter or local named like an imported module is not the module)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _attribute_reads(child, shadowed | parameter_names(child) | names_bound_in_body(child))
            continue
        if isinstance(child, ast.Attribute):
            yield child, shadowed
        yield from _attribute_reads(child, shadowed)
