"""Members of a converted class read through an instance's type: ``type(p).CONST``.

What it does
    ``type_member_uses`` finds, anywhere in the tree, ``type(x).name`` or
    ``x.__class__.name`` (also ``getattr(type(x), "name")``, ``hasattr``, and the writes
    ``setattr(type(x), "name", v)`` and ``delattr``) where
    ``name`` is a method, class constant, static method or
    property a converted (or shadow) class defines, and refuses every such class with
    the line (the planner keeps those classes, and their subclasses, as classes).
Why
    A converted parameter's type is ``torch.nn.Parameter``: ``type(p).PACK`` and
    ``type(p).load(p, w)`` found the member on the old class and raise
    ``AttributeError`` after conversion; ``setattr(type(p), "LOADS", n)`` set the old
    class's constant and would set one on torch's ``Parameter`` for every parameter of
    the process. No rewrite can tell statically which kind ``x``
    holds. (Inside the class's own methods ``self.__class__`` is refused by the class's
    own rules; ``self`` of an ordinary class's method is that object, left alone here.)
Fix safety
    Dunder names (``__name__``, ``__qualname__``, ``__module__``) are not members the
    conversion moves; they answer ``Parameter``'s and are covered elsewhere (a
    comparison with the class's name refuses it, see the safety net).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from codemod.analysis.source_lines import line_text
from codemod.analysis.text_search import alternation, lines_at, names_pattern, nfkc_text
from codemod.planning.method_selves import MethodSelves, walked_files
from codemod.planning.plan import Plan
from codemod.types import BlockingUse, UseForm


def type_member_uses(plan: Plan, sources: dict[Path, str]) -> dict[str, BlockingUse]:
    """Qualname of each class one of whose members is read as ``type(x).name`` or
    ``x.__class__.name`` somewhere in ``sources`` -> the first such read."""
    owners = plan.member_owners()
    if not owners:
        return {}
    member = _member_pattern(frozenset(owners))
    quoted = _quoted_pattern(frozenset(owners))
    found: dict[str, BlockingUse] = {}
    names = frozenset(owners)

    def hit_lines(text: str) -> list[int]:
        return sorted({*type_read_lines(text, member), *named_read_lines(text, quoted)})

    for path, text, walker in walked_files(sources, hit_lines,
                                           lambda _path, lines: _Walker(names, lines)):
        for line, name, verb in sorted(walker.found):
            use = BlockingUse(path, line, line_text(text, line), UseForm.ESCAPE,
                              escape=f"{verb} `{name}` through the instance's type, which is "
                                     "torch.nn.Parameter after conversion")
            for qual in owners[name]:
                found.setdefault(qual, use)
    return found


def _member_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """``.name`` for each of ``names``, across whitespace, line continuations and comment
    lines after the dot."""
    return re.compile(rf"\.{_GAP}(?:{alternation(names)})(?!\w)")


def _quoted_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """Each of ``names`` as a string literal (``getattr(type(p), "PACK")``)."""
    return names_pattern(r"[\"'](?:{names})[\"']", names)


def named_read_lines(text: str, quoted: re.Pattern[str]) -> list[int]:
    """The lines of a lexical superset of ``getattr(type(x), "name")``, ``hasattr(...)``,
    ``setattr(...)`` and ``delattr(...)`` in ``text``: each such call whose first argument
    starts with ``type(``
    or spells ``__class__`` (``getattr(p.__class__, ...)``), in a text that quotes one of
    the names."""
    text = nfkc_text(text)
    if "__class__" not in text and _TYPE_CALL.search(text) is None:
        return []
    hits = []
    for word in _NAMED_CALLS:  # found by ``str.find``, then matched in place
        at = text.find(word)
        while at >= 0:
            if _NAMED_READ.match(text, at + len(word)) is not None:
                hits.append(at)
            at = text.find(word, at + len(word))
    if not hits or quoted.search(text) is None:
        return []
    return lines_at(text, sorted(hits))


#: The calls that read or write a member by its name: the builtins, also as a method
#: (``monkeypatch.setattr(type(p), "X", v)``) and the dunders (``type.__setattr__``).
_NAMED_CALLS = ("getattr", "hasattr", "setattr", "delattr", "__setattr__", "__delattr__")
_VERBS = {"setattr": "writes", "delattr": "deletes", "__setattr__": "writes",
          "__delattr__": "deletes"}

#: What follows ``getattr``/``hasattr`` in ``getattr(type(`` / ``hasattr(x.__class__``
#: (over blanks and line breaks).
_NAMED_READ = re.compile(r"\s*\(\s*(?:type\s*\(|[\w.\s]*__class__)")


#: What may stand between tokens of an expression in brackets: whitespace, line
#: continuations and whole comment lines. Each repetition starts at a ``#`` and ends at a
#: line end, so the pattern matches in one way only (no backtracking blow-up).
_GAP = r"[\s\\]*(?:#[^\r\n]*[\r\n][\s\\]*)*"


#: A call of ``type`` (``dtype(`` too: a superset), also across spaces, continuations
#: and comment lines. A pattern that starts with a literal is searched for by it.
_TYPE_CALL = re.compile(rf"type{_GAP}\(")

#: Characters that may stand between ``type(x)`` and the dot of ``.name``.
_SPACE = " \t\f\r\n\\"


def type_read_lines(text: str, member: re.Pattern[str]) -> list[int]:
    """The lines of a lexical superset of ``type(x).name`` and ``x.__class__.name`` in
    ``text``: each ``.name`` right after a closing parenthesis or ``__class__``, or after
    a line ending in a comment (``(type(x)  # why\\n .name)``). Only files with some are
    parsed, and only the statements spanning one are walked: method calls on a parameter
    (``param.load(...)``) name the same members on nearly every file of an engine and are
    not type reads. A text with non-ASCII characters is searched in NFKC form, as CPython
    reads identifiers (``ｔｙｐｅ(p).ＰＡＣＫ`` is ``type(p).PACK``)."""
    text = nfkc_text(text)
    if "__class__" not in text and _TYPE_CALL.search(text) is None:
        return []
    hits: list[int] = []
    for match in member.finditer(text):
        end = start = match.start()
        while end > 0 and text[end - 1] in _SPACE:
            end -= 1
        line_start = max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
        if text.endswith((")", "__class__"), 0, end) or (
                any(c in "\r\n" for c in text[end:start]) and "#" in text[line_start:end]):
            hits.append(start)
    return lines_at(text, hits)


class _Walker(MethodSelves):
    """``type(x).name`` / ``x.__class__.name`` reads, ``self`` of a method excepted."""

    def __init__(self, names: frozenset[str], lines: list[int] | None = None) -> None:
        super().__init__(lines)
        self.names = names
        #: (line, member name, "reads"/"writes"/"deletes")
        self.found: list[tuple[int, str, str]] = []

    def visit_Attribute(self, node: ast.Attribute) -> None:
        subject = _type_subject(node.value)
        if node.attr in self.names and subject is not None and not self.is_self(subject):
            self.found.append((node.lineno, node.attr, "reads"))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        """``getattr(type(x), "name", ...)``, ``hasattr(x.__class__, "name")``,
        ``setattr(type(x), "name", v)``, ``delattr(type(x), "name")``."""
        callee = node.func.id if isinstance(node.func, ast.Name) else \
            node.func.attr if isinstance(node.func, ast.Attribute) else None
        if callee in _NAMED_CALLS and (isinstance(node.func, ast.Name) or callee in _VERBS) \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and isinstance(name := node.args[1].value, str) and name in self.names:
            subject = _type_subject(node.args[0])
            if subject is not None and not self.is_self(subject):
                self.found.append((node.lineno, name, _VERBS.get(callee, "reads")))
        self.generic_visit(node)


def _type_subject(expr: ast.expr) -> ast.expr | None:
    """``x`` of ``type(x)`` or ``x.__class__``; None for anything else."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "type" \
            and len(expr.args) == 1 and not expr.keywords:
        return expr.args[0]
    if isinstance(expr, ast.Attribute) and expr.attr == "__class__":
        return expr.value
    return None
