"""Names that hold an object's type (``t = type(p)``, then ``t == X``), on CPython's tree:
the one rule that ``apply``'s rewrite (``transforms/held_type_rewrite.py``, called by the
use-site and type-comparison rewrites) and the value proof (``analysis/class_values.py``)
share.

What it finds
    In each function, a name its own scope binds exactly once, to ``type(x)`` (the
    builtin, one positional argument) or ``x.__class__``, and binds in no other way: no
    parameter, no second assignment, no ``for``/``with``/``except`` target, no ``del``, no
    ``global``/``nonlocal``, no binding of that name in a function, ``lambda``,
    comprehension or class body inside. Such a name is *convertible* when every read of it
    is one of:

    * a side of a comparison with one operator, ``==``, ``!=``, ``is`` or ``is not``;
    * the subject of a membership test in a tuple, list or set written out (``t in (A,
      B)``, ``not in``, no ``*x``);
    * formatted into the message of a ``raise`` (the message then names the former class
      by its qualified name, as a string, where it showed the class; the same allowance
      the value proof makes for a class formatted there);

    and where every other side of those comparisons (each element of the container) is
    one of: ``type(y)``/``y.__class__``, another convertible name of the same function, a
    literal that is no string (a string could equal a kind's name), a builtin class
    (``int``), ``Parameter`` as the module spells it (``nn.Parameter``, a name imported
    ``as`` another or bound to it at module level), or a name or attribute chain whose
    first name the function and the functions around it do not bind and the module does
    not bind to an object's type: ``HeldType.classes``, each of which the caller must
    find to be a Parameter class of the tree (a converted class becomes its ``Features``
    member; a kept one compares as before), else nothing of the name is rewritten.
    A ``raise`` message formats the name without a format spec (``{t:>5}`` raised
    ``TypeError`` for a class). ``type`` counts as rebound where the module binds it
    anywhere or imports ``*``.
Why
    After conversion ``type(p)`` of every converted parameter is ``Parameter``: ``t ==
    ModelWeightParameter`` would never hold, and ``t == nn.Parameter`` would hold for every
    converted parameter (SGLang's offloader tells the kinds apart so). Once ``t`` holds
    ``param_type(p)`` (the former class's kind for a converted parameter, ``type(p)`` for
    anything else) and each converted class it is compared with is its ``Features``
    member, every comparison answers as before. Anything the rule does not cover (``t(...)``,
    ``t.__name__``, ``issubclass(t, X)``, ``t == cls`` with ``cls`` a parameter) keeps
    the name out, and a class compared with it stays refused by the value proof.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import functools
from collections.abc import Iterator
from dataclasses import dataclass

from codemod.analysis import python_trees
from codemod.analysis.python_trees import dotted_expr
from codemod.analysis.scope_values import (
    binds,
    bound_in_inner_scope,
    bound_values,
    names_bound_by,
    names_bound_in_body,
    names_bound_within,
    parameter_names,
    walk_scope,
)

# The comparisons a held name may stand in, decided here for every reader (the LibCST
# rewrite in ``transforms/held_type_uses.py`` takes its operator groups from these).
EQUALITY = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
MEMBERSHIP = (ast.In, ast.NotIn)
CONTAINERS = (ast.Tuple, ast.List, ast.Set)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class HeldType:
    """A name one function binds once to an object's type."""

    name: str
    #: The statement ``name = type(x)`` (or ``x.__class__``); for a name bound otherwise
    #: too (never convertible), its first binding to a type.
    binding: ast.Assign | ast.AnnAssign | ast.NamedExpr
    #: Why a read is not one the rewrite covers (None: convertible).
    why_not: str | None
    #: The other sides of its comparisons (each element of a membership container),
    #: also of those the rewrite does not cover.
    compared_with: tuple[ast.expr, ...] = ()
    #: Whether one of them is another object's type (``type(q)``, ``q.__class__``, another
    #: such name) or names ``Parameter``: the name must hold ``param_type(p)`` even
    #: where no converted class is compared with it.
    compares_types: bool = False
    #: Whether one of them names ``Parameter``: a name left as it is (not convertible)
    #: then answers otherwise for every converted parameter, which is reported.
    compares_parameter: bool = False
    #: The sides that are names or attribute chains of module-level names (no
    #: ``Parameter``, no builtin class): each must be a Parameter class of the tree for
    #: the name to be rewritten (``analysis/class_values`` and the rewrite decide).
    classes: tuple[ast.expr, ...] = ()

    @property
    def convertible(self) -> bool:
        return self.why_not is None


#: Per function, by its path (``scope_path``: the names of the classes and functions
#: around it and its own, joined with dots): name -> what it holds. A path two functions
#: share (a property's getter and setter) has none.
HeldTypes = dict[str, dict[str, HeldType]]


