"""``codemod check``: the CI guard against ``torch.nn.Parameter`` subclass style.

What it does
    Reports, each with a stable code and ``path:line:col`` (reference: docs/checks.md):

    * ``CM001`` a class deriving, directly or through other classes of the tree, from
      ``torch.nn.Parameter``;
    * ``CM002`` an ``isinstance``/``issubclass``/``type(x) is``/``x.__class__ ==`` check (or
      a class base) naming a Parameter class that ``codemod apply`` converts;
    * ``CM003`` ``class Y(X)`` where ``X`` is a factory function that ``apply`` made;
    * ``CM004`` a class-style check against such a factory function;
    * ``CM005`` a tree that is only partly converted.
Why
    After a migration nothing should bring subclasses back: ``isinstance(p, X)`` against a
    factory raises ``TypeError``, ``type(p) is X`` is silently always false, and
    ``class Y(X)`` fails at import.
How
    The engine decides, exactly as for ``apply`` (same prefilter, same planner, same
    "use no rewrite covers" refusal rounds), which Parameter classes exist and which
    ``apply`` would convert; only the conversion texts are not built. Converted modules
    are recognised by what ``apply`` leaves in them: a ``class Features:`` whose members
    hold the former classes' qualified names, next to a module-level ``def`` of that name
    (the factory). Use sites are found by a small LibCST visitor over the files that
    mention a relevant name (whole identifiers) where a finding can be; CPython's ``ast``
    says which those are, and no other file is parsed with LibCST.
Suppression
    ``# codemod: ignore`` (every code) or ``# codemod: ignore[CM001,CM004]`` on the
    finding's line; ``[tool.codemod] allow-classes`` for classes that may stay subclasses.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import libcst as cst

from codemod import api
from codemod.analysis import roots
from codemod.analysis.class_specs import is_union
from codemod.analysis.classes import ClassFacts, FileFacts
from codemod.analysis.names import dotted, module_name_for
from codemod.discovery import prefilter
from codemod.fileio import SourceFile
from codemod.planning.plan import FEATURES_NAME, Plan
from codemod.planning.safety_net import SafetyNet
from codemod.scope import Scope, scope_of
from codemod.types import PARAMETER_QUALNAMES, Options

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

#: Output formats of ``codemod check --format``.
FORMATS = ("text", "json", "github", "sarif")


@dataclass(frozen=True)
class Rule:
    """One finding code: what it finds, and what to write instead."""

    code: str
    name: str
    #: One line: what it finds.
    summary: str
    #: What to write instead, and whether ``codemod apply`` fixes it.
    help: str
    #: Whether ``codemod apply`` fixes findings of this code (CM001: when it converts the class).
    fixable: bool


RULES: tuple[Rule, ...] = (
    Rule(
        "CM001", "parameter-subclass",
        "A class derives, directly or through other classes of the tree, from torch.nn.Parameter.",
        "Run `codemod apply`: the class becomes a factory function of the same name plus a "
        "wrap function. A class `apply` refuses (the message says why) must be rewritten by "
        "hand, or listed in `[tool.codemod] allow-classes` if it has to stay a subclass.",
        True,
    ),
    Rule(
        "CM002", "class-check",
        "An isinstance/issubclass/type() check, or a class base, names a Parameter class "
        "that `codemod apply` converts.",
        "Run `codemod apply`: `isinstance(p, X)` becomes `has_param_feature(p, Features.X)` "
        "and `type(p) is X` becomes `param_kind_is(p, Features.X)`.",
        True,
    ),
    Rule(
        "CM003", "factory-subclassed",
        "A class derives from a name that `codemod apply` turned into a factory function; "
        "subclassing a function fails at import.",
        "Write a factory `def Y(data, **kwargs)` that calls `X(data, **kwargs)` and then a "
        "wrap function `wrap_y(param, ...)` that adds `Features.Y` with `add_param_feature` "
        "and the new attributes and methods. `codemod apply` cannot fix this.",
        False,
    ),
    Rule(
        "CM004", "factory-class-check",
        "An isinstance/issubclass/type() check names a factory function made by "
        "`codemod apply`: isinstance raises TypeError, `type(p) is X` is always false.",
        "Write `has_param_feature(p, Features.X)` for isinstance and "
        "`param_kind_is(p, Features.X)` for `type(p) is X`. `codemod apply` cannot fix this.",
        False,
    ),
    Rule(
        "CM005", "partly-converted",
        "The tree holds factory functions made by `codemod apply` and Parameter classes "
        "that `apply` would still convert.",
        "Run `codemod apply` on the whole tree again.",
        True,
    ),
)
RULES_BY_CODE = {rule.code: rule for rule in RULES}


@dataclass(frozen=True)
class Finding:
    """One reported place: code, message, location, and whether ``apply`` fixes it."""

    code: str
    message: str
    path: Path
    line: int
    column: int
    fixable: bool

    @property
    def rule(self) -> Rule:
        """The rule of this finding's code."""
        return RULES_BY_CODE[self.code]

    def render(self) -> str:
        """``path:line:col: CODE [*] message`` (``[*]``: ``codemod apply`` fixes it)."""
        mark = "[*] " if self.fixable else ""
        return f"{self.path}:{self.line}:{self.column}: {self.code} {mark}{self.message}"

    def sort_key(self) -> tuple[str, int, int, str]:
        return (str(self.path), self.line, self.column, self.code)


