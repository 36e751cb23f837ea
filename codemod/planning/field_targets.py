"""Writes of a backing field that no field rewrite reaches: the field as a nested target.

What it does
    ``field_target_uses`` finds, anywhere in the tree, a backing field of a converted
    (or shadow) class's property written where ``set_param_field`` cannot stand: inside a
    tuple, list or starred target (``p._f, x = v``), as a ``for``/``with``/comprehension
    target (``for p._f in xs``, ``with cm as p._f``, ``[.. for p._f in xs]``), an augmented
    assignment (``p._f += v``) or a ``del`` (``del p._f``). Each refuses every class whose
    property the field backs, with the line and what it does (the planner keeps those
    classes, and their subclasses, as classes).
Why
    A converted parameter holds the property's attribute, not its field: a plain
    ``p._f = v`` becomes ``set_param_field(...)``, a call, which is no valid target in
    those positions (before this rule the run stopped with "the converted text does not
    compile"), ``p._f += v`` or ``del p._f`` left as they are would raise
    ``AttributeError`` on a converted parameter, and a write through the dict gave the
    converted parameter a field no longer read (its attribute kept the old value).
Fix safety
    The positions ``UseSiteTransformer`` rewrites are the ones screened: ``self._f`` of a
    method of a class (and of functions nested in it) is the class's own field, which the
    class's conversion (or an ordinary class) handles; a Parameter class kept as a class
    only for its own instances is skipped, as the transformer skips it. Anything else is
    screened, so the rule may refuse more than needed, never less.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from codemod.analysis.source_lines import line_text
from codemod.analysis.text_search import alternation, lines_at, nfkc_text
from codemod.planning.method_selves import MethodSelves, walked_files
from codemod.planning.plan import Plan
from codemod.types import BlockingUse, UseForm


def field_target_uses(plan: Plan, sources: dict[Path, str]) -> dict[str, BlockingUse]:
    """Qualname of each class whose property's field is written as a nested target, an
    augmented assignment or a ``del`` somewhere in ``sources``, or one of whose members
    (a property, method, class constant or static method) is written into an attribute
    dict by a literal name -> the first such write."""
    members = plan.member_owners()
    if not plan.fields and not members:
        return {}
    may_write = FieldGate(frozenset(plan.fields), frozenset(members))
    found: dict[str, BlockingUse] = {}
    for path, text, walker in walked_files(sources, may_write.lines,
                                           lambda path, lines: _Walker(plan, path, lines, members)):
        for line, name, how in sorted(walker.found):
            if name in plan.fields and how != _MEMBER_KEY:
                prop = plan.fields[name]
                verb = "names" if how.startswith("in a call") else "writes"
                use = BlockingUse(path, line, line_text(text, line), UseForm.ESCAPE,
                                  escape=f"{verb} the backing field {name!r} of property {prop!r} "
                                         f"{how}, where no field rewrite reaches")
                owners = sorted(q for q, cls in plan.classes.items()
                                if (cls.converted or cls.shadow) and prop in cls.properties)
            else:
                use = BlockingUse(path, line, line_text(text, line), UseForm.ESCAPE,
                                  escape=f"writes {name!r} into an attribute dict, where the old "
                                         "class's member came first; a converted parameter holds "
                                         "it there and would answer the new value")
                owners = members[name]
            for qual in owners:
                found.setdefault(qual, use)
    return found


#: How a member name written into an attribute dict is found (``_Walker``).
_MEMBER_KEY = "as a member written through the attribute dict"


class FieldGate:
    """Whether a text may write one of ``fields`` as the walker sees writes: a lexical
    superset, so that only such files are parsed.

    * A field as a whole word (an attribute ``p._f``, a literal key ``"_f"``). The start
      of the word is tested in Python, not with a look-behind in the pattern: a pattern
      that begins with the names is searched for by its first characters, one with a
      look-behind is tried at every position (over the 3,604 files of vLLM 0.34, 1.1 s
      against 0.06 s).
    * In a file that reads an attribute dict (``x.__dict__``, ``vars(x)``), a key spelled
      otherwise: an escape that can give an identifier character (``"\\x5ff"``), a
      string continued on the next line, or implicit concatenation (``"_f" "ield"``),
      whose first piece is a prefix and last piece a suffix of a field, each a whole
      literal. (Parsing every file that reads an attribute dict cost 1.2 s on vLLM 0.34.)
    * A text with non-ASCII characters is searched in NFKC form, as CPython reads
      identifiers (``p._ｆield`` is ``p._field``).

    ``lines`` gives the lines of those hits, so that the walker enters only the
    statements spanning one.
    """

    def __init__(self, fields: frozenset[str], members: frozenset[str] = frozenset()) -> None:
        self._mention = re.compile(rf"(?:{alternation(fields)})(?!\w)") if fields else None
        #: A member's name as a literal key or a keyword (``"dim"``, ``dim=``), asked only
        #: of a text that reads an attribute dict.
        self._member = re.compile(rf"[\"'](?:{alternation(members)})[\"']|(?:{alternation(members)})\s*=") \
            if members else None
        prefixes = {f[:i] for f in fields for i in range(1, len(f))}
        suffixes = {f[i:] for f in fields for i in range(1, len(f))}
        self._prefix = re.compile(rf"[\"'](?:{alternation(prefixes)})[\"']") if prefixes else None
        self._suffix = re.compile(rf"[\"'](?:{alternation(suffixes)})[\"']") if suffixes else None

    def __call__(self, text: str) -> bool:
        return self.lines(text) != []

    def lines(self, text: str) -> list[int]:
        """The lines where a write may be ([]: none): those of the whole-word mentions,
        and where a key may be spelled otherwise, those of every attribute-dict read (the
        statement writing through one spans its line)."""
        text = nfkc_text(text)
        hits: list[int] = []
        for match in self._mention.finditer(text) if self._mention is not None else ():
            start = match.start()
            if start == 0:
                hits.append(start)
            else:
                before = text[start - 1]
                if not (before.isalnum() or before == "_"):
                    hits.append(start)
        reads_dict = "__dict__" in text or "vars" in text
        if reads_dict and self._member is not None and _writes_a_dict(text) \
                and self._member.search(text) is not None:
            hits = sorted({*hits, *_dict_reads(text)})
        if reads_dict and (_IDENTIFIER_ESCAPE.search(text) or (
                self._prefix is not None and self._suffix is not None
                and self._prefix.search(text) is not None
                and self._suffix.search(text) is not None)):
            hits = sorted({*hits, *_dict_reads(text)})
        return lines_at(text, hits)


#: A backslash that can stand for an identifier character in a string (``\x``, ``\u``,
#: ``\U``, ``\N{...}``, an octal digit) or continue it on the next line; ``\n``, ``\t``,
#: ``\\`` and quotes cannot give one.
_IDENTIFIER_ESCAPE = re.compile(r"\\(?:[xuUN0-7]|\r?\n|\r)")


class _Walker(MethodSelves):
    """Walks one module, knowing the enclosing class and method ``self`` name."""

    def __init__(self, plan: Plan, path: Path, lines: list[int] | None = None,
                 members: dict[str, list[str]] | None = None) -> None:
        super().__init__(lines)
        self.plan = plan
        self.members = members or {}
        #: Names of the Parameter classes of this file kept only for their own instances.
        self._kept_here = {cls.facts.name for cls in plan.classes.values()
                           if cls.facts.path == path and not cls.converted and not cls.shadow}
        self.found: list[tuple[int, str, str]] = []

    def _skipped(self, obj: ast.expr) -> bool:
        """Whether ``obj._f`` here is left alone by the rewrites: ``self`` of a method
        (its class's own field), or any object inside a Parameter class kept only for
        its own instances."""
        return self.is_self(obj) or self._in_kept_class()

    # -- targets ---------------------------------------------------------------------------
    def _nested(self, target: ast.expr, how: str) -> None:
        """Every field attribute inside ``target`` (itself included)."""
        if isinstance(target, ast.Attribute):
            if target.attr in self.plan.fields and not self._skipped(target.value):
                self.found.append((target.lineno, target.attr, how))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._nested(element, how)
        elif isinstance(target, ast.Starred):
            self._nested(target.value, how)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
                self._nested(target, "inside an unpacking target")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._nested(node.target, "with an augmented assignment")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._nested(target, "with `del`")
        self.generic_visit(node)

    def _visit_for(self, node: ast.For | ast.AsyncFor) -> None:
        self._nested(node.target, "as a `for` target")
        self.generic_visit(node)

    visit_For = _visit_for
    visit_AsyncFor = _visit_for

    def _visit_with(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._nested(item.optional_vars, "as a `with` target")
        self.generic_visit(node)

    visit_With = _visit_with
    visit_AsyncWith = _visit_with

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._nested(node.target, "as a comprehension target")
        self.generic_visit(node)

    # -- through the attribute dict ---------------------------------------------------------
    def _dict_key(self, holder: ast.expr, key: ast.expr | None, lineno: int) -> None:
        """``holder`` is ``x.__dict__`` or ``vars(x)`` and ``key`` a literal field or member
        name."""
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)) \
                or _owner_of_dict(holder) is None or self._in_kept_class():
            return
        if key.value in self.plan.fields:
            self.found.append((lineno, key.value, "through the attribute dict"))
        elif key.value in self.members:
            self.found.append((lineno, key.value, _MEMBER_KEY))

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._dict_key(node.value, node.slice, node.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        callee = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else None)
        through_dict = isinstance(func, ast.Attribute) and _owner_of_dict(func.value) is not None
        if callee in _FIELD_BY_NAME and not self._in_kept_class():
            # ``delattr(p, "_f")``, ``p.__setattr__("_f", v)``, ``attrgetter("_f")``...:
            # the field by name where no field rewrite reaches.
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                        and arg.value in self.plan.fields:
                    self.found.append((node.lineno, arg.value, f"in a call of `{callee}`"))
        if through_dict:
            assert isinstance(func, ast.Attribute)
            if func.attr == "update":
                for keyword in node.keywords:
                    if keyword.arg is not None:
                        self._dict_key(func.value, ast.Constant(keyword.arg), node.lineno)
                for arg in node.args:
                    if isinstance(arg, ast.Dict):
                        for key in arg.keys:
                            self._dict_key(func.value, key, node.lineno)
            elif func.attr in _DICT_WRITERS and node.args:
                self._dict_key(func.value, node.args[0], node.lineno)
        self.generic_visit(node)

    def _in_kept_class(self) -> bool:
        return bool(self._classes) and self._classes[-1] in self._kept_here


def _dict_reads(text: str) -> list[int]:
    """Offsets of ``__dict__`` and of ``vars`` as a name (``vars(p)`` is the attribute
    dict too), the words searched for literally (a look-behind is tried everywhere)."""
    found: list[int] = []
    at = text.find("__dict__")
    while at >= 0:
        found.append(at)
        at = text.find("__dict__", at + 1)
    for match in _VARS.finditer(text):
        start = match.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_."):
            found.append(start)
    return found


def _writes_a_dict(text: str) -> bool:
    """Whether ``text`` may write into an attribute dict by key (``__dict__[``, ``vars(x)[``,
    or a writing method of either): what a member's name can be written through
    (``FieldGate``). Each search starts with its literal."""
    return ("__dict__" in text and _DICT_WRITE.search(text) is not None) or \
        ("vars(" in text and _VARS_WRITE.search(text) is not None)


_WRITE = r"\s*(?:\[|\.\s*(?:update|setdefault|pop|__setitem__))"
_DICT_WRITE = re.compile(r"__dict__" + _WRITE)
_VARS_WRITE = re.compile(r"vars\([^()\n]*\)" + _WRITE)


#: ``vars`` not followed by a word character (the start is tested in ``_dict_reads``).
_VARS = re.compile(r"vars(?!\w)")

#: Calls that reach an object's attribute by a name given as a string, other than
#: ``getattr``/``hasattr``/``setattr`` (which the field rewrites reach): given a backing
#: field's name, any of these refuses its classes (``delattr(p, "_f")``,
#: ``p.__setattr__("_f", v)``, ``object.__getattribute__(p, "_f")``,
#: ``operator.attrgetter("_f")``).
_FIELD_BY_NAME = frozenset({"delattr", "__delattr__", "__getattribute__", "__getattr__",
                            "__setattr__", "attrgetter"})

#: Methods of a dict that write or remove the key given first.
_DICT_WRITERS = frozenset({"setdefault", "pop", "__setitem__", "__delitem__"})


def _owner_of_dict(expr: ast.expr) -> ast.expr | None:
    """``x`` of ``x.__dict__`` or ``vars(x)``; None for anything else."""
    if isinstance(expr, ast.Attribute) and expr.attr == "__dict__":
        return expr.value
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "vars" \
            and len(expr.args) == 1 and not expr.keywords:
        return expr.args[0]
    return None