@dataclass(frozen=True)
class _Module:
    """What the rule reads of the module around the functions."""

    tree: ast.Module
    #: Every name the module binds anywhere (a superset of its module-level names).
    bound: frozenset[str]
    #: Whether ``type(...)`` may call something else than the builtin.
    type_rebound: bool
    #: Names the module binds to ``Parameter`` (``import ... Parameter as P``, ``P = nn.Parameter``).
    parameter_aliases: frozenset[str]


def held_types(tree: ast.Module) -> HeldTypes:
    """Every name of ``tree`` that a function binds once to an object's type.

    A function is read only if a binding to an object's type stands among its lines
    (one in its body does): most functions have none, and reading each one's scope cost
    a third of CM006's time on SGLang 0.5.23 converted."""
    every = python_trees.nodes(tree)
    binding_lines = sorted(node.lineno for node in every if _type_bindings(node))  # type: ignore[attr-defined]
    if not binding_lines:
        return {}
    bound = frozenset(names_bound_by(every))
    star = any(isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
               for node in every)
    module = _Module(tree, bound, "type" in bound or star, parameter_aliases(tree))
    found: HeldTypes = {}
    shared: set[str] = set()
    for function, enclosing, path in _functions(tree, (), ()):
        if path in found or path in shared:
            found.pop(path, None)
            shared.add(path)
            continue
        first = bisect.bisect_left(binding_lines, function.lineno)  # type: ignore[attr-defined]
        spans_one = first < len(binding_lines) and binding_lines[first] <= function.end_lineno  # type: ignore[attr-defined]
        found[path] = _held_in(function, enclosing, module) if spans_one else {}
    return {path: names for path, names in found.items() if names}


def parameter_aliases(tree: ast.Module) -> frozenset[str]:
    """Names the module binds at its top to ``Parameter`` under another spelling."""
    aliases: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            aliases |= {a.asname for a in node.names if a.name == "Parameter" and a.asname}
        elif isinstance(node, ast.Assign) and names_parameter(node.value):
            aliases |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return frozenset(aliases)


def covered_names(held: HeldTypes) -> frozenset[str]:
    """The names of ``held`` whose every read the rewrite covers (in some function)."""
    return frozenset(name for names in held.values() for name, found in names.items() if found.convertible)


def scope_path(names: list[str] | tuple[str, ...]) -> str:
    """The key of a function in ``HeldTypes``: the names of the classes and functions
    around it, then its own."""
    return ".".join(names)


def is_held_type_source(value: ast.expr) -> bool:
    """``type(x)`` (one positional argument) or ``x.__class__``."""
    if isinstance(value, ast.Call):
        return isinstance(value.func, ast.Name) and value.func.id == "type" and len(value.args) == 1 \
            and not value.keywords and not isinstance(value.args[0], ast.Starred)
    return isinstance(value, ast.Attribute) and value.attr == "__class__"


def _functions(tree: ast.AST, enclosing: tuple[ast.AST, ...], names: tuple[str, ...]
               ) -> Iterator[tuple[ast.AST, tuple[ast.AST, ...], str]]:
    """Each function inside ``tree``, in source order (a function before those inside
    it): itself, the functions around it, its path. A ``def`` stands only in a block of
    statements (a body, an ``else``, a ``finally``, an ``except`` or ``case`` clause), so
    only blocks are entered: no expression holds one (a ``lambda``'s body is an
    expression). A walk with a stack, over the blocks' fields in the node's field
    order: nested generators over every node passed each function up through every
    level above it."""
    stack = [(child, enclosing, names) for child in reversed(_block_children(tree))]
    while stack:
        node, around, path = stack.pop()
        if isinstance(node, _FUNCTIONS):
            yield node, around, scope_path((*path, node.name))
            around, path = (*around, node), (*path, node.name)
        elif isinstance(node, ast.ClassDef):
            path = (*path, node.name)
        stack.extend((child, around, path) for child in reversed(_block_children(node)))


#: The fields that hold a block of statements, or ``except``/``case`` clauses holding one.
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _block_children(node: ast.AST) -> list[ast.AST]:
    """The statements and clauses of ``node``'s blocks, in its field order."""
    out: list[ast.AST] = []
    for field in node._fields:
        if field in _BLOCK_FIELDS:
            value = getattr(node, field, None)
            if isinstance(value, list):
                out.extend(value)
    return out