@dataclass
class CheckResult:
    """Everything one check found; the CLI decides what to print and the exit code."""

    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    #: Files that could not be read or parsed (and internal errors), as messages.
    errors: list[str] = field(default_factory=list)
    #: Files skipped without failing the check (undecodable, naming no class), as messages.
    warnings: list[str] = field(default_factory=list)
    scanned: int = 0
    parsed: int = 0
    #: Modules that ``apply`` already converted (they hold ``class Features``).
    converted_modules: list[str] = field(default_factory=list)

    @property
    def fixable(self) -> int:
        """How many findings ``codemod apply`` fixes."""
        return sum(f.fixable for f in self.findings)

    @property
    def exit_code(self) -> int:
        """2 on an error, else 1 when there are findings, else 0."""
        if self.errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if self.findings else EXIT_CLEAN


# -- a cheap look before parsing with LibCST -----------------------------------------------


class _Mentions(ast.NodeVisitor):
    """Whether a module names one of ``names`` (as ``Name`` or ``x.Name``) in a class
    statement's bases, an ``isinstance``/``issubclass`` call or a comparison: the only
    places a finding of CM002-CM004 can be."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = set(names)
        self.class_style = False

    def _named(self, expr: ast.AST) -> bool:
        return (isinstance(expr, ast.Name) and expr.id in self.names) or \
            (isinstance(expr, ast.Attribute) and expr.attr in self.names)

    def _mentions(self, node: ast.AST) -> bool:
        return any(self._named(sub) for sub in ast.walk(node))

    def visit_Import(self, node: ast.Import) -> None:
        return None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if any(self._mentions(base) for base in node.bases):
            self.class_style = True
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if self._mentions(node):
            self.class_style = True
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") \
                and any(self._mentions(arg) for arg in node.args):
            self.class_style = True
        self.generic_visit(node)


class _AstFiles:
    """CPython ``ast`` trees of the sources, parsed on first use (None: ast rejects it).

    ``ast.parse`` is about ten times cheaper than LibCST's parser, so files are looked at
    with it first and parsed with LibCST only when a finding or a refusal can be in them.
    """

    def __init__(self, sources: dict[Path, SourceFile]) -> None:
        self.sources = sources
        self._trees: dict[Path, ast.Module | None] = {}

    def tree(self, path: Path) -> ast.Module | None:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self.sources[path].text)
            except (SyntaxError, ValueError, RecursionError):
                self._trees[path] = None
        return self._trees[path]

    def class_style(self, path: Path, names: frozenset[str]) -> bool | None:
        """Whether ``path`` names one of ``names`` (or a local alias of one) where a
        finding of CM002-CM004 can be (None: ast rejects the file).

        ``from m import X as Y`` and ``import m.X as Y`` add ``Y`` to the names.
        """
        tree = self.tree(path)
        if tree is None:
            return None
        local = set(names)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.asname and alias.name.rpartition(".")[2] in names:
                        local.add(alias.asname)
        visitor = _Mentions(frozenset(local))
        visitor.visit(tree)
        return visitor.class_style


# -- the engine's view: which classes exist and which ``apply`` converts ------------------


def _plan_tree(paths: list[Path], options: Options, scope: Scope | None = None) -> api.RunResult:
    """Read, analyse and plan the tree as ``api.run`` does, without building new texts.

    The refusal rounds are the engine's (``api.settle_plan``): a class used as a class
    where no rewrite reaches is refused, and the plan is made again; only the leftovers
    of each round are computed, in ``options.jobs`` processes.
    """
    result = api.read_tree(paths, options, scope)
    index = api._analyse(result.sources, result)
    result.plan, _, _ = api.settle_plan(result, index, options, convert=False)
    return result


def _facts(path: Path, result: api.RunResult) -> FileFacts | None:
    """The parsed file, parsing it now if the analysis had no reason to (None: it fails)."""
    ff = result.facts.get(path)
    if ff is None and not any(f.path == path for f in result.failed()):
        ff = api._parse(path, result.sources[path].text, result)
    return ff


# -- after migration: what ``apply`` left behind ------------------------------------------

#: A module ``apply`` converted defines ``class Features:`` at the top level.
_FEATURES_CLASS = re.compile(rf"^class\s+{FEATURES_NAME}\s*[:(]", re.MULTILINE)


@dataclass(frozen=True)
class _Target:
    """A name whose class-style use may be a finding."""

    #: Before migration: "class" (a Parameter class ``apply`` converts) or "kept" (a class
    #: ``apply`` keeps but whose converted subclasses share its feature: a *shadow*).
    #: After: "factory" (a function ``apply`` made) or "shadow" (a kept class).
    kind: str
    name: str
    module: str
    #: Its ``Features`` member (the class name, after any ``feature-prefix``).
    feature: str


def _converted_names(tree: ast.Module, module: str) -> list[_Target]:
    """What ``apply`` left in a module: a factory or a kept class per ``Features`` member.

    Each member's value is the former class's qualified name; the module defines a
    function of that name (the factory) or, for a class ``apply`` kept as a shadow, the
    class itself. A ``Features`` class whose members match neither is not ``apply``'s.
    """
    features: dict[str, str] = {}  # member -> former class name
    functions: set[str] = set()
    classes: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef) and stmt.name != FEATURES_NAME:
            classes.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            for member in stmt.body:
                if isinstance(member, ast.Assign) and len(member.targets) == 1 \
                        and isinstance(member.targets[0], ast.Name):
                    value = member.value
                    text = value.value if isinstance(value, ast.Constant) else None
                    name = member.targets[0].id
                    features[name] = text.rpartition(".")[2] \
                        if isinstance(text, str) and text else name
    out = []
    for feature, name in sorted(features.items()):
        if name in functions:
            out.append(_Target("factory", name, module, feature))
        elif name in classes:
            out.append(_Target("shadow", name, module, feature))
    return out


#: A wrap function ``apply`` writes next to each factory.
_WRAP_DEF = re.compile(r"^def\s+wrap_\w+\s*\(", re.MULTILINE)


def _factories(tree: ast.Module, module: str) -> list[_Target]:
    """What ``apply`` left in a module, recognised without its ``Features`` class: a
    module-level ``def X`` that builds a ``Parameter(...)`` and calls a module-level
    ``wrap_*`` function of the module (each factory calls the wraps of its MRO)."""
    functions = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    wraps = {name for name in functions if name.startswith("wrap_")}
    out = []
    for name, node in sorted(functions.items()):
        if name in wraps:
            continue
        called = {_call_name(n) for n in ast.walk(node) if isinstance(n, ast.Call)}
        if called & wraps and any(c and c.endswith("Parameter") for c in called):
            out.append(_Target("factory", name, module, name))
    return out


def _call_name(call: ast.Call) -> str | None:
    """The last name of what ``call`` calls (``f`` for ``f(...)`` and ``m.f(...)``)."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


