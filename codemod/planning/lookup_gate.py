"""The text read that decides which files the computed-lookup rule parses.

``read_heads`` reads one text for the names a computed or whole read of a module's
members may go through (``getattr(R``, ``vars(R``, ``getmembers(R``, ``R.__dict__``,
``R.__getattribute__``), keeping those an import statement binds, with the words of the
module path it binds them to. ``may_look_up`` then says, for one plan, whether such a
name may be a module that binds a converted class: only those files are parsed
(``planning/computed_lookups.py``). A superset: a file it lets through may hold no such
read; the tree decides.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

#: The calls through which a file may read a module's members by a computed name or
#: all at once, each followed by the first name of what it reads from.
_CALLS = ("getattr", "vars", "getmembers", "getmembers_static")
#: Attributes read off a module whose members are read through them: the first name
#: before each is what the read goes through.
_DUNDERS = ("__dict__", "__getattribute__")
_FIRST_NAME = re.compile(r"\s*\(\s*(?:#[^\n]*\n\s*)*(\w+)")
#: What stands before ``.__dict__``: a dotted name, read backwards from its end.
_DOTTED_BEFORE = re.compile(r"[\w.]*\w")
#: Names a module looked up by a string is read through.
_BY_STRING = frozenset({"sys", "importlib", "import_module"})
#: First names that are no module a file imports.
_NOT_MODULES = frozenset({"self", "cls"})


@dataclass(frozen=True)
class Heads:
    """What a text may read modules' members through (``read_heads``)."""

    #: The first name of each expression ``getattr(R``, ``vars(R``, ``getmembers(R`` or
    #: ``R....__dict__`` reads from, that an import statement binds: with the words of the
    #: module path it binds it to (``from pkg import params as R``: ``R`` -> params).
    bound: dict[str, frozenset[str]]
    #: Whether the text spells ``globals`` (a module's read of its own members).
    spells_globals: bool
    #: Whether a ``.__dict__`` is read off an expression the text read cannot name
    #: (``(params).__dict__``): the tree decides.
    unsure: bool = False