def _held_in(function: ast.AST, enclosing: tuple[ast.AST, ...], module: _Module) -> dict[str, HeldType]:
    body: list[ast.stmt] = function.body  # type: ignore[attr-defined]
    found: dict[str, list[Binding]] = {}
    for node in walk_scope(body):
        for name, binding in _type_bindings(node):
            if not (module.type_rebound and isinstance(binding.value, ast.Call)):
                found.setdefault(name, []).append(binding)
    if not found:
        return {}
    parameters = parameter_names(function)
    names: dict[str, ast.Assign] = {}
    otherwise: dict[str, Binding] = {}
    for name, bindings in found.items():
        first = bindings[0]
        if isinstance(first, ast.Assign) and len(bindings) == 1 and len(first.targets) == 1 \
                and name not in parameters and bound_values(name, body) == [first.value] \
                and not bound_in_inner_scope(function, name):
            names[name] = first
        else:
            otherwise[name] = first
    # Names some scope the reads may be in binds: the function's and every scope inside
    # it (a nested function's local is no module-level name), and the functions around.
    outer = set(parameters) | names_bound_within(function)
    for scope in enclosing:
        outer |= parameter_names(scope) | names_bound_in_body(scope)
    parents = {id(child): parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}
    held = _covered(function, names, parents, outer, module)
    for name, binding in otherwise.items():
        # Bound to a type in another way too (twice, annotated, ``u = t = ...``, a walrus,
        # in a scope inside): left as it is; reported where it is compared with types.
        _, others = _reads_covered(function, name, parents, outer, {}, module)
        walrus = parents.get(id(binding))
        if isinstance(binding, ast.NamedExpr) and isinstance(walrus, ast.Compare):
            others += tuple(side for side in (walrus.left, *walrus.comparators) if side is not binding)
        why = f"bound to a type more than once or otherwise than by `{name} = ...` (line {binding.lineno})"
        held[name] = HeldType(name, binding, why, others, _compares_types(others, names, module),
                              compares_parameter=any(_is_parameter(side, module) for side in others))
    return held


#: A statement or expression binding a name to an object's type.
Binding = ast.Assign | ast.AnnAssign | ast.NamedExpr


def _type_bindings(node: ast.AST) -> list[tuple[str, Binding]]:
    """(name, ``node``) for each name ``node`` binds right to ``type(x)``/``x.__class__``."""
    if isinstance(node, ast.Assign) and is_held_type_source(node.value):
        return [(target.id, node) for target in node.targets if isinstance(target, ast.Name)]
    if isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None \
            and is_held_type_source(node.value) and isinstance(node.target, ast.Name):
        return [(node.target.id, node)]
    return []


def _covered(function: ast.AST, names: dict[str, ast.Assign], parents: dict[int, ast.AST], outer: set[str],
             module: _Module) -> dict[str, HeldType]:
    """What each name bound once by ``names``' statements holds, with its verdict."""
    verdicts: dict[str, tuple[str | None, tuple[ast.expr, ...]]] = {
        name: _reads_covered(function, name, parents, outer, names, module) for name, binding in names.items()}
    # A name compared with another held name is covered only while that one is.
    changed = True
    while changed:
        changed = False
        for name, (why, others) in list(verdicts.items()):
            if why is not None:
                continue
            for other in others:
                if isinstance(other, ast.Name) and other.id in verdicts and other.id != name \
                        and verdicts[other.id][0] is not None:
                    verdicts[name] = (f"compared with `{other.id}`, which is not covered", others)
                    changed = True
                    break
    held: dict[str, HeldType] = {}
    for name, (why, others) in verdicts.items():
        classes = tuple(side for side in others if dotted_expr(side) is not None and not _is_parameter(side, module)
                        and not _builtin_class(side, module) and not (isinstance(side, ast.Name) and side.id in names))
        held[name] = HeldType(name, names[name], why, others, _compares_types(others, names, module),
                              compares_parameter=any(_is_parameter(side, module) for side in others),
                              classes=classes)
    return held


def _compares_types(others: tuple[ast.expr, ...], names: dict[str, ast.Assign], module: _Module) -> bool:
    """Whether a side among ``others`` is an object's type or ``Parameter``."""
    return any(is_held_type_source(side) or _is_parameter(side, module)
               or (isinstance(side, ast.Name) and side.id in names) for side in others)


def _is_parameter(side: ast.expr, module: _Module) -> bool:
    return names_parameter(side, module.parameter_aliases)


def _builtin_class(side: ast.expr, module: _Module) -> bool:
    """A builtin class the module does not rebind (``int``, ``str``): no kind equals it."""
    return isinstance(side, ast.Name) and side.id not in module.bound \
        and isinstance(getattr(builtins, side.id, None), type)


def names_parameter(side: ast.expr, aliases: frozenset[str] = frozenset()) -> bool:
    """Whether ``side`` spells ``Parameter`` (``Parameter``, ``nn.Parameter``..., or one
    of the module's ``aliases``: ``parameter_aliases``): a lexical superset of torch's
    class."""
    return (isinstance(side, ast.Name) and (side.id == "Parameter" or side.id in aliases)) or \
        (isinstance(side, ast.Attribute) and side.attr == "Parameter")


