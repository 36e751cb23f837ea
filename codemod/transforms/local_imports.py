"""An import added inside a function: the runtime module's helpers, imported where they
are called, in a file the runtime module loads while it is imported (a top-level import
there would be circular).

What it does
    ``with_import_first`` adds ``from <runtime> import <names>`` to a function: into an
    import of the same module the function starts with, else among the imports it starts
    with, where isort (ruff's ``I`` rules) puts it, else as its first statement (after
    its docstring).
Fix safety
    The import runs before any statement of the function that could use the names; the
    function's other statements and their order are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemod.analysis.classes import docstring_and_body
from codemod.transforms.import_edits import one_import
from codemod.transforms.import_format import (
    import_order,
    import_section,
    imported_module,
    member_order,
    module_path,
    name_comments,
)


def with_import_first(node: cst.FunctionDef, runtime: str, names: list[str]) -> cst.FunctionDef:
    """``node`` with ``from <runtime> import <names>`` among its first statements (after
    its docstring): a helper imported where it is called, in a file the runtime module
    loads while it is imported. Where the function starts with imports, the new one goes
    where isort puts it (``_sorted_place``)."""
    docstring, body = docstring_and_body(node)
    block = node.body if isinstance(node.body, cst.IndentedBlock) else cst.IndentedBlock(body=[])
    head = [docstring] if docstring is not None else []
    joined = _joined_import(body, runtime, names)
    if joined is not None:
        return node.with_changes(body=block.with_changes(body=[*head, *joined]))
    imported = cst.SimpleStatementLine(body=[cst.ImportFrom(
        module=cst.parse_expression(runtime),  # type: ignore[arg-type]
        names=[cst.ImportAlias(cst.Name(name)) for name in names])])
    at, new_section = _sorted_place(body, runtime)
    if new_section:
        imported = imported.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    return node.with_changes(body=block.with_changes(body=[*head, *body[:at], imported, *body[at:]]))


def _joined_import(body: Sequence[cst.BaseStatement], runtime: str,
                   names: list[str]) -> list[cst.BaseStatement] | None:
    """``body`` with ``names`` added to a ``from <runtime> import ...`` line it starts
    with (on one line, without brackets: plain names, no comment), the names in isort's
    order: isort merges two imports from one module. None where the body starts with no
    such line (a bracketed one keeps its layout: the new import goes beside it)."""
    for at, stmt in enumerate(body):
        if not one_import(stmt):
            return None
        small = stmt.body[0]  # type: ignore[attr-defined]
        if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                and module_path(small.module) == runtime and not isinstance(small.names, cst.ImportStar) \
                and small.lpar is None \
                and all(a.asname is None and isinstance(a.name, cst.Name) for a in small.names) \
                and not name_comments(small).count():
            held = {a.name.value for a in small.names if isinstance(a.name, cst.Name)}
            merged = sorted(held | set(names), key=member_order)
            joined = small.with_changes(names=[cst.ImportAlias(cst.Name(name)) for name in merged],
                                        lpar=None, rpar=None)
            return [*body[:at], stmt.with_changes(body=[joined]), *body[at + 1:]]
    return None


def _sorted_place(body: Sequence[cst.BaseStatement], runtime: str) -> tuple[int, bool]:
    """Where ``from <runtime> import ...`` goes among the import lines a function body
    starts with, in isort's order as the top-level layout reads it (``import_section``,
    ``import_order``; the runtime's package is first party), and whether it starts a
    section there (a blank line above it: no import of its section precedes it). 0
    where the body starts with no import."""
    package = runtime.split(".")[0]
    mine = import_section(runtime, package), (True, runtime.lower())
    run = 0
    while run < len(body) and one_import(body[run]):
        run += 1
    keys = [(import_section(imported_module(stmt) or "", package), import_order(stmt)) for stmt in body[:run]]
    at = next((i for i, other in enumerate(keys) if other > mine), run)
    return at, at > 0 and keys[at - 1][0] != mine[0]