#: What each other class-only use of a factory does, by ``safety_net`` kind.
_FAILS = {
    "attribute": "reads an attribute of the former class, which the function does not have "
                 "(an unbound method is a module-level function now)",
    "except": "`except` needs an exception class: it raises TypeError when the handler is tried",
    "match-class": "a `case` class pattern needs a class: it raises TypeError",
    "super": "`super()` needs a class: it raises TypeError",
    "register": "`register()` needs a class: it raises TypeError",
    "subscript": "a function cannot be subscripted: it raises TypeError",
    "union": "`|` between functions raises TypeError",
    "isinstance union": "a union with a function raises TypeError in `isinstance`",
    "issubclass union": "a union with a function raises TypeError in `issubclass`",
    "isinstance": "`isinstance` against a function raises TypeError",
    "issubclass": "`issubclass` against a function raises TypeError",
    "type-comparison": "comparing a type with a function never matches",
    "base": "subclassing a function fails at import",
}


def _other_class_only_uses(run: api.RunResult, factories: dict[str, _Target],
                           findings: list[Finding], mentioning: list[Path]) -> list[Finding]:
    """CM003/CM004 for the class-only uses of ``factories`` that ``_ClassStyleUses`` does
    not report: attribute reads, unions, ``except``, ``case``, ``super()``,
    ``register()``, subscripts; and checks or bases that reach a factory through a star
    import, ``getattr(module, "X")`` or ``globals()["X"]``. One finding per line and name."""
    names = frozenset(t.name for t in factories.values())
    net = SafetyNet({path: source.text for path, source in run.sources.items()})
    reported = {(f.path, f.line) for f in findings if f.code in ("CM003", "CM004")}
    out: list[Finding] = []
    failed = {f.path for f in run.failed()}
    other_forms = _other_forms(names)
    for path in mentioning:
        source = run.sources[path]
        if path in failed or not prefilter(source.text, names):
            continue
        if not (other_forms.search(source.text) or net.own_escape(path, names) or (
                net.any_star() and any(local in names and target not in factories for local, target
                                       in api._import_targets(path, source.text) or ()))):
            continue  # only what ``_ClassStyleUses`` looks at can be in it
        for node, kind, direct, qual, how in net.uses(path, names, lambda q: q in factories, reexports=True):
            if kind not in _FAILS or (direct and kind in _VISITOR_KINDS):
                continue
            if kind.endswith(" union") and (path, node.lineno) in reported:  # type: ignore[attr-defined]
                continue  # already reported as a check against the factory
            target = factories[qual]
            code = ast.unparse(node)
            via = "" if direct else f" ({how.split(',')[0]})"
            what = f"`{code}`{via} is" if code == target.name else f"`{code}`{via} is `{target.name}`,"
            line, col = node.lineno, node.col_offset + 1  # type: ignore[attr-defined]
            col = len(source.text.splitlines()[line - 1].encode("utf-8")[:col - 1].decode(
                "utf-8", errors="replace")) + 1
            out.append(Finding(
                "CM003" if kind == "base" else "CM004",
                f"{what} a factory function now (converted by `codemod apply`): {_FAILS[kind]}",
                path, line, col, False,
            ))
    return out


