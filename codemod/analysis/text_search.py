"""Text searches the prefilters and screens share: one alternation of names, the line
numbers where a pattern matches, and whether an ``ast`` node spans none of those lines.

Why
    Several stages look for class names or attribute words in raw text before (or instead
    of) parsing; they must agree on how names are joined into a pattern and how lines are
    counted, so both are written once here.
Fix safety
    ``alternation`` puts longer names first, so a name that is a prefix of another never
    hides it where a pattern is anchored after the alternation. ``lines_matching`` numbers
    lines as CPython does (``\\r\\n``, ``\\r`` and ``\\n`` each end a line), so its numbers
    meet ``ast`` nodes' ``lineno``.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator


@functools.lru_cache(maxsize=8192)
def nfkc_text(text: str) -> str:
    """``text`` with every character in NFKC form, as CPython reads identifiers
    (``ｔｙｐｅ`` is ``type``): a search for identifiers in it finds what the parser
    sees. Only the code outside strings and comments must be read this way, and it is
    ASCII but for identifiers, so normalising the whole text finds no fewer; an ASCII
    or already normalised text (nearly every file) is returned as it is. Remembered per
    text: both tree-wide screens ask for every file."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def alternation(names: Iterable[str]) -> str:
    """``a|b|...`` of the escaped names, longest first (the body of a ``(?:...)`` group)."""
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


def word_after(word: str, not_after: str = r"\w") -> str:
    r"""``word`` where no ``not_after`` character stands before it: ``(?<!\w)word`` with
    the look-behind placed after the literal (``word(?<!\wword)``), so that a pattern
    starting with it starts with a literal. ``re`` looks for a pattern's leading literal,
    but tries one that starts with a look-behind or ``\b`` at every offset of the text
    (about 30 ns a character). Also ``\bword`` for a word that starts with a word
    character. ``not_after``: one character's class (``[\w.]``: not after a dot
    either)."""
    escaped = re.escape(word)
    return rf"{escaped}(?<!{not_after}{escaped})"


def lines_matching(text: str, pattern: re.Pattern[str]) -> list[int]:
    """Sorted 1-based numbers of the lines where ``pattern`` matches, as CPython numbers
    them."""
    return lines_at(text, (match.start() for match in pattern.finditer(text)))


def lines_at(text: str, offsets: Iterable[int]) -> list[int]:
    """Sorted 1-based numbers of the lines holding ``offsets`` (ascending), as CPython
    numbers them (``\\r\\n``, ``\\r`` and ``\\n`` each end a line)."""
    lines: list[int] = []
    line, pos = 1, 0
    carriage_returns = "\r" in text
    for start in offsets:
        line += text.count("\n", pos, start)
        if carriage_returns:
            line += text.count("\r", pos, start) - text.count("\r\n", pos, start)
        pos = start
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def misses_lines(node: ast.AST, lines: list[int]) -> bool:
    """Whether none of ``lines`` (sorted, as ``lines_matching`` gives them) lies within the
    lines ``node`` spans, its decorators included: a node that holds no match need not be
    entered. False for a node without a position (a module, an operator)."""
    first = getattr(node, "lineno", None)
    if first is None:
        return False
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        first = min(first, *(d.lineno for d in decorators))
    at = bisect.bisect_left(lines, first)
    return at == len(lines) or lines[at] > node.end_lineno  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=128)
def names_pattern(template: str, names: frozenset[str], flags: int = 0) -> re.Pattern[str]:
    """``template`` compiled with ``{names}`` standing for the ``alternation`` of the
    names (put it in a group: ``(?:{names})``); cached per template and name set."""
    return re.compile(template.replace("{names}", alternation(names)), flags)


def unjoined(text: str, pattern: re.Pattern[str], joiners: str = "") -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` that start no longer name: the character before each is
    no word character (nor one of ``joiners``, e.g. ``.`` for an attribute). Written
    out rather than as a lookbehind in ``pattern``: a pattern that begins with a literal
    is searched for by it, and a lookbehind before the literal makes every search over a
    whole tree about ten times slower."""
    for match in pattern.finditer(text):
        start = match.start()
        if start:
            before = text[start - 1]
            if before.isalnum() or before == "_" or before in joiners:
                continue
        yield match


def nodes_on_lines(tree: ast.AST, lines: list[int]) -> Iterator[ast.AST]:
    """The nodes of ``tree`` that span one of ``lines`` (sorted, as ``lines_matching``
    gives them), depth first: a node spanning none is not entered (``misses_lines``).
    For a search whose every match spells a word on one of ``lines``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if misses_lines(node, lines):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


#: ``import *`` (``unjoined``: the keyword starting no longer name).
_STAR = re.compile(r"import\s*(?:\(\s*)?\*")


def star_import(text: str) -> bool:
    """Whether ``text`` holds ``import *`` (in code or not: a superset)."""
    return "*" in text and next(unjoined(text, _STAR), None) is not None
