"""Names that statements bind in the function they belong to, read from LibCST's nodes:
assignment, loop, ``with``/``except`` and walrus targets, ``match`` captures, ``del``, imports, nested
``def`` and ``class`` (whose bodies bind in their own scope and are not entered).

``bound_in_some_function`` answers the module-wide question first, from the text and
CPython's symbol table: most modules bind none of the names asked about in any function,
and then no function body needs a walk.
"""

from __future__ import annotations

import functools
import re
import symtable
import unicodedata
from collections.abc import Iterable

import libcst as cst

from codemod.analysis.text_search import nfkc_text, word_after

#: Each node type that binds the names in one of its fields, and that field.
_BINDING_FIELDS: dict[type[cst.CSTNode], str] = {
    cst.AssignTarget: "target",
    cst.AugAssign: "target",
    cst.AnnAssign: "target",
    cst.NamedExpr: "target",
    cst.For: "target",
    cst.AsName: "name",
    cst.Del: "target",
    # ``match`` captures: ``case name:``, ``case [*name]``, ``case {**name}``, ``... as name``.
    cst.MatchAs: "name",
    cst.MatchStar: "name",
    cst.MatchMapping: "rest",
}


class _Bound(cst.CSTVisitor):
    """Names that statements bind (assignments, imports, loops, ``with``/``except`` targets)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        """Record what ``node`` binds, then visit it as usual (``visit_*`` below)."""
        field = _BINDING_FIELDS.get(type(node))
        if field is not None:
            self._targets(getattr(node, field))
        return super().on_visit(node)

    def _targets(self, node: cst.CSTNode | None) -> None:
        """The names of an assignment target (tuples, lists and starred ones unpacked)."""
        if node is None:
            return
        if isinstance(node, cst.Name):
            self.names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._targets(element.value)
        elif isinstance(node, cst.StarredElement):
            self._targets(node.value)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            head: cst.BaseExpression = node.name
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name):
                self.names.add(head.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False


def names_bound(stmts: tuple[cst.BaseStatement, ...] | list[cst.BaseStatement]) -> set[str]:
    """Names that ``stmts`` bind in the function they belong to."""
    bound = _Bound()
    for stmt in stmts:
        stmt.visit(bound)
    # CPython reads identifiers in NFKC form; LibCST keeps them as written.
    return {name if name.isascii() else unicodedata.normalize("NFKC", name) for name in bound.names}


def bound_in_some_function(text: str, names: Iterable[str]) -> frozenset[str]:
    """Those of ``names`` that some function, ``lambda`` or comprehension of the module
    ``text`` may bind in its own scope (a superset: each one returned needs the exact
    answer of ``names_bound``; one not returned is bound by none). A function that
    declares one ``global`` and assigns it counts too (``names_bound`` sees the
    assignment); ``assigned_as_global`` tells those apart.

    A name every mention of which is a call (``isinstance(...)``, not after a dot and not
    ``def isinstance(``) is bound nowhere; the others are looked up in CPython's symbol
    table, which knows every binding form (parameters, targets, imports, ``except``/
    ``with``/``match`` captures). A text the symbol table cannot read keeps them all.
    """
    found = _function_bindings(text, names)
    return frozenset(found) if found is not None else frozenset(names)


def assigned_as_global(text: str, names: Iterable[str]) -> frozenset[str]:
    """Those of ``names`` that a function of ``text`` declares ``global`` and assigns
    (``global isinstance; isinstance = f``): after that call, every function of the
    module calls what was assigned, as if the module had bound it. In a text the symbol
    table cannot read (syntax of a newer Python), each one a ``global`` statement names."""
    found = _function_bindings(text, names)
    if found is None:
        declared = {word for statement in _GLOBAL.finditer(text)
                    for word in re.findall(r"\w+", statement.group("names"))}
        return frozenset(names) & declared
    return frozenset(name for name, as_global in found.items() if as_global)


def bound_at_module_level(text: str, names: Iterable[str]) -> frozenset[str]:
    """Those of ``names`` that the module ``text`` binds in its own scope anywhere (also
    inside a module-level ``if``, ``for``, ``while``, ``with``, ``try`` or ``match``, or
    as a ``def``/``class``), as CPython's symbol table reads it. In a text the symbol
    table cannot read, each one mentioned otherwise than as a call."""
    mentioned = _mentioned(text, names)
    if not mentioned:
        return frozenset()
    table = _module_table(text)
    if table is None:
        return frozenset(mentioned)
    found: set[str] = set()
    for name in mentioned:
        try:
            symbol = table.lookup(name)
        except KeyError:
            continue
        if symbol.is_assigned() or symbol.is_imported():
            found.add(name)
    return frozenset(found)


#: A ``global`` statement and the names it declares (across line continuations).
_GLOBAL = re.compile(r"(?<![\w.])global[ \t\\]+(?P<names>(?:[^\n;\\]|\\\r?\n)*)")


def _function_bindings(text: str, names: Iterable[str]) -> dict[str, bool] | None:
    """Each of ``names`` some function of ``text`` binds -> whether one binds it as a
    global; None when the symbol table cannot read ``text``."""
    mentioned = _mentioned(text, names)
    if not mentioned:
        return {}
    table = _module_table(text)
    if table is None:
        return None
    bound: dict[str, bool] = {}
    scopes = list(table.get_children())
    while scopes:
        scope = scopes.pop()
        scopes.extend(scope.get_children())
        if scope.get_type() != "function":
            continue
        for name in mentioned:
            try:
                symbol = scope.lookup(name)
            except KeyError:
                continue
            if symbol.is_local() or symbol.is_parameter() or symbol.is_assigned() \
                    or symbol.is_imported():
                bound[name] = bound.get(name, False) or symbol.is_global()
    return bound


def _mentioned(text: str, names: Iterable[str]) -> set[str]:
    """Those of ``names`` that ``text`` mentions otherwise than as a call; CPython reads
    identifiers in NFKC form (``ｔｙｐｅ`` is ``type``), so does the search."""
    wanted = frozenset(names)
    if not wanted:
        return set()
    text = nfkc_text(text)
    return {match.group("name") for pattern in _non_call_mentions(wanted)
            for match in pattern.finditer(text)}


@functools.lru_cache(maxsize=16)
def _module_table(text: str) -> symtable.SymbolTable | None:
    """CPython's symbol table of the module ``text`` (None: it cannot read it), made once
    per text: a transformer asks it up to three questions about the same module."""
    try:
        return symtable.symtable(text, "<module>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=16)
def _non_call_mentions(names: frozenset[str]) -> tuple[re.Pattern[str], ...]:
    r"""A mention of one of ``names`` that is not a call of it: not after a dot, not
    followed by ``(`` on the same line (``del isinstance`` then a line that starts with
    ``(`` is no call); or the name of a ``def``/``class``, also across a line
    continuation. One pattern for each of the three, each starting with its literal
    words (``text_search.word_after``: a pattern that starts with a look-behind or
    ``\b`` cost 0.14 s for each question about ``type`` on vLLM 0.34's converted
    tree). No match of one
    overlaps another's but at the name a ``def`` or ``class`` defines, which both give,
    for names that are not keywords (a keyword is no name a module binds; the callers ask
    about builtins). With ``def`` among the names, ``def f`` gave ``def`` alone before."""
    alternation = "|".join(sorted(map(re.escape, names)))
    mention = "|".join(word_after(name, r"[\w.]") for name in sorted(names))
    return (re.compile(rf"(?P<name>{mention})(?!\w)(?![ \t\f]*\()"),
            re.compile(rf"{word_after('def')}[\s\\]+(?P<name>{alternation})(?!\w)"),
            re.compile(rf"{word_after('class')}[\s\\]+(?P<name>{alternation})(?!\w)"))