@functools.lru_cache(maxsize=8)
def _other_forms(names: frozenset[str]) -> re.Pattern[str]:
    """Text of a use ``_ClassStyleUses`` does not report: ``X.attr``, ``X[``, ``X |``,
    ``| X``, ``except ... X``, ``super(X``, ``register(X`` (a cheap gate: the AST decides)."""
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alt})\s*[.\[|]|\|\s*[\w.]*(?<!\w)(?:{alt})(?!\w)"
                      rf"|\bexcept\b[^\n:]*(?<!\w)(?:{alt})(?!\w)|\bsuper\s*\(\s*(?:{alt})(?!\w)"
                      rf"|\bregister\s*\(\s*[\w.]*(?<!\w)(?:{alt})(?!\w)")


#: Kinds ``_ClassStyleUses`` reports when the file's imports name the factory.
_VISITOR_KINDS = frozenset({"isinstance", "issubclass", "type-comparison", "base"})


class _Resolver:
    """Qualified names as the engine resolves them (``FileFacts.resolve``, then re-exports
    followed like ``ClassIndex.canonical``), parsing a re-exporting module on demand.

    Only files that mention a target name can re-export it, so ``modules`` (module name
    -> path of those files) is where the next hop is looked for.
    """

    def __init__(self, run: api.RunResult, modules: dict[str, Path], stop: dict[str, _Target]) -> None:
        self.run = run
        self.modules = modules
        self.stop = stop
        self.files: dict[str, FileFacts | None] = {ff.module_name: ff for ff in run.facts.values()}

    def _file(self, module: str) -> FileFacts | None:
        if module not in self.files:
            path = self.modules.get(module)
            self.files[module] = _facts(path, self.run) if path is not None else None
        return self.files[module]

    def canonical(self, qualname: str | None, _seen: frozenset[str] = frozenset()) -> str | None:
        """Follow re-exports: ``pkg.X`` -> ``pkg.mod.X`` when ``pkg/__init__.py`` imports it."""
        if qualname is None or qualname in self.stop or qualname in _seen:
            return qualname
        module, _, name = qualname.rpartition(".")
        while module:
            ff = self._file(module)
            if ff is not None:
                head, _, rest = name.partition(".")
                target = ff.bindings.get(head)
                if target is None:
                    return qualname
                full = f"{target}.{rest}" if rest else target
                return self.canonical(full, _seen | {qualname})
            module, _, parent = module.rpartition(".")
            name = f"{parent}.{name}"
        return qualname


# -- the use-site visitor -----------------------------------------------------------------

_EQUALITY = (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)
_MEMBERSHIP = (cst.In, cst.NotIn)
_OPERATOR_TEXT = {cst.Is: "is", cst.IsNot: "is not", cst.Equal: "==", cst.NotEqual: "!=",
                  cst.In: "in", cst.NotIn: "not in"}