def _reads_covered(function: ast.AST, name: str, parents: dict[int, ast.AST], outer: set[str],
                   held: dict[str, ast.Assign], module: _Module) -> tuple[str | None, tuple[ast.expr, ...]]:
    """(why a read of ``name`` is not covered, the first such, or None; the other sides of
    all its comparisons, covered or not)."""
    why: str | None = None
    others: list[ast.expr] = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        parent = parents.get(id(node))
        where = f"line {node.lineno}"
        compare = parent if isinstance(parent, ast.Compare) and len(parent.ops) == 1 else None
        sides = _compared_sides(compare, node) if compare is not None else None
        if compare is not None and sides is not None:
            others += sides
            if not all(_covered_side(side, outer, held, module) for side in sides):
                why = why or f"`{ast.unparse(compare)}` at {where}"
            continue
        if isinstance(parent, ast.FormattedValue) and parent.format_spec is None and _in_raise(parent, parents):
            continue
        why = why or f"`{_shown(parent, name)}` at {where}"
    return why, tuple(others)


def _shown(parent: ast.AST | None, name: str) -> str:
    """The code around a read: its expression, or the first line of its statement."""
    if not isinstance(parent, (ast.expr, ast.stmt)):
        return name
    code = ast.unparse(parent).splitlines()[0]
    return code if len(code) <= 60 else code[:57] + "..."


def _compared_sides(compare: ast.Compare, name: ast.Name) -> list[ast.expr] | None:
    """The other side of a one-operator comparison of ``name`` with ``==``, ``!=``,
    ``is``, ``is not``, or the elements of a container written out it is tested for
    membership in; None for any other comparison."""
    other = compare.comparators[0] if compare.left is name else compare.left
    if isinstance(compare.ops[0], EQUALITY):
        return [other]
    if isinstance(compare.ops[0], MEMBERSHIP) and compare.left is name and isinstance(other, CONTAINERS) \
            and not any(isinstance(e, ast.Starred) for e in other.elts):
        return list(other.elts)
    return None


def _covered_side(side: ast.expr, outer: set[str], held: dict[str, ast.Assign], module: _Module) -> bool:
    if isinstance(side, ast.Constant):
        return not isinstance(side.value, str)
    if is_held_type_source(side):
        return not (module.type_rebound and isinstance(side, ast.Call))
    if isinstance(side, ast.Name) and side.id in held:
        return True
    head = side
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name) or head.id in outer:
        return False
    if side is head and head.id in module.bound:
        # A module-level name that holds an object's type (``PLAIN = type(t)``, or set by a
        # function through ``global``) may equal a converted parameter's former class.
        if _module_holds_type(head.id, module.tree):
            return False
    return True


def _module_holds_type(name: str, tree: ast.Module) -> bool:
    """Whether the module binds ``name`` to a value holding an object's type (an
    assignment, annotated, augmented or walrus, or a ``for`` target, at module level) or
    a function declares it ``global``."""
    for node in walk_scope(tree.body):
        value: ast.AST | None = None
        if isinstance(node, ast.Assign) and any(binds(t, name) for t in node.targets):
            value = node.value
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and binds(node.target, name):
            value = node.value
        elif isinstance(node, (ast.For, ast.AsyncFor)) and binds(node.target, name):
            value = node.iter
        if value is not None and any(isinstance(n, ast.expr) and is_held_type_source(n) for n in ast.walk(value)):
            return True
    return any(isinstance(node, ast.Global) and name in node.names for node in ast.walk(tree))


def _in_raise(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether the formatted value ``node`` is in the message of a ``raise``: its f-string
    is an argument of the exception raised (``raise E(f"...{t}")``), nothing else."""
    text = parents.get(id(node))
    call = parents.get(id(text)) if isinstance(text, ast.JoinedStr) else None
    return isinstance(call, ast.Call) and any(a is text for a in call.args) \
        and isinstance(parents.get(id(call)), ast.Raise) and parents[id(call)].exc is call  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=32)
def file_held_types(text: str) -> HeldTypes:
    """``held_types`` of a source text ({} when it binds no name to a type, or CPython
    cannot parse it); computed once per text (the use-site rewrite, the leftover scan,
    the mention screen and the type-comparison rewrite of one file all ask). Callers
    only read it."""
    if "type(" not in text and "__class__" not in text:
        return {}
    try:
        return held_types(python_trees.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}


def file_parameter_aliases(text: str) -> frozenset[str]:
    """``parameter_aliases`` of a source text (none when CPython cannot parse it)."""
    if "Parameter" not in text:
        return frozenset()
    try:
        return parameter_aliases(python_trees.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
