"""How a mention of a class name is used, read from CPython's ``ast``: its ``UseKind``
(``call``, ``value``, ``isinstance``, ``base``, ``except``, ``match-class``...), whose
rule in ``analysis.use_rules`` the safety net refuses by and ``codemod check`` reports
by, and the spellings of a class name it follows (``getattr(m, "X")``, ``globals()["X"]``,
``m.__dict__["X"]``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from codemod.analysis.python_trees import dotted_expr
from codemod.analysis.type_comparisons import is_type_of
from codemod.analysis.use_rules import SAME_ON_FUNCTIONS, UseKind
from codemod.runtime.helpers import HAS_PARAM_FEATURE, PARAM_KIND_IS

#: Operators with which ``type(x) OP X`` compares a class.
_TYPE_COMPARISONS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def dict_owner(node: ast.AST) -> ast.AST | None:
    """``m`` of ``m.__dict__`` or ``vars(m)``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" \
            and len(node.args) == 1:
        return node.args[0]
    return None


def literal_key_read(node: ast.AST, parents: Mapping[int, ast.AST]) -> ast.Constant | None:
    """The constant key by which the dict ``node`` is used where it stands: ``d["k"]``
    (read or written), ``d.get("k", ...)``, ``d.pop("k", ...)``, ``"k" in d``; None for
    any other use. ``parents``: each node's parent, by ``id``."""
    up = parents.get(id(node))
    above = parents.get(id(up))
    if isinstance(up, ast.Subscript) and up.value is node and isinstance(up.slice, ast.Constant):
        return up.slice
    if isinstance(up, ast.Attribute) and up.attr in ("get", "pop") and isinstance(above, ast.Call) \
            and above.func is up and above.args and isinstance(above.args[0], ast.Constant):
        return above.args[0]
    if isinstance(up, ast.Compare) and up.comparators == [node] and isinstance(up.left, ast.Constant) \
            and isinstance(up.ops[0], (ast.In, ast.NotIn)):
        return up.left
    return None


def type_name_comparisons(tree: ast.Module, names: frozenset[str],
                          aliases: Mapping[str, str] | None = None) -> Iterator[tuple[ast.AST, str]]:
    """Where ``tree`` may compare an object's type's name with one of ``names`` (a
    converted parameter's type is ``Parameter``, so the answer would change): each
    ``type(x).__name__ == "X"`` written out (``x.__class__``, ``__qualname__``, ``!=``,
    ``in`` a literal tuple, list or set too; ``X.__name__`` for ``"X"``), and, in a file that reads a type's name
    (or its text: ``str(type(x))``) outside an f-string and not of a caught exception
    (``_reads_type_name``; a message's
    ``f"{type(p).__name__}"`` is a documented difference, not a comparison, and
    ``type(exc).__name__`` names no parameter's type), every other string ``"X"`` (or
    ``X.__name__``) but a docstring,
    an annotation or an ``__all__`` entry: the comparison may take another spelling
    (``match type(p).__name__: case "X":``, the name held in a constant or a variable,
    ``getattr(type(p), "__name__")``, ``operator.eq``). ``aliases`` maps the names the
    file imports a class under to the class's name (``BS`` of ``import BlockScale as
    BS``: ``BS.__name__`` is ``"BlockScale"``). A string in another module is not seen (a
    known limit)."""
    aliases = aliases or {}
    written_out: set[int] = set()
    in_text = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
               for inner in ast.walk(node)}
    caught = {node.name for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler) and node.name}
    reads_name = False
    for node in ast.walk(tree):
        reads_name = reads_name or (id(node) not in in_text and _reads_type_name(node, caught))
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if not any(isinstance(o, ast.Attribute) and o.attr in ("__name__", "__qualname__")
                   and _is_type_of(o.value) for o in operands):
            continue
        for operand in operands:
            items = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            for item in items:
                name = _spelled_name(item, names, aliases)
                if name is not None:
                    written_out.add(id(item))
                    yield node, name
    if not reads_name:
        return
    aside = written_out | _not_compared_strings(tree)
    for node in ast.walk(tree):
        name = _spelled_name(node, names, aliases)
        if name is not None and id(node) not in aside:
            yield node, name