class _ClassStyleUses(cst.CSTVisitor):
    """Class-style uses of target names in one file: checks and class bases.

    Records ``(node, kind, [(spelling, target), ...])`` where ``kind`` says which check
    (``isinstance``, ``type() is``, ``class base``...). Names resolve as the engine's
    do (``FileFacts.resolve``, then re-exports as ``ClassIndex.canonical`` follows them),
    so ``import pkg.params as m; isinstance(p, m.X)`` and re-exports resolve like ``apply``'s.
    """

    def __init__(self, ff: FileFacts, resolver: _Resolver, targets: dict[str, _Target],
                 planned_classes: set[int]) -> None:
        self.ff = ff
        self.resolver = resolver
        self.targets = targets
        #: ids of the top-level ClassDef nodes that are Parameter classes of the plan:
        #: their bases are CM001's business, not a use.
        self.planned_classes = planned_classes
        self.found: list[tuple[cst.CSTNode, str, list[tuple[str, _Target]]]] = []
        self._shadowed = {n for n in ("isinstance", "issubclass", "type")
                          if n in ff.globals or n in ff.bindings}
        #: ids of isinstance calls or-ed with a ``has_param_feature`` call.
        self._paired: set[int] = set()
        #: How many nodes of each kind (see ``_Locator``) the walk met, and the
        #: (kind, ordinal) of each reported node: how ``_Locator`` finds its position.
        self.counts: dict[str, int] = {"class": 0, "call": 0, "cmp": 0}
        self.ordinals: dict[int, tuple[str, int]] = {}

    def _next(self, category: str) -> tuple[str, int]:
        ordinal = self.counts[category]
        self.counts[category] = ordinal + 1
        return category, ordinal

    def _target(self, expr: cst.BaseExpression) -> _Target | None:
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        qual = self.resolver.canonical(self.ff.resolve(expr))
        return self.targets.get(qual) if qual is not None else None

    def _named(self, exprs: Iterable[cst.BaseExpression]) -> list[tuple[str, _Target]]:
        out = []
        for expr in exprs:
            target = self._target(expr)
            if target is not None:
                out.append((dotted(expr) or target.name, target))
        return out

    @staticmethod
    def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
        """The classes a tuple/list/set or a union ``A | B`` names (nested tuples and
        unions flattened, ``*x`` skipped)."""
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            out: list[cst.BaseExpression] = []
            for element in expr.elements:
                if isinstance(element, cst.Element):
                    out.extend(_ClassStyleUses._elements(element.value))
            return out
        if is_union(expr):
            return [*_ClassStyleUses._elements(expr.left),  # type: ignore[attr-defined]
                    *_ClassStyleUses._elements(expr.right)]  # type: ignore[attr-defined]
        return [expr]

    def _type_subject(self, expr: cst.BaseExpression) -> str | None:
        """``"type()"`` for ``type(x)``, ``"__class__"`` for ``x.__class__``, else None."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
                and expr.func.value == "type" and "type" not in self._shadowed \
                and len(expr.args) == 1 and not expr.args[0].keyword and not expr.args[0].star:
            return "type()"
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__class__":
            return "__class__"
        return None

    def _report(self, node: cst.CSTNode, kind: str, named: list[tuple[str, _Target]],
                ordinal: tuple[str, int]) -> None:
        if named:
            self.found.append((node, kind, named))
            self.ordinals[id(node)] = ordinal

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        ordinal = self._next("class")
        bases = [arg.value for arg in node.bases if not arg.star]
        named = self._named(bases)
        if id(node) in self.planned_classes:
            # A Parameter class of the plan: its bases are the hierarchy (CM001), but a
            # base that is now a factory function is still CM003.
            named = [(s, t) for s, t in named if t.kind == "factory"]
        self._report(node, f"class {node.name.value}", named, ordinal)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        # ``has_param_feature(p, Features.K) or isinstance(p, (K,))`` is what ``apply``
        # writes for a kept class K: that isinstance already has its feature check.
        if isinstance(node.operator, cst.Or):
            for one, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(one, cst.Call) and _callee(one) == "has_param_feature":
                    self._paired.add(id(other))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Name) or func.value not in ("isinstance", "issubclass"):
            return
        ordinal = self._next("call")
        if func.value in self._shadowed:
            return
        args = node.args
        if len(args) != 2 or any(a.keyword or a.star for a in args):
            return
        exprs = self._elements(args[1].value)
        if func.value == "issubclass":
            exprs = self._elements(args[0].value) + exprs
        named = self._named(exprs)
        if id(node) in self._paired:
            named = [(s, t) for s, t in named if t.kind != "shadow"]
        self._report(node, func.value, named, ordinal)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        ordinal = self._next("cmp")
        left = node.left
        for target in node.comparisons:
            op, right = target.operator, target.comparator
            subject, other = self._type_subject(left), right
            if subject is None and isinstance(op, _EQUALITY):
                subject, other = self._type_subject(right), left
            if subject is not None and isinstance(op, _EQUALITY + _MEMBERSHIP):
                exprs = self._elements(other) if isinstance(op, _MEMBERSHIP) else [other]
                self._report(node, f"{subject} {_OPERATOR_TEXT[type(op)]}", self._named(exprs),
                             ordinal)
            left = right


#: Line breaks as the tokenizer sees them (``str.splitlines`` also splits at form feeds).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


class _Locator:
    """Line and column of the nodes that findings point at.

    LibCST's PositionProvider walks the whole file again (about the cost of a parse, for
    every file with a finding). CPython's ``ast`` parses ten times faster and carries
    positions, so the nodes are matched by kind and order instead: the n-th class
    statement, ``isinstance``/``issubclass`` call or comparison that the LibCST visitor
    met is the n-th one in ``ast``'s source order. Where the counts differ, or ``ast``
    cannot parse the file, the file falls back to the PositionProvider.
    """

    def __init__(self, asts: _AstFiles | None = None) -> None:
        self._asts = asts
        self._files: dict[Path, tuple[list[str], dict[str, list[tuple[int, int]]]] | None] = {}

    def _index(self, ff: FileFacts, text: str) -> tuple[list[str], dict[str, list[tuple[int, int]]]] | None:
        if ff.path not in self._files:
            tree: ast.Module | None = None
            if self._asts is not None and ff.path in self._asts.sources \
                    and self._asts.sources[ff.path].text == text:
                tree = self._asts.tree(ff.path)
            else:
                try:
                    tree = ast.parse(text)
                except (SyntaxError, ValueError, RecursionError):
                    pass
            if tree is None:
                self._files[ff.path] = None
                return None
            found: dict[str, list[tuple[int, int]]] = {"class": [], "call": [], "cmp": []}
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    found["class"].append((node.lineno, node.col_offset))
                elif isinstance(node, ast.Compare):
                    found["cmp"].append((node.lineno, node.col_offset))
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                        and node.func.id in ("isinstance", "issubclass"):
                    found["call"].append((node.lineno, node.col_offset))
            for places in found.values():
                places.sort()
            found["top-class"] = sorted((n.lineno, n.col_offset) for n in tree.body
                                        if isinstance(n, ast.ClassDef))
            self._files[ff.path] = (_lines(text), found)
        return self._files[ff.path]

    def place(self, ff: FileFacts, text: str, node: cst.CSTNode, ordinal: tuple[str, int] | None,
              counts: dict[str, int]) -> tuple[int, int]:
        """(line, column), both 1-based, of ``node``, the ``ordinal``-th of its kind."""
        index = self._index(ff, text) if ordinal is not None else None
        if index is not None and ordinal is not None:
            lines, found = index
            kind, n = ordinal
            places = found[kind]
            if len(places) == counts.get(kind, -1) and n < len(places):
                line, offset = places[n]
                # ast columns count UTF-8 bytes; findings count characters, as LibCST does.
                prefix = lines[line - 1].encode("utf-8")[:offset]
                return line, len(prefix.decode("utf-8", errors="replace")) + 1
        return ff.line_of(node), ff.col_of(node)

    def place_class(self, ff: FileFacts, text: str, node: cst.ClassDef) -> tuple[int, int]:
        """(line, column) of a top-level class statement."""
        top = [stmt for stmt in ff.module.body if isinstance(stmt, cst.ClassDef)]
        ordinal = next((("top-class", i) for i, stmt in enumerate(top) if stmt is node), None)
        return self.place(ff, text, node, ordinal, {"top-class": len(top)})


def _callee(call: cst.Call) -> str | None:
    """The last name of what ``call`` calls (``f`` for ``f(...)`` and ``m.f(...)``)."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