def read_heads(text: str) -> Heads | None:
    """``Heads`` of ``text``, None where it has none (a cheap read of the text; the
    tree decides). A ``getattr`` with a plain string as its second argument is the
    safety net's; ``self`` and ``cls`` are no modules."""
    heads: set[str] = set()
    unsure = False
    for call in _CALLS:
        start = text.find(call)
        while start != -1:
            found = _FIRST_NAME.match(text, start + len(call))
            if found is not None and (start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")) \
                    and not (call == "getattr" and _literal_second(text, found.start(1))):
                heads.add(found.group(1))
            start = text.find(call, start + 1)
    for dunder in _DUNDERS:
        unsure = _heads_before(text, dunder, heads) or unsure
    heads -= _NOT_MODULES
    bound = {head: words for head, words in _import_words(text).items() if head in heads} if heads else {}
    spells_globals = "globals" in text
    return Heads(bound, spells_globals, unsure) if bound or spells_globals or unsure else None


def _heads_before(text: str, dunder: str, heads: set[str]) -> bool:
    """Add to ``heads`` the first name of each dotted name ``.dunder`` is read off in
    ``text``; whether one is read off something else (``(params).__dict__``)."""
    unsure = False
    start = text.find(dunder)
    while start != -1:
        before = text[max(0, start - 200):start].rstrip()
        if before.endswith("."):
            dotted = _DOTTED_BEFORE.search(before[:-1].rstrip()[::-1])
            if dotted is not None and dotted.start() == 0:
                heads.add(dotted.group(0)[::-1].split(".")[0])
            elif before[:-1].rstrip().endswith(")"):
                head, unsure_here = _head_in_parentheses(before[:-1].rstrip())
                heads.update([head] if head else [])
                unsure = unsure or unsure_here
        start = text.find(dunder, start + 1)
    return unsure


def _head_in_parentheses(before: str) -> tuple[str | None, bool]:
    """For a text ending in ``)``: the first name inside bare parentheses (``(params)``),
    or whether a call there may give a module (``import_module(...)``, ``getattr(...)``:
    the tree decides). Any other call's result is no module a file imports."""
    depth = 0
    for at in range(len(before) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(before[at], 0)
        if depth == 0:
            callee = _CALLEE.search(before[:at])
            if callee is None or keyword.iskeyword(callee.group(1)):  # ``return (params)``
                inner = _FIRST_WORD.match(before, at + 1)
                return (inner.group(1) if inner is not None else None), False
            return None, callee.group(1) in _MODULE_CALLS
    return None, True


#: The name right before an opening parenthesis (searched in the text cut there).
_CALLEE = re.compile(r"(\w+)[ \t]*\Z")
_FIRST_WORD = re.compile(r"\s*(\w+)")
#: Calls whose result may be a module.
_MODULE_CALLS = frozenset({"import_module", "__import__", "getattr", "vars"})


def file_heads(texts: dict[Path, str]) -> dict[Path, Heads]:
    """``read_heads`` of every text that has some (``check`` reads them in a forked
    process while it parses: a read of every text, ~0.1 s on vLLM 0.34)."""
    return {path: heads for path, text in texts.items() if (heads := read_heads(text)) is not None}


def may_look_up(heads: Heads, module_words: frozenset[str], own: bool) -> bool:
    """Whether a text with ``heads`` may read the members of a module that binds a
    converted class. ``module_words``: the last names of the modules that may bind one
    and their top package's; ``own``: whether the text is one of those modules
    (``globals()`` reads its own members). A module looked up by a string is read through
    ``sys`` or ``importlib``."""
    return heads.unsure or (own and heads.spells_globals) or any(
        not words.isdisjoint(module_words | _BY_STRING) for words in heads.bound.values())


def _literal_second(text: str, start: int) -> bool:
    """Whether the call whose first argument starts at ``start`` has a plain string as
    its second (``getattr(m, "X")``: the safety net's): the first argument is read to a
    comma outside brackets, within a line or two (False where that is not found)."""
    depth = 0
    for at in range(start, min(len(text), start + 300)):
        char = text[at]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return False
            depth -= 1
        elif char in "\"'#":
            return False
        elif char == "," and depth == 0:
            second = _SECOND.match(text, at + 1)
            return second is not None and (second.group(1) or second.group(2)) != "__dict__"
    return False


#: A plain string literal that is the whole second argument (no f-string: that one
#: computes; not ``"A" if c else "B"`` or ``"%s" % k``): its text.
_SECOND = re.compile(r"""\s*(?:[rRbBuU]{0,2})(?:"([^"\\\n]*)"|'([^'\\\n]*)')\s*[,)]""")


#: What may stand before ``import`` in an import statement: the start of a line (or
#: what ``;`` or a one-line ``if ...:`` ends), then ``from <module>``.
_BEFORE_IMPORT = re.compile(r"(?:^|[;:])[ \t]*(?:from[ \t]+([\w.]+)[ \t]+)?$", re.MULTILINE)
_WORDS = re.compile(r"\w+")
_COMMENT = re.compile(r"#[^\n]*")


def _import_words(text: str) -> dict[str, frozenset[str]]:
    """Each name the import statements of ``text`` bind, with the words of the module
    path a read through it may name: the path's last word (``from a.b import c as d``:
    ``d`` -> c; ``import a.b as d``: ``d`` -> b), every word of ``import a.b`` (``a`` ->
    a, b: ``a.b.X`` is read through ``a``)."""
    bound: dict[str, set[str]] = {}
    start = text.find("import")
    while start != -1:
        end = start + len("import")
        line = text.rfind("\n", 0, start) + 1
        before = _BEFORE_IMPORT.search(text, line, start)
        if before is not None and end < len(text) and text[end] in " \t(":
            first = end
            while first < len(text) and text[first] in " \t":
                first += 1
            stop = end
            if text.startswith("(", first):  # to the closing parenthesis, past comments
                stop = first + 1
                while stop < len(text) and text[stop] != ")":
                    if text[stop] == "#":
                        newline = text.find("\n", stop)
                        stop = len(text) if newline == -1 else newline
                    else:
                        stop += 1
            while True:
                stop = text.find("\n", stop)
                if stop == -1 or text[stop - 1] != "\\":
                    break
                stop += 1
            names = _COMMENT.sub("", text[end:stop if stop != -1 else len(text)])
            for item in names.split(";")[0].strip(" \t()").split(","):
                imported, _, alias = item.partition(" as ")
                words = _WORDS.findall(imported)
                if not words:
                    continue
                if before.group(1) is None and not alias.strip():
                    bound.setdefault(words[0], set()).update(words)
                else:
                    bound.setdefault(alias.strip() or words[-1], set()).add(words[-1])
        start = text.find("import", end)
    return {name: frozenset(words) for name, words in bound.items()}
