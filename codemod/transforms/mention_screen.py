"""Each mention of a converted class on CPython's tree: its kind, and what its rule does.

``MentionScreen`` walks the lines of a file that name a class (or ``isinstance``/``type``),
gives each mention its ``UseKind`` from its position (``position``: the word
``analysis.ast_uses.use_kind`` has for the same position), and acts as the kind's rule in
``analysis.use_rules`` says: a name the factory keeps, a value use (a leftover unless the
plan keeps it), or a rewrite's site. Where the answer could differ from LibCST's it
raises ``Undecided``; ``leftover_screen`` then leaves the file to LibCST.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from codemod.analysis.dispatch_registrations import registrations
from codemod.analysis.held_types import covered_names, file_held_types
from codemod.analysis.names import import_targets, module_globals, module_name_for
from codemod.analysis.source_lines import physical_lines
from codemod.analysis.text_search import alternation, lines_matching, misses_lines
from codemod.analysis.type_comparisons import is_type_of
from codemod.analysis.use_rules import SAME_ON_FUNCTIONS, USE_RULES, Outcome, UseKind
from codemod.planning.plan import Plan

#: (line, 1-based column, class qualname, source text): what ``unconverted_uses`` returns.
Leftover = tuple[int, int, str, str]

#: Builtins whose calls a rewrite relies on (not rewritten where the file rebinds them).
_REWRITTEN_BUILTINS = frozenset({"isinstance", "type"})

#: Calls whose arguments a rewrite or ``value_flow.is_class_style`` treats specially.
_SPECIAL_CALLS = frozenset({"isinstance", "issubclass", "type", "super"})

#: Positions an annotation is in: none, one where every Name is rewritten (reached only
#: through non-attribute nodes), one below an attribute (the rewrite skips those).
_NO, _CLEAN, _DIRTY = 0, 1, 2


@functools.lru_cache(maxsize=16)
def _words(names: frozenset[str]) -> re.Pattern[str]:
    """Whole-identifier mentions of ``names`` or of the builtins a rewrite relies on."""
    words = alternation(names | _REWRITTEN_BUILTINS)
    return re.compile(rf"(?<!\w)(?:{words})(?!\w)")


#: Nodes holding identifiers as strings that LibCST's scanner visits as ``Name`` nodes.
_SCANNED_STRINGS = (ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar,
                    ast.MatchMapping, ast.MatchClass)


def _identifiers(node: ast.AST) -> list[str]:
    """The identifiers ``node`` holds as strings (LibCST holds each as a ``Name``)."""
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.keyword):
        return [node.arg] if node.arg else []
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.alias):
        return [*node.name.split("."), *([node.asname] if node.asname else [])]
    if isinstance(node, ast.ImportFrom):
        return node.module.split(".") if node.module else []
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    if isinstance(node, ast.MatchClass):
        return list(node.kwd_attrs)
    return []


def _read_twice_alike(expr: ast.expr) -> bool:
    """``use_sites.read_twice_alike`` on a CPython tree: a plain name."""
    return isinstance(expr, ast.Name)


class Undecided(Exception):
    """A mention in a position the screen does not model exactly."""


class MentionScreen:
    """Classifies the mentions of one file; collects its leftovers and rewrite sites."""

    def __init__(self, text: str, tree: ast.Module, path: Path, plan: Plan,
                 names: frozenset[str]) -> None:
        self.plan = plan
        self.names = names
        self.text = text
        self.tree = tree
        self.registrations = registrations(text)
        self.path = path
        self.found: list[Leftover] = []
        #: Lines that mention one of ``names``, ``isinstance`` or ``type``: only nodes spanning one
        #: of them are walked (any mention, binding or use, lies on such a line).
        self.interesting = lines_matching(text, _words(names))
        #: Builtins a mention was called safe for (``isinstance`` and ``type`` are
        #: rewritten)...
        self.relies_on: set[str] = set()
        #: ...which they are not if the file binds that name anywhere.
        self.bound: set[str] = set()
        self._type_checks: dict[int, tuple[set[int], set[int]]] = {}
        #: Mentions a rewrite acts on: an ``isinstance`` test or a ``type(p)`` comparison
        #: (whatever class it names), an annotation naming a converted class, a string
        #: annotation naming any.
        self.rewrite_sites = 0
        #: Each mention decided, with its kind (in the walk's order).
        self.kinds: list[tuple[ast.Name | ast.Attribute, UseKind]] = []
        #: Each leftover found, with its kind.
        self.leftover_kinds: dict[Leftover, UseKind] = {}
        #: ids of ``X.attr`` nodes whose own attribute is read (``X.m.__name__``).
        self._read_further: set[int] = set()

    @functools.cached_property
    def held_names(self) -> frozenset[str]:  # names holding a type the rewrite covers
        return covered_names(file_held_types(self.text))

    @functools.cached_property
    def targets(self) -> dict[str, set[str]]:
        """Local name -> the qualified names the file's imports bind it to (only a
        leftover needs them: computed on first use)."""
        targets: dict[str, set[str]] = {}
        for local, target in import_targets(self.tree, self.module, self.path.name == "__init__.py"):
            targets.setdefault(local, set()).add(target)
        return targets

    @functools.cached_property
    def lines(self) -> list[str]:
        """The physical lines as CPython counts them."""
        return physical_lines(self.text)

    def run(self, tree: ast.Module) -> list[Leftover]:
        """Classify every mention, iteratively (deep inputs do not recurse)."""
        stack: list[tuple[ast.AST, ast.AST | None, ast.AST | None, int]] = [(tree, None, None, _NO)]
        lines = self.interesting
        while stack:
            node, parent, grandparent, annotation = stack.pop()
            if misses_lines(node, lines):
                continue  # no line of this node names anything the screen looks at
            if annotation and isinstance(node, ast.Constant) and self.names_in(node.value):
                self.rewrite_sites += 1  # a string annotation: rewritten by its text
            if isinstance(node, ast.Name):
                if node.id in self.names:
                    self.name(node, parent, grandparent, annotation)
                if node.id in _REWRITTEN_BUILTINS and not isinstance(node.ctx, ast.Load):
                    self.bound.add(node.id)
                continue
            self.identifiers(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (any(
                    isinstance(d, ast.Attribute) and d.attr == "register" for d in node.decorator_list)
                    or self.registrations.registers(node.name, [
                        d.id if isinstance(d, ast.Name) else None for d in node.decorator_list])):
                raise Undecided  # registered: its annotations are dispatch keys, not rewritten
            if isinstance(node, ast.Attribute) and node.attr in self.names:
                self.attribute(node, parent, annotation)
            below = _DIRTY if annotation and isinstance(node, ast.Attribute) else annotation
            annotated = isinstance(node, (ast.arg, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef))
            for field, value in ast.iter_fields(node):
                children = value if isinstance(value, list) else (value,)
                child_annotation = _CLEAN if annotated and field in ("annotation", "returns") else below
                for child in children:
                    if isinstance(child, ast.AST):
                        stack.append((child, node, parent, child_annotation))
        if self.relies_on & self.bound:
            raise Undecided
        return sorted(self.found)

    def names_in(self, value: object) -> bool:
        """Whether a constant's text (a string annotation's) holds one of ``names``."""
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        return isinstance(value, str) and _mention_words(self.names).search(value) is not None

    def identifiers(self, node: ast.AST) -> None:
        """Identifiers CPython keeps as strings but LibCST visits as ``Name`` nodes."""
        if isinstance(node, _SCANNED_STRINGS):
            idents = _identifiers(node)
            if any(ident in self.names for ident in idents):
                raise Undecided
        elif isinstance(node, ast.alias):
            idents = [node.asname or node.name.split(".")[0]]  # the name it binds
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.arg)):
            # Names LibCST's scanner skips (definitions, parameters, imports) can still
            # bind ``isinstance`` or ``type``, which turns their rewrites off.
            idents = _identifiers(node)
        else:
            return
        self.bound.update(_REWRITTEN_BUILTINS.intersection(idents))

    # -- one mention: its kind (its position), then what the kind's rule says --------------
    def attribute(self, node: ast.Attribute, parent: ast.AST | None, annotation: int) -> None:
        if annotation == _CLEAN:
            self.decide(node, UseKind.ANNOTATION)  # the annotation rewrite resolves the chain
        elif isinstance(parent, ast.Call) and parent.func is node:
            self.decide(node, UseKind.CALL)  # ``m.X(...)``
        else:
            raise Undecided

    def name(self, node: ast.Name, parent: ast.AST | None, grandparent: ast.AST | None,
             annotation: int) -> None:
        if not isinstance(node.ctx, ast.Load) or annotation == _DIRTY:
            raise Undecided
        kind, site = self.position(node, parent, grandparent, annotation)
        self.decide(node, kind, site)

    def position(self, node: ast.Name, parent: ast.AST | None, grandparent: ast.AST | None,
                 annotation: int) -> tuple[UseKind, ast.AST | None]:
        """The kind of use of ``node`` (``analysis.ast_uses.use_kind``'s word for the same
        position, an annotation's anywhere inside one) and the call or comparison that
        decides it; ``Undecided`` for a position the screen does not model."""
        if annotation == _CLEAN:
            return UseKind.ANNOTATION, None  # ``p: X`` -> ``p: Parameter``
        if isinstance(parent, ast.Call):
            if parent.func is node:
                return UseKind.CALL, None  # ``X(...)``: the factory keeps the name
            if any(a is node for a in parent.args):
                return self.argument(node, parent, direct=True)
        elif isinstance(parent, ast.keyword) and parent.arg is not None \
                and isinstance(grandparent, ast.Call):
            return self.argument(node, grandparent, direct=False)
        elif isinstance(parent, (ast.Tuple, ast.List, ast.Set)) and isinstance(grandparent, ast.Compare) \
                and any(side is parent for side in (grandparent.left, *grandparent.comparators)) \
                and not any(isinstance(e, ast.Starred) for e in parent.elts):
            return self.compared(grandparent), grandparent  # ``k in (X, Y)``
        elif isinstance(parent, (ast.Tuple, ast.List, ast.Set)) and isinstance(grandparent, ast.Call) \
                and self.isinstance_test(grandparent) and grandparent.args[1] is parent \
                and not any(isinstance(e, ast.Starred) for e in parent.elts):
            return UseKind.ISINSTANCE, grandparent  # ``isinstance(p, (X, Y))``
        elif isinstance(parent, ast.Dict) and any(v is node and k is not None for k, v in zip(parent.keys, parent.values)):
            return UseKind.VALUE, None  # ``{key: X}``: kept when ``class_values`` proves the table
        elif isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
            return UseKind.VALUE, None  # ``K = X``: kept when ``class_values`` proves ``K``
        elif isinstance(parent, ast.Return) or (
                isinstance(parent, ast.arguments) and any(d is node for d in (*parent.defaults, *parent.kw_defaults))):
            return UseKind.VALUE, None  # returned, or a default argument: ``class_values`` decides
        elif isinstance(parent, ast.Compare):
            return self.compared(parent), parent  # ``k == X``
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            return self.member_read(parent, grandparent), parent  # ``X.method``, ``X.__name__``
        elif isinstance(parent, ast.ClassDef) and any(base is node for base in parent.bases):
            return UseKind.BASE, parent
        raise Undecided

    def decide(self, node: ast.Name | ast.Attribute, kind: UseKind, site: ast.AST | None = None) -> None:
        """Act on a mention of ``kind`` as its rule (``analysis.use_rules``) says: a name the
        factory keeps, a value use (a leftover unless proven), or a rewrite's site."""
        self.kinds.append((node, kind))
        outcome = USE_RULES[kind].outcome
        if outcome is Outcome.KEPT:
            return
        if outcome is Outcome.VALUE:
            self.leftover(node, kind)  # type: ignore[arg-type]
        elif kind is UseKind.ANNOTATION:
            self.annotated(node)
        elif kind is UseKind.ISINSTANCE:
            self.relies_on.add("isinstance")
            self.rewrite_sites += 1  # each converted class tested becomes a feature
        elif kind is UseKind.TYPE_COMPARISON:
            self.type_compared(node, site)  # type: ignore[arg-type]
        elif kind is UseKind.ATTRIBUTE:
            self.member_of(node, site)  # type: ignore[arg-type]
        elif kind is UseKind.BASE:
            # The bases of a Parameter class are converted (or refused) with the class
            # (``use_scanner`` skips them); a subclass of no such class cannot have one.
            if f"{self.module}.{site.name}" not in self.plan.classes:  # type: ignore[union-attr]
                self.leftover(node, kind)  # type: ignore[arg-type]
        else:
            raise Undecided

    def annotated(self, node: ast.Name | ast.Attribute) -> None:
        """A name in an annotation: rewritten when it names a converted class (as
        ``UseSiteTransformer._annotation_name`` decides); counted as a rewrite when that
        cannot be told here (always for ``m.X``: the rewrite resolves the whole chain)."""
        if isinstance(node, ast.Attribute):
            self.rewrite_sites += 1
            return
        try:
            converted = self.converted(node)
        except Undecided:
            converted = "unknown"
        if converted:
            self.rewrite_sites += 1

    def compared(self, compare: ast.Compare) -> UseKind:
        """A mention compared directly (``k == X``) or as an element (``k in (X, Y)``): a
        type comparison when a side is ``type(p)`` or ``p.__class__``, else a value (no
        rewrite, and no class needed: ``class_values`` decides)."""
        sides = (compare.left, *compare.comparators)
        if any(is_type_of(side) for side in sides):
            return UseKind.TYPE_COMPARISON
        if any(isinstance(side, ast.Name) and side.id in self.held_names for side in sides):
            raise Undecided  # ``t == X``, ``t = type(p)``: maybe rewritten (``held_type_uses``)
        return UseKind.VALUE

    def member_read(self, attribute: ast.Attribute, outer: ast.AST | None) -> UseKind:
        """The kind of ``X.attr`` read (``ast_uses.use_kind``'s): a name the factory keeps
        (``X.__name__``), else an attribute of the class; undecided where it is written
        (``X.CONST = v``), names a backing field (the field rewrite reads it) or is a
        ``case`` value pattern (the rewrite leaves it: a bare name would capture)."""
        if not isinstance(attribute.ctx, ast.Load) or attribute.attr in self.plan.fields \
                or isinstance(outer, ast.MatchValue):
            raise Undecided
        if isinstance(outer, ast.Attribute) and outer.value is attribute:
            self._read_further.add(id(attribute))
        return UseKind.CALL if attribute.attr in SAME_ON_FUNCTIONS else UseKind.ATTRIBUTE

    def member_of(self, node: ast.Name, attribute: ast.Attribute) -> None:
        """``X.attr`` of a converted class: its method, constant or static method as the
        class's MRO finds it becomes a module-level name (``Plan.class_member``, what
        ``UseSiteTransformer.leave_Attribute`` writes), unless a function's own attribute
        is read (``X.m.__name__``: the generated function's); anything else needs the
        class, a leftover."""
        owner = self.converted(node)
        if owner is None:
            return
        member = self.plan.class_member(owner, attribute.attr)
        if member is None or (member.function and id(attribute) in self._read_further):
            self.leftover(node, UseKind.ATTRIBUTE)
        else:
            self.rewrite_sites += 1

    def type_compared(self, node: ast.Name, compare: ast.Compare) -> None:
        """A mention in ``type(p) is X`` / ``type(p) in (X, Y)``: a rewrite's site; a
        class-style leftover where the rewrite leaves it alone."""
        self.rewrite_sites += 1
        considered, left_alone = self.type_check(compare)
        if id(node) not in considered:
            raise Undecided  # e.g. inside ``type(p) == (X, Y)``: not an element the rewrite reads
        if id(node) in left_alone:
            self.leftover(node, UseKind.TYPE_COMPARISON)

    def type_check(self, compare: ast.Compare) -> tuple[set[int], set[int]]:
        """(ids of the elements ``type(p) is X`` / ``type(p) in (X, Y)`` compares with,
        ids of those it leaves unrewritten), as ``UseSiteTransformer.leave_Comparison``
        decides; each left alone is a class-style leftover."""
        if id(compare) in self._type_checks:
            return self._type_checks[id(compare)]
        if len(compare.ops) != 1:
            raise Undecided
        op, left, right = compare.ops[0], compare.left, compare.comparators[0]
        equality = isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq))
        membership = isinstance(op, (ast.In, ast.NotIn))
        subject = self.type_subject(left)
        if subject is None and equality:
            subject = self.type_subject(right)
            left, right = right, left
        if subject is None or not (equality or membership):
            raise Undecided
        if membership and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            elements = list(right.elts)
        else:
            elements = [right]
        kinds = [self.converted(e) for e in elements]
        kept = [e for e, kind in zip(elements, kinds) if not kind]
        rewritten = any(kinds) and not (kept and not (membership and _read_twice_alike(subject)))
        left_alone = set() if rewritten else {id(e) for e, kind in zip(elements, kinds) if kind}
        self._type_checks[id(compare)] = {id(e) for e in elements}, left_alone
        return self._type_checks[id(compare)]

    def type_subject(self, expr: ast.expr) -> ast.expr | None:
        """``p`` of ``type(p)`` (one positional argument) or of ``p.__class__``."""
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "type" \
                and len(expr.args) == 1 and not expr.keywords and not isinstance(expr.args[0], ast.Starred):
            self.relies_on.add("type")
            return expr.args[0]
        if isinstance(expr, ast.Attribute) and expr.attr == "__class__":
            return expr.value
        return None

    def converted(self, expr: ast.expr) -> str | None:
        """The converted class ``expr`` names, if any (``UseSiteTransformer.converted``)."""
        if isinstance(expr, ast.Name):
            if expr.id not in self.names:
                return None
            qual = self.plan.index.canonical(self.resolve(expr))
            return qual if self.plan.is_converted(qual) else None
        if isinstance(expr, ast.Attribute) and expr.attr in self.names:
            raise Undecided
        return None  # no name of the hierarchy (a mention inside is classified on its own)

    @functools.cached_property
    def module(self) -> str:
        return module_name_for(self.path)

    @functools.cached_property
    def defined(self) -> frozenset[str]:
        """The names the module's top-level statements define (``FileFacts.globals``)."""
        return module_globals(self.tree)

    def resolve(self, node: ast.Name) -> str:
        """The qualified name of ``node`` as ``FileFacts.resolve`` gives it: through the
        file's import of it, else as a name the module defines at its top level."""
        targets = self.targets.get(node.id)
        if targets is None and node.id in self.defined:
            return f"{self.module}.{node.id}" if self.module else node.id
        if targets is None or len(targets) != 1:
            raise Undecided  # resolved through globals or an ambiguous import: LibCST decides
        return next(iter(targets))

    def argument(self, node: ast.Name, call: ast.Call, direct: bool) -> tuple[UseKind, ast.AST | None]:
        """A mention passed to ``call``: the class tested by ``isinstance(p, X)``, or the
        class handed on as a value; undecided for the other calls a rewrite reads."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in _SPECIAL_CALLS:
            if direct and self.isinstance_test(call) and call.args[1] is node:
                return UseKind.ISINSTANCE, call  # rewritten to a feature check
            raise Undecided
        return UseKind.VALUE, None

    @staticmethod
    def isinstance_test(call: ast.Call) -> bool:
        """``isinstance(p, T)``, with the two positional arguments the rewrite needs."""
        return (isinstance(call.func, ast.Name) and call.func.id == "isinstance"
                and len(call.args) == 2 and not call.keywords
                and not any(isinstance(a, ast.Starred) for a in call.args))

    def leftover(self, node: ast.Name, kind: UseKind) -> None:
        """Record ``node`` if it names a converted class: a value use (kept when proven
        or with ``allow-value-uses``) or, when ``kind``'s rule needs a class, a use that
        needs one."""
        qual = self.plan.index.canonical(self.resolve(node))
        if not self.plan.is_converted(qual):
            return
        column = self.column(node) + 1
        if not USE_RULES[kind].needs_class and self.plan.value_use_kept(self.path, node.lineno, column):
            return
        found: Leftover = (node.lineno, column, qual, node.id)  # type: ignore[assignment]
        self.found.append(found)
        self.leftover_kinds[found] = kind

    def column(self, node: ast.expr) -> int:
        """LibCST's column (characters) of ``node`` (CPython counts UTF-8 bytes)."""
        line = self.lines[node.lineno - 1]
        if line.isascii():
            before = line[: node.col_offset]
        else:
            try:
                before = line.encode("utf-8")[: node.col_offset].decode("utf-8")
            except UnicodeDecodeError:
                raise Undecided from None
        if "\x0c" in before:
            raise Undecided  # CPython counts a form feed before the name; LibCST may not
        return len(before)



@functools.lru_cache(maxsize=16)
def _mention_words(names: frozenset[str]) -> re.Pattern[str]:
    """Whole-identifier occurrences of ``names``."""
    words = alternation(names)
    return re.compile(rf"(?<!\w)(?:{words})(?!\w)")