# -- findings -------------------------------------------------------------------------------


def _names(named: list[tuple[str, _Target]]) -> str:
    return ", ".join(f"`{spelling}`" for spelling, _ in named)


def _use_finding(ff: FileFacts, place: tuple[int, int], kind: str,
                 named: list[tuple[str, _Target]]) -> list[Finding]:
    """CM002 for names ``apply`` rewrites, CM003/CM004 for what it left behind.

    A kept class (shadow) stays a class: only ``isinstance`` against it changes meaning
    (its converted subclasses are plain Parameters now); ``type(p) is Kept`` and class
    bases are unaffected (a subclass of it is a Parameter class: CM001).
    """
    line, col = place
    is_base = kind.startswith("class ")
    out = []
    classes = [(s, t) for s, t in named
               if t.kind == "class" or (t.kind == "kept" and kind == "isinstance")]
    factories = [(s, t) for s, t in named if t.kind == "factory"]
    shadows = [(s, t) for s, t in named if t.kind == "shadow" and kind == "isinstance"]
    if classes:
        what = f"{kind} derives from" if is_base else f"`{kind}` check against"
        out.append(Finding(
            "CM002",
            f"{what} Parameter class {_names(classes)}; `codemod apply` rewrites it",
            ff.path, line, col, True,
        ))
    if factories and is_base:
        spelled, _ = factories[0]
        out.append(Finding(
            "CM003",
            f"{kind} derives from {_names(factories)}, a factory function now "
            f"(converted by `codemod apply`): subclassing a function fails at import; "
            f"write a factory that calls `{spelled}(...)` and then its own wrap function",
            ff.path, line, col, False,
        ))
    elif factories:
        target = factories[0][1]
        feature = f"Features.{target.feature}"
        if kind in ("isinstance", "issubclass"):
            effect = "raises TypeError"
            instead = (f"`has_param_feature(obj, {feature})` (both from `{target.module}`)"
                       if kind == "isinstance" else
                       "a feature check on an instance (`has_param_feature`)")
        else:
            # A comparison with a function never matches a type.
            negated = kind.endswith((" is not", " !=", " not in"))
            effect = "is always true" if negated else "is always false"
            instead = f"`param_kind_is(obj, {feature})` (both from `{target.module}`)"
        out.append(Finding(
            "CM004",
            f"`{kind}` check against {_names(factories)}, a factory function now "
            f"(converted by `codemod apply`): it {effect}; write {instead}",
            ff.path, line, col, False,
        ))
    if shadows:
        spelled, target = shadows[0]
        out.append(Finding(
            "CM004",
            f"`isinstance` check against {_names(shadows)}, a class `codemod apply` kept whose "
            f"converted subclasses are plain Parameters now: it misses them; write "
            f"`has_param_feature(obj, Features.{target.feature}) or isinstance(obj, {spelled})` "
            f"(`Features`, `has_param_feature` from `{target.module}`)",
            ff.path, line, col, False,
        ))
    return out


