"""CPython's parse of each source text, made once per run and shared.

Several stages read a file with ``ast.parse``: the class-value proofs, the import graph,
the attribute-dict screen, the leftover screen, the statement spans. On a large tree the
same hundred files were parsed two or three times each. ``parse`` gives every caller the
same ``ast.Module`` for the same text; callers only read the trees (none is changed), so
sharing one is the same as parsing again. Forked conversion workers inherit the trees
parsed before the fork. ``clear`` drops them at the end of a run. ``dotted_expr`` reads a
name chain off such a tree (no LibCST here: ``check`` reads trees without it).
"""

from __future__ import annotations

import ast

#: Text -> its tree. Keyed by the text itself: a file whose text changed is parsed again.
_TREES: dict[str, ast.Module] = {}


def parse(text: str) -> ast.Module:
    """``ast.parse(text)``, parsed once per text; raises what ``ast.parse`` raises (a
    text that does not parse is not remembered)."""
    tree = _TREES.get(text)
    if tree is None:
        tree = ast.parse(text)
        _TREES[text] = tree
    return tree


def clear() -> None:
    """Forget every tree (the end of a run: the memory goes back)."""
    _TREES.clear()


def dotted_expr(node: ast.expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain of CPython's tree, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
