"""CPython's parse of each source text, made once per run and shared.

Several stages read a file with ``ast.parse``: the class-value proofs, the import graph,
the attribute-dict screen, the leftover screen, the statement spans. On a large tree the
same hundred files were parsed two or three times each. ``parse`` gives every caller the
same ``ast.Module`` for the same text; callers only read the trees (none is changed), so
sharing one is the same as parsing again. Forked conversion workers inherit the trees
parsed before the fork. ``clear`` drops them at the end of a run. ``dotted_expr`` reads a
name chain off such a tree (no LibCST here: ``check`` reads trees without it), and
``identifiers_as_written`` says whether the tree holds the identifiers as the text spells
them (CPython normalises them, LibCST does not).
"""

from __future__ import annotations

import ast
import bisect
import io
import tokenize
import unicodedata

#: Text -> its tree. Keyed by the text itself: a file whose text changed is parsed again.
_TREES: dict[str, ast.Module] = {}
#: id of a tree -> the tree (kept, so that its id is not reused) and its nodes.
_NODES: dict[int, tuple[ast.AST, list[ast.AST]]] = {}


def parse(text: str) -> ast.Module:
    """``ast.parse(text)``, parsed once per text; raises what ``ast.parse`` raises (a
    text that does not parse is not remembered)."""
    tree = _TREES.get(text)
    if tree is None:
        tree = ast.parse(text)
        _TREES[text] = tree
    return tree


def nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` in ``ast.walk``'s order, listed once per tree: several
    rules walk the same module (the type comparisons and held types of ``check``'s CM006
    walked each file four times; on SGLang 0.5.23 converted, 1 s of its 2.9 s). Callers
    only read the list and the tree."""
    entry = _NODES.get(id(tree))
    if entry is None or entry[0] is not tree:
        entry = (tree, list(ast.walk(tree)))
        _NODES[id(tree)] = entry
    return entry[1]


def clear() -> None:
    """Forget every tree and node list (the end of a run: the memory goes back)."""
    _TREES.clear()
    _NODES.clear()


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


def identifiers_as_written(text: str) -> bool:
    """Whether CPython's tree holds every identifier of ``text`` as it is written: it
    normalises identifiers (NFKC), LibCST keeps them. A text NFKC leaves alone is; else
    only one whose every non-ASCII character stands in a comment or in a string that is
    no f-string (``# fixed … later``): a tokenizer may split an identifier it does not
    know (``B·``) into error tokens, and an f-string's text holds expressions."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return True
    starts = [0]
    starts += [i + 1 for i, char in enumerate(text) if char == "\n"]
    spans: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT or (
                    token.type == tokenize.STRING and "f" not in _prefix(token.string)):
                (row, col), (end_row, end_col) = token.start, token.end
                spans.append((starts[row - 1] + col, starts[end_row - 1] + end_col))
    except (tokenize.TokenError, SyntaxError, IndexError):
        return False
    spans.sort()
    begins = [start for start, _ in spans]
    for index, char in enumerate(text):
        if not char.isascii():
            at = bisect.bisect_right(begins, index) - 1  # the last span starting by here
            if at < 0 or index >= spans[at][1]:
                return False
    return True


def _prefix(literal: str) -> str:
    """The lower-cased prefix letters of a string literal (``rb``, ``f``...)."""
    end = 0
    while end < len(literal) and literal[end].isalpha():
        end += 1
    return literal[:end].lower()