def _class_place(run: api.RunResult, locator: _Locator, facts: ClassFacts) -> tuple[int, int]:
    if facts.file is None:
        return facts.line, 1
    return locator.place_class(facts.file, run.sources[facts.path].text, facts.node)


def _class_finding(plan: Plan, qualname: str, place: tuple[int, int]) -> Finding:
    """CM001 for one Parameter class of the plan."""
    cp = plan.classes[qualname]
    facts = cp.facts
    bases = plan.index.param_bases(qualname)
    via = ""
    if bases and not any(q in PARAMETER_QUALNAMES for q in plan.index.base_qualnames(qualname)):
        via = f" (through `{plan.classes[bases[0]].name}`)" if bases[0] in plan.classes else ""
    if cp.converted:
        tail = "`codemod apply` turns it into a factory function"
    else:
        reason = cp.refusal.reason if cp.refusal is not None else "refused"
        tail = f"`codemod apply` keeps it a class: {reason}"
    return Finding(
        "CM001",
        f"`{facts.name}` derives from torch.nn.Parameter{via}; {tail}",
        facts.path, place[0], place[1], cp.converted,
    )


def _allowed(plan: Plan, qualname: str, allow: tuple[str, ...]) -> bool:
    facts = plan.classes[qualname].facts
    return facts.name in allow or facts.qualname in allow