def _spelled_name(node: ast.AST, names: frozenset[str], aliases: Mapping[str, str]) -> str | None:
    """The one of ``names`` that ``node`` spells: a string ``"X"``, or a class's own name
    read off it (``X.__name__``, ``pkg.X.__qualname__``: a converted ``X`` keeps its
    name, while a parameter's type's name becomes ``Parameter``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
        return node.value
    if isinstance(node, ast.Attribute) and node.attr in ("__name__", "__qualname__"):
        spelled = dotted_expr(node.value)
        if spelled is not None and spelled in aliases:
            return aliases[spelled]
        last = spelled.rpartition(".")[2] if spelled is not None else None
        if last in names:
            return last
    return None


def _not_compared_strings(tree: ast.Module) -> set[int]:
    """The strings of ``tree`` that no comparison reads: docstrings, annotations (a
    forward reference ``-> "X"``) and the entries of ``__all__``."""
    aside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant):
            aside.add(id(node.body[0].value))
        unread: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            unread = [node.returns, *(a.annotation for a in (
                *arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                arguments.vararg, arguments.kwarg) if a is not None)]
        elif isinstance(node, ast.AnnAssign):
            unread = [node.annotation]
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                unread = [node.value]
        for expression in unread:
            if expression is not None:
                aside.update(id(inner) for inner in ast.walk(expression))
    return aside


def _is_type_of(node: ast.expr) -> bool:
    """``type_comparisons.is_type_of`` with one argument to ``type`` (``type(name, bases,
    ns)`` makes a class, it reads none's type)."""
    return is_type_of(node) and (not isinstance(node, ast.Call) or len(node.args) == 1)


def _reads_type_name(node: ast.AST, caught: set[str]) -> bool:
    """``type(x).__name__`` (``x.__class__``, ``__qualname__``), ``getattr(type(x),
    "__name__")`` or the type's text, which holds the name (``str(type(x))``,
    ``repr(x.__class__)``, ``format(type(x))``, ``"{}".format(type(x))``, ``"%s" %
    type(x)``), ``x`` not one of ``caught`` (names ``except ... as`` binds)."""
    subjects: list[ast.expr] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("str", "repr", "format") and node.args:
        subjects = [node.args[0]]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "format":
        subjects = [*node.args, *(keyword.value for keyword in node.keywords)]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        subjects = list(node.right.elts) if isinstance(node.right, ast.Tuple) else [node.right]
    elif isinstance(node, ast.Attribute):
        if node.attr in ("__name__", "__qualname__"):
            subjects = [node.value]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
        if node.args[1].value in ("__name__", "__qualname__"):
            subjects = [node.args[0]]
    return any(_is_type_of(subject) and not _caught(subject, caught) for subject in subjects)


def _caught(subject: ast.expr, caught: set[str]) -> bool:
    """Whether the type ``subject`` reads is of a name ``except ... as`` binds."""
    inner = subject.args[0] if isinstance(subject, ast.Call) else subject.value  # type: ignore[attr-defined]
    return isinstance(inner, ast.Name) and inner.id in caught


def dict_get(node: ast.AST) -> tuple[ast.AST, str] | None:
    """``(namespace, "X")`` of ``globals().get("X")``, ``m.__dict__.get("X")`` or
    ``vars(m).get("X")`` (the namespace: the ``globals()`` call or ``m``; a default may
    follow the name)."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        owner = node.func.value
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "globals":
            return owner, node.args[0].value
        if (found := dict_owner(owner)) is not None:
            return found, node.args[0].value
    return None


def attribute_by_call(node: ast.AST) -> tuple[ast.expr, str] | None:
    """``(m, "a.X")`` of ``operator.attrgetter("a.X")(m)`` (also ``attrgetter`` imported
    by name) and ``(m, "X")`` of ``m.__getattribute__("X")``: an attribute read by a call,
    with a literal name (None: any other expression)."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "__getattribute__" \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return func.value, node.args[0].value
    if isinstance(func, ast.Call) and len(func.args) == 1 and not func.keywords \
            and isinstance(func.args[0], ast.Constant) and isinstance(func.args[0].value, str):
        getter = func.func
        name = getter.attr if isinstance(getter, ast.Attribute) else getattr(getter, "id", None)
        if name == "attrgetter":
            return node.args[0], func.args[0].value
    return None


def spelled_name(node: ast.AST) -> str | None:
    """The class name ``node`` spells: ``X``, ``m.X``, ``getattr(m, "X")``, ``globals()["X"]``,
    ``m.__dict__["X"]``, and the ``.get("X")`` of ``globals()`` and of a module's dict."""
    if (got := dict_get(node)) is not None:
        return got[1]
    if (by_call := attribute_by_call(node)) is not None:
        return by_call[1].rpartition(".")[2]
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        return node.attr
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)):
        return node.args[1].value
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "globals"
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
        return node.slice.value
    if (isinstance(node, ast.Subscript) and dict_owner(node.value) is not None
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
        return node.slice.value
    return None


def use_kind(node: ast.AST, parents: dict[int, ast.AST]) -> UseKind:
    """How ``node`` (which names a class) is used: ``CALL``, ``VALUE``, ``MATCH_CLASS``, or
    another kind of use that needs a class."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return UseKind.CALL if parent.attr in SAME_ON_FUNCTIONS else UseKind.ATTRIBUTE
    if isinstance(parent, ast.Call) and parent.func is node:
        return UseKind.CALL
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return UseKind.SUBSCRIPT
    child, up = node, parent
    union = False
    while isinstance(up, (ast.Tuple, ast.List, ast.Set, ast.BinOp, ast.Starred)):
        union = union or (isinstance(up, ast.BinOp) and isinstance(up.op, ast.BitOr))
        child, up = up, parents.get(id(up))
    if isinstance(up, ast.MatchClass) and up.cls is child:
        return UseKind.MATCH_CLASS
    if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) \
            and up.func.id in _CHECK_CALLS and child in up.args:
        return _CHECK_CALLS[up.func.id][union]
    if isinstance(up, ast.Call) and isinstance(up.func, ast.Attribute) and up.func.attr == "register" \
            and up.args and up.args[0] is child:
        return UseKind.REGISTER
    if isinstance(up, ast.Call) and child is node and child in up.args[1:] \
            and _callee(up.func) in (HAS_PARAM_FEATURE, PARAM_KIND_IS):
        return UseKind.FEATURE_ARGUMENT
    if isinstance(up, ast.Compare) and all(isinstance(op, _TYPE_COMPARISONS) for op in up.ops) \
            and any(is_type_of(side) for side in [up.left, *up.comparators]):
        return UseKind.TYPE_COMPARISON
    if isinstance(up, ast.ClassDef) and child in up.bases:
        return UseKind.BASE
    if isinstance(up, ast.ExceptHandler) and up.type is child:
        return UseKind.EXCEPT
    if isinstance(up, (ast.arg, ast.AnnAssign)) and getattr(up, "annotation", None) is child \
            or isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and up.returns is child:
        return UseKind.ANNOTATION
    return UseKind.UNION if union else UseKind.VALUE


def _callee(func: ast.expr) -> str | None:
    """The last name of what a call calls (``f`` of ``f(...)`` and ``m.f(...)``)."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


#: The calls whose arguments are classes: call name -> (kind, kind inside a union).
_CHECK_CALLS: dict[str, tuple[UseKind, UseKind]] = {
    "isinstance": (UseKind.ISINSTANCE, UseKind.ISINSTANCE_UNION),
    "issubclass": (UseKind.ISSUBCLASS, UseKind.ISSUBCLASS_UNION),
    "super": (UseKind.SUPER, UseKind.SUPER_UNION),
}