#: ``# codemod: ignore`` or ``# codemod: ignore[CM001, CM004]``.
_SUPPRESSION = re.compile(r"#\s*codemod\s*:\s*ignore\b(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)


def _suppressed(finding: Finding, lines: list[str]) -> bool:
    """Whether the finding's line carries a suppression comment that covers its code."""
    if not 0 < finding.line <= len(lines):
        return False
    text = lines[finding.line - 1]
    if "codemod" not in text:
        return False
    for match in _SUPPRESSION.finditer(text):
        codes = match.group("codes")
        if codes is None:
            return True
        if finding.code in {c.strip().upper() for c in codes.split(",")}:
            return True
    return False


def check_tree(paths: list[Path], options: Options) -> CheckResult:
    """Check the tree under ``paths``: findings, suppressed findings, errors (no output).

    A path inside a package is checked against its whole tree (``scope``), and only the
    findings in the given paths are kept: the same as a full run reports for them.
    Raises ``DiscoveryError`` for a path that does not exist or is not Python.
    """
    scope = scope_of(paths, options.src)
    with roots.using(scope.roots):
        return _check_tree(paths, options, scope)


def _check_tree(paths: list[Path], options: Options, scope: Scope) -> CheckResult:
    run = _plan_tree(paths, options, scope)
    asts = _AstFiles(run.sources)
    plan = run.plan
    assert plan is not None
    findings: list[Finding] = []
    locator = _Locator(asts)

    # CM001: every Parameter class, unless allow-listed.
    for qualname in sorted(plan.classes):
        if not _allowed(plan, qualname, options.allow_classes):
            facts = plan.classes[qualname].facts
            findings.append(_class_finding(plan, qualname, _class_place(run, locator, facts)))

    # Names ``apply`` converts (before) and what it left behind (after).
    targets: dict[str, _Target] = {}
    for q, p in plan.classes.items():
        if p.converted or p.shadow:
            targets[q] = _Target("class" if p.converted else "kept", p.name, p.facts.module,
                                 p.name)
    converted_modules: list[str] = []
    for path, source in sorted(run.sources.items()):
        by_features = FEATURES_NAME in source.text and _FEATURES_CLASS.search(source.text)
        # The substring test first: a multi-line regex over every file costs ~0.4 s on a
        # 3,600-file tree.
        if by_features or ("def wrap_" in source.text and _WRAP_DEF.search(source.text)):
            tree = asts.tree(path)
            module = module_name_for(path)
            left = [] if tree is None else (
                _converted_names(tree, module) if by_features else []) or _factories(tree, module)
            if left:
                converted_modules.append(module)
                for target in left:
                    qual = f"{module}.{target.name}" if module else target.name
                    # A shadow is also a Parameter class of the plan: "kept" wins.
                    targets.setdefault(qual, target)

    # CM002/CM003/CM004: class-style uses, in the files that name a target there.
    names = frozenset(t.name for t in targets.values()) | api.hierarchy_names(
        plan.index, run.facts.values(), [q for q, t in targets.items() if q in plan.classes])
    mentioning = [p for p, s in sorted(run.sources.items()) if prefilter(s.text, names)]
    resolver = _Resolver(run, {module_name_for(p): p for p in mentioning}, targets)
    planned = {id(p.facts.node) for p in plan.classes.values()}
    for path in mentioning:
        if asts.class_style(path, names) is False:
            continue
        ff = _facts(path, run)
        if ff is None:
            continue
        visitor = _ClassStyleUses(ff, resolver, targets, planned)
        ff.module.visit(visitor)
        text = run.sources[ff.path].text
        for node, kind, named in visitor.found:
            place = locator.place(ff, text, node, visitor.ordinals.get(id(node)), visitor.counts)
            findings.extend(_use_finding(ff, place, kind, named))

    # CM003/CM004 the visitor does not see: other class-only uses of a factory, and
    # checks that reach one through a star import, ``getattr`` or ``globals()``.
    factories = {q: t for q, t in targets.items() if t.kind == "factory"}
    if factories:
        findings.extend(_other_class_only_uses(run, factories, findings, mentioning))

    # CM005: factories next to classes that ``apply`` would still convert.
    remaining = sorted(plan.converted().values(),
                       key=lambda p: (str(p.facts.path), _class_place(run, locator, p.facts)))
    if converted_modules and remaining:
        first = remaining[0].facts
        line, col = _class_place(run, locator, first)
        findings.append(Finding(
            "CM005",
            f"the tree is partly converted: {len(remaining)} Parameter class(es) that "
            f"`codemod apply` converts remain (first: `{first.name}`), next to factory "
            f"functions it made in {', '.join(f'`{m}`' for m in converted_modules)}",
            first.path, line, col, True,
        ))

    result = CheckResult(scanned=run.scanned, parsed=run.parsed,
                         converted_modules=converted_modules)
    result.errors = [f.error or f"{f.path}: failed" for f in run.failed()]
    result.warnings = list(run.warnings)
    lines_cache: dict[Path, list[str]] = {}
    for finding in sorted(set(findings), key=Finding.sort_key):
        if not scope.in_focus(finding.path):
            continue
        if finding.path not in lines_cache:
            cached = run.sources.get(finding.path)
            lines_cache[finding.path] = _lines(cached.text) if cached is not None else []
        if _suppressed(finding, lines_cache[finding.path]):
            result.suppressed.append(finding)
        else:
            result.findings.append(finding)
    return result


# -- the command ------------------------------------------------------------------------------


def _summary(result: CheckResult) -> str:
    scanned = f"{result.scanned} file(s) scanned, {result.parsed} parsed"
    suppressed = f"; {len(result.suppressed)} suppressed" if result.suppressed else ""
    errors = (f"\n{len(result.errors)} file(s) could not be checked (errors above)"
              if result.errors else "")
    if not result.findings:
        if errors:
            return f"No findings in what could be checked ({scanned}{suppressed}).{errors}"
        return f"All checks passed ({scanned}{suppressed})."
    n = len(result.findings)
    fixable = result.fixable
    line = f"Found {n} finding(s) ({scanned}{suppressed}).{errors}"
    if fixable:
        line += (f"\n{fixable} fixable with `codemod apply` "
                 "(`codemod apply --dry-run PATH...` shows the diff).")
    if n - fixable:
        line += f"\n{n - fixable} need(s) a change by hand or an allow-list entry (see docs/checks.md)."
    return line


def run_check(paths: list[Path], options: Options, *, output_format: str = "text",
              statistics: bool = False, output: TextIO | None = None,
              err: TextIO | None = None, color: bool | None = None) -> int:
    """Check ``paths``, print findings (``output``, default stdout) and the summary
    (``err``, default stderr); return the exit code: 0 clean, 1 findings, 2 error."""
    import click

    from codemod.output.reporters import render, render_statistics

    result = check_tree(paths, options)
    out = output if output is not None else sys.stdout
    err_stream = err if err is not None else sys.stderr
    for error in result.errors:
        click.secho(f"error: {error}", fg="red", file=err_stream, color=color)
    for warning in result.warnings:
        click.secho(f"warning: {warning}", fg="yellow", file=err_stream, color=color)
    if statistics:
        text = render_statistics(result.findings, output_format)
    else:
        text = render(result.findings, output_format, errors=result.errors)
    if text:
        out.write(text)
        out.flush()
    click.secho(_summary(result), bold=True, file=err_stream, color=color)
    return result.exit_code
