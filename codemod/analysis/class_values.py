"""Where a Parameter class used as a *value* can go, proven across functions and modules.

What it does
    After conversion a class's name holds its factory. A mention of the class that is
    not a construction, a check or an annotation hands the class on as a value: bound to
    a name, stored in a module-level table, passed to a function, used as a default
    argument, returned. ``prove_class_values`` follows each such value through the
    tree with CPython's parser and says, per mention, whether every place it can reach
    behaves the same with the factory:

    * a call ``v(...)`` (the factory builds what the class built);
    * ``v == w``, ``v != w``, ``v is w``, ``v is not w``, ``v in (...)`` with anything but
      an object's type (each name holds one object, so identity and equality answer as
      before): not ``type(...)``/``....__class__``, nor a side holding one
      (``type(p).__mro__``, ``(t := type(p))``), nor a name its scope binds to one
      (``t = type(p)``, then ``t == X``: ``_type_held``), nor a parameter some call of
      its function passes one (``is_x(type(p))``: ``fed``, every call followed);
    * a pass to a parameter of a function of the tree whose own uses are proven (calls
      by name, through an imported module, ``self.m``/``cls.m``/``C.m``: then *every*
      method of that name in the tree is proven, since an override may receive it);
    * a local or module-level name bound to it, a table ``{key: v}`` whose every read is
      ``T[key]``, ``T.get(key)`` or ``key in T`` (in any module that imports it, also
      through re-exports and ``import m; m.T``), a default argument, a ``return`` whose
      every caller uses the result so, ``a if c else v``;
    * a bare expression statement, an annotation, or formatting into the message of a
      ``raise`` (the message then names the function);
    * an element of torch's registries of tensor subclasses, which it matches by exact
      type (``config.patch("traceable_tensor_subclasses", [X])``: ``type_registries``).

    Anything else refuses the mention, with the chain that reached it
    (``utils.py:29 -> table `T` read at w8a8.py:124 -> create(kind) -> isinstance at
    fp8.py:14``): ``isinstance``/``issubclass``, an attribute, ``type(...) is``, ``|``, a
    subscript, a store into an attribute, a ``*``/``**`` spread, a function outside the
    tree, a parameter collected by ``*args``/``**kwargs``.
Why
    Engines choose a parameter kind at run time and hand the class to a shared creator
    (``STRATEGY_TO_PARAMETER_TYPE[strategy]`` passed to ``create_fp8_scale_parameter``,
    ``self.register_params(..., ModelWeightParameter, ...)``). One proof serves every
    consumer: apply's leftover search (``use_sites``), the CPython leftover screen and,
    through the planning rounds, ``check``.
Fix safety
    The proof is conservative: a callee it cannot resolve, a name read in a way not
    listed, a function used other than by calling it (when its result is followed)
    refuses. A module-level name the tree never reads reaches nothing (code outside the
    tree is no more followed for it than for the class itself). A function decorated
    other than with a known pass-through decorator (``staticmethod``, ``functools.cache``,
    ``torch.no_grad()``...), or whose module-level name is also assigned or imported, is
    not followed, nor a method call ``x.m(...)`` when the tree binds ``m`` other than with
    ``def`` (``m = f`` in a class body, ``obj.m = f``, ``setattr(obj, "m", f)``), nor a
    call of a name an enclosing function binds (a parameter, a local, an import). Limits: a value reached only through ``getattr``, ``globals()`` or a star
    import is decided by the safety net, not here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from codemod.analysis.held_types import HeldType, held_types
from codemod.analysis.scope_values import bound_values, parameter_names, walk_scope
from codemod.analysis.type_comparisons import held_type, is_type_of
from codemod.analysis.type_registries import reads_registries, registers_by_exact_type
from codemod.analysis.value_callees import CallTargets, transforming_decorator
from codemod.analysis.value_modules import SCOPES, ParsedModule, short_code
from codemod.types import Chain, ChainStep, chain_text

#: Verdict key: (line, 1-based column in characters), LibCST's position of the mention.
Position = tuple[int, int]

_EQUALITY = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)
#: How deep a chain is followed before giving up (a refusal).
_MAX_DEPTH = 12


@dataclass
class ClassValues:
    """Per file, per mention of a class name: None when every use it reaches is proven,
    else the chain of the first use that is not."""

    verdicts: dict[Path, dict[Position, Chain | None]] = field(default_factory=dict)

    def proven(self, path: Path, line: int, column: int) -> bool:
        """Whether the mention at ``path:line:column`` is a value use proven harmless."""
        return self.verdicts.get(path, {}).get((line, column), "") is None

    def why_not(self, path: Path, line: int, column: int) -> Chain | None:
        """The chain that refuses the mention at ``path:line:column``, one step each, from
        the mention to the use no rewrite covers (None: none known)."""
        return self.verdicts.get(path, {}).get((line, column))


def _parameter_of(f: ParsedModule, side: ast.expr) -> ast.AST | None:
    """The function (or ``lambda``) of which ``side``, a bare name, is a parameter: the
    scope that holds it or one around it (a closure reads its enclosing function's);
    None for any other expression or name."""
    if not isinstance(side, ast.Name):
        return None
    scope = f.scope_of(side)
    while scope is not None:
        arguments = scope.args  # type: ignore[attr-defined]
        if side.id in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}:
            return scope
        scope = f.scope_of(scope)
    return None


def _written_by_key(f: ParsedModule, name: str) -> ast.AST | None:
    """A statement of ``f`` that writes into the module-level table ``name`` by key or a
    writing method (``T[k] = v``, ``T.update(...)``, ``T.setdefault(...)``), in any
    function: the table may then hold what the proof never saw."""
    for node in ast.walk(f.tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id == name:
            return node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("update", "setdefault", "__setitem__") \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return node
    return None


def _table_read(side: ast.expr) -> ast.Name | None:
    """``TABLE`` of a read ``TABLE[key]`` or ``TABLE.get(key)`` (``key, default``)."""
    if isinstance(side, ast.Subscript) and isinstance(side.value, ast.Name):
        return side.value
    if isinstance(side, ast.Call) and isinstance(side.func, ast.Attribute) \
            and side.func.attr == "get" and isinstance(side.func.value, ast.Name) \
            and 1 <= len(side.args) <= 2 and not side.keywords \
            and not any(isinstance(a, ast.Starred) for a in side.args):
        return side.func.value
    return None


def _defaults(read: ast.expr) -> list[ast.expr]:
    """The default of a ``TABLE.get(key, default)`` read, as a list (none for others)."""
    return read.args[1:] if isinstance(read, ast.Call) else []


def _bound_values(f: ParsedModule, side: ast.Name) -> list[ast.expr] | None:
    """The values the innermost scope that binds ``side`` binds it to (``bound_values``);
    [] for a module-level import, function or class, or a name no scope binds (a
    builtin); None where a binding is not followed."""
    scope = f.scope_of(side)
    while scope is not None:
        values = bound_values(side.id, _body_of(scope))
        if values != []:
            return values
        scope = f.scope_of(scope)
    if side.id in f.imports or side.id in f.functions or side.id in f.classes:
        return [] if side.id not in f.assigned else None
    return bound_values(side.id, f.tree.body)


def _type_held(f: ParsedModule, side: ast.expr) -> ast.expr | None:
    """``held_type`` of a comparison's ``side``, in the scope that holds it."""
    scope = f.scope_of(side)
    return held_type(side, f.tree.body if scope is None else _body_of(scope))


def _body_of(scope: ast.AST) -> list[ast.stmt]:
    """The statements of a function's scope (a ``lambda``'s expression as one)."""
    return [ast.Expr(scope.body)] if isinstance(scope, ast.Lambda) else scope.body  # type: ignore[attr-defined]


class _Prover(CallTargets):
    """Follows values through the files of one tree, parsing each file once, on demand."""

    def __init__(self, texts: dict[Path, str], modules: dict[Path, str]) -> None:
        super().__init__(texts, modules)
        self._memo: dict[tuple, Chain | None] = {}
        self._active: set[tuple] = set()
        #: Whether a file of the tree reads torch's registries of tensor subclasses back.
        self._registries_read: bool | None = None
        #: ids of the class mentions the proof starts from (``prove_class_values``).
        self.mentions: set[int] = set()
        #: Per parsed file: the names ``held_types`` covers, by the id of their binding's value.
        self._held_bindings: dict[int, dict[int, HeldType]] = {}
        self._assumed = 0
        self._depth = 0

    # -- one value ----------------------------------------------------------------------
    def reach(self, f: ParsedModule, expr: ast.AST) -> Chain | None:
        """None when every use the value of ``expr`` reaches is proven, else the chain."""
        parent = f.up(expr)
        where = f.where(expr)

        def ends(text: str) -> Chain:
            return (f.step(expr, text),)
        if isinstance(parent, ast.Call):
            if parent.func is expr or self.registered(f, parent, expr):
                return None
            if any(a is expr for a in parent.args):
                return self.passed(f, parent, index=parent.args.index(expr))  # type: ignore[arg-type]
            return ends(f"`{short_code(parent)}` at {where}")
        if isinstance(parent, ast.keyword):
            call = f.up(parent)
            if parent.arg is None or not isinstance(call, ast.Call):
                return ends(f"a `**` spread at {where}")
            if self.registered(f, call, expr):
                return None
            return self.passed(f, call, keyword=parent.arg)
        if isinstance(parent, ast.Compare):
            return self.compared(f, parent, expr)
        if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
            holder = f.up(parent)
            if isinstance(holder, ast.Compare) and parent is not holder.left \
                    and all(isinstance(op, (ast.In, ast.NotIn)) for op in holder.ops):
                return self.compared(f, holder, expr)
            if isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name) \
                    and holder.func.id in ("isinstance", "issubclass"):
                return ends(f"{holder.func.id} at {where}")
            if isinstance(holder, ast.keyword):
                holder = f.up(holder)
            if isinstance(holder, ast.Call) and self.registered(f, holder, parent):
                return None  # torch's registries of tensor subclasses (``type_registries``)
            return ends(f"an element of `{short_code(parent)}` at {where}")
        if isinstance(parent, ast.Dict):
            if any(v is expr and k is not None for k, v in zip(parent.keys, parent.values)):
                return self.table(f, parent)
            return ends(f"a key of a dict at {where}")
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is expr:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found = self.bound(f, parent, target.id, table=False)
                elif isinstance(target, ast.Attribute):
                    found = ends(f"stored in an attribute (`{short_code(target)}`) at {where}")
                else:
                    found = ends(f"stored in `{short_code(target)}` at {where}")
                if found is not None:
                    return found
            return None
        if isinstance(parent, ast.IfExp) and parent.test is not expr:
            return self.reach(f, parent)
        if isinstance(parent, ast.Return):
            return self.returned(f, f.scope_of(parent))
        if isinstance(parent, ast.arguments):
            return self.default(f, parent, expr)
        if isinstance(parent, ast.Expr):
            return None
        if isinstance(parent, ast.FormattedValue) and self.in_raise(f, parent):
            return None
        if isinstance(parent, ast.Attribute):
            return ends(f"attribute `.{parent.attr}` at {where}")
        if isinstance(parent, ast.BinOp):
            return ends(f"`{short_code(parent)}` at {where}")
        if isinstance(parent, ast.Subscript) and parent.value is expr:
            return ends(f"subscripted (`{short_code(parent)}`) at {where}")
        if isinstance(parent, ast.Starred):
            return ends(f"a `*` spread at {where}")
        if isinstance(parent, ast.ClassDef):
            return ends(f"a base of class `{parent.name}` at {where}")
        return ends(f"`{short_code(parent)}` at {where}" if parent is not None else f"unknown use at {where}")

    def compared(self, f: ParsedModule, compare: ast.Compare, followed: ast.AST) -> Chain | None:
        """A comparison answers as before unless another side can hold an object's type
        (which is ``Parameter`` for a converted parameter, where it was the class): a
        ``type(x)``/``x.__class__`` in it (``type(p).__mro__``, ``(t := type(p))``), a
        name its scope binds to one (``t = type(p)``, then ``t == X``), or a value the
        proof does not follow (``unfollowed``: ``kind(p) is X``, ``self.t is X``), unless
        it is the ``followed`` value itself."""
        sides = [compare.left, *compare.comparators]

        def ends(text: str) -> Chain:
            return (f.step(compare, text),)
        if any(is_type_of(s) for s in sides):
            return ends(f"`type(...)` comparison at {f.where(compare)}")
        if not all(isinstance(op, _EQUALITY) for op in compare.ops):
            return ends(f"`{short_code(compare)}` at {f.where(compare)}")
        for side in sides:
            held = _type_held(f, side)
            if held is not None and self.held_rewritten(f, side, held, followed):
                return None
            if held is not None:
                return ends(f"`{short_code(compare)}` at {f.where(compare)}, where "
                            f"`{short_code(side)}` holds `{short_code(held)}` ({f.where(held)}): an "
                            "object's type, Parameter for a converted parameter")
            fed = self.fed_parameter(f, side)
            if fed is not None:
                return ends(f"`{short_code(compare)}` at {f.where(compare)}, where `{short_code(side)}` "
                            f"is a parameter of {fed}")
        for side in sides:
            if side is followed:
                continue
            if isinstance(side, (ast.Tuple, ast.List, ast.Set)):
                side = type(side)(elts=[e for e in side.elts if e is not followed])
            unfollowed = self.unfollowed(f, side, frozenset())
            if unfollowed is not None:
                return ends(f"`{short_code(compare)}` at {f.where(compare)}, where {unfollowed}, "
                            "which may be an object's type (Parameter for a converted parameter)")
        return None

    def registered(self, f: ParsedModule, call: ast.Call, argument: ast.AST) -> bool:
        """Whether ``argument`` of ``call`` hands the class to one of torch's registries of
        tensor subclasses (``type_registries``), in a tree that never reads one back."""
        if self._registries_read is None:
            self._registries_read = any(
                (parsed := self.file(path)) is not None and reads_registries(parsed.tree)
                for path, text in self.texts.items() if "tensor_subclasses" in text)
        return not self._registries_read and registers_by_exact_type(
            call, argument, f.imports, lambda name: self._bound_where(f, call, name))

    def _bound_where(self, f: ParsedModule, node: ast.AST, name: str) -> bool:
        """Whether ``name`` is bound other than by an import where ``node`` stands: in a
        function around it (a parameter, a local) or by a module-level assignment."""
        scope = f.scope_of(node)
        while scope is not None:
            if name in parameter_names(scope) or bound_values(name, _body_of(scope)) != []:
                return True
            scope = f.scope_of(scope)
        return bound_values(name, f.tree.body) != []

    def held_rewritten(self, f: ParsedModule, side: ast.expr, held: ast.expr, followed: ast.AST) -> bool:
        """Whether the use-site rewrite turns this comparison into one of kinds: ``side``
        is a name that holds an object's type as ``analysis/held_types`` covers it
        (``held`` its binding's value), and ``followed`` is a class named right there (a
        mention, not a value that came through a name)."""
        if not isinstance(side, ast.Name) or id(followed) not in self.mentions:
            return False
        covered = self._held_bindings.get(id(f))
        if covered is None:
            covered = self._held_bindings[id(f)] = {
                id(h.binding.value): h for names in held_types(f.tree).values()
                for h in names.values() if h.convertible}
        found = covered.get(id(held))
        # Each class written out it is compared with is a Parameter class (a mention).
        return found is not None and all(id(side) in self.mentions for side in found.classes)

    def unfollowed(self, f: ParsedModule, side: ast.expr, seen: frozenset[str]) -> str | None:
        """How a side of a comparison with a class may hold a value the proof does not
        follow (``type(p)`` returned by a function, read from an attribute or a container):
        None when the side is a literal, a name (a parameter: ``fed`` decides; else each
        value its scope binds it to, in turn), a module's attribute (``params.Col``), a
        read of a dict written out of those (``TABLE[key]``, ``TABLE.get(key, default)``),
        ``a if c else b`` of those, a call of a function of the tree that returns only
        those, or a container written out of those; else what it is."""
        if isinstance(side, ast.Constant):
            return None
        if isinstance(side, (ast.Tuple, ast.List, ast.Set)):
            return next((found for element in side.elts
                         if (found := self.unfollowed(f, element, seen)) is not None), None)
        if isinstance(side, ast.Name):
            if _parameter_of(f, side) is not None or side.id in seen:
                return None
            holder, _, values = self.table_values(f, side)  # also through an import
            if values is None:
                return f"`{side.id}` is bound in a way the proof does not follow"
            for value in values:
                if self.unfollowed(holder, value, seen | {side.id}) is not None:
                    return f"`{side.id}` is bound to `{short_code(value)}` ({holder.where(value)})"
            return None
        if isinstance(side, ast.Attribute):
            root: ast.expr = side
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in f.imports and _bound_values(f, root) == []:
                return None  # a module's attribute, ``params.Col``
            return f"`{short_code(side)}` is read from an attribute"
        table = _table_read(side)
        if table is not None:
            holder, local, tables = self.table_values(f, table)
            written = _written_by_key(holder, local)
            if written is not None:
                return f"`{table.id}` is written by key at {holder.where(written)}"
            if tables and all(isinstance(held, ast.Dict) and all(
                    value is not None and self.unfollowed(holder, value, seen | {table.id}) is None
                    for value in held.values) for held in tables) and all(
                    self.unfollowed(f, default, seen) is None for default in _defaults(side)):
                return None  # a read of a table written out of classes, ``TABLE[key]``
            return f"`{short_code(side)}` is read from a container"
        if isinstance(side, ast.IfExp):
            return self.unfollowed(f, side.body, seen) or self.unfollowed(f, side.orelse, seen)
        if isinstance(side, ast.Call) and isinstance(side.func, ast.Name):
            returned = self.returned_values(f, side.func.id)
            if returned is not None:
                holder, qualname, values = returned
                if qualname in seen:
                    return None
                return next((f"`{short_code(side)}` returns `{short_code(value)}`"
                             + ("" if is_type_of(value) else f" ({found})")
                             for value in values
                             if (found := self.unfollowed(holder, value, seen | {qualname})) is not None),
                            None)
        if isinstance(side, ast.Starred):
            return f"`{short_code(side)}` is spread"
        return f"`{short_code(side)}` is computed"

    def returned_values(self, f: ParsedModule, name: str) -> tuple[ParsedModule, str, list[ast.expr]] | None:
        """The module, qualified name and returned values of the module-level function
        ``name`` of ``f`` names (its own or imported), when every way out of it is a
        ``return`` with a value it follows or a bare one (``None``); None for anything
        else (a method, a generator, a function outside the tree)."""
        qualname = self.resolved(f, name)
        found = self.definition(qualname)
        if found is None or qualname is None:
            return None
        holder, function = found
        if not isinstance(function, ast.FunctionDef):
            return None
        values: list[ast.expr] = []
        for node in walk_scope(function.body):
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                return None
            if isinstance(node, ast.Return):
                values.append(node.value if node.value is not None else ast.Constant(None))
        return holder, qualname, values

    def table_values(self, f: ParsedModule, name: ast.Name) -> tuple[ParsedModule, str, list[ast.expr] | None]:
        """The values ``name`` is bound to (``_bound_values``), followed through the
        module-level import of another module of the tree that binds it; with the module
        that binds them and the name it binds them to there."""
        values = _bound_values(f, name)
        qualname = self.resolved(f, name.id) if values == [] and name.id in f.imports else None
        if qualname is None:
            return f, name.id, values
        module, _, local = qualname.rpartition(".")
        holder = self.module_file(module)
        if holder is None or local not in holder.assigned:
            return f, name.id, values
        return holder, local, bound_values(local, holder.tree.body)

    def fed_parameter(self, f: ParsedModule, side: ast.expr) -> str | None:
        """Where ``side`` is a parameter of a function around it (``_parameter_of``) that a
        call may pass an object's type (``fed``): the function and that chain, in words
        (``"`check`: ..."``); else None (``unfollowed`` proves such a parameter when no
        call can)."""
        function = _parameter_of(f, side)
        if function is None:
            return None
        assert isinstance(side, ast.Name)
        found = self.fed(f, function, side.id)
        return None if found is None else f"`{getattr(function, 'name', 'lambda')}`: {chain_text(found)}"

    def fed(self, f: ParsedModule, function: ast.AST, parameter: str) -> Chain | None:
        """None when no call of ``function`` in the tree can pass an object's type to
        ``parameter`` (its callers found by its name, as for a returned value), else how
        one can: ``type(x)`` or a name holding one passed, a parameter of the caller that
        is passed one in turn, or callers that are not all known (a ``lambda``, the
        function used other than by calling it, a call the proof cannot resolve, a ``*``
        or ``**`` spread where the argument may be)."""
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return (ChainStep("the callers of a lambda are not followed", f.path, getattr(function, "lineno", None)),)
        name = function.name

        def through(g: ParsedModule, call: ast.Call) -> Chain | None:
            callees = self.callees(g, call)
            if isinstance(callees, str):
                return (g.step(call, f"a call of `{name}` at {g.where(call)} is not followed ({callees})"),)
            for _, callee, shift in callees:
                if callee is function:
                    found = self._argument_fed(g, call, function, parameter, shift)
                    if found is not None:
                        return found
            return None
        return self._memoised(("fed", f.path, id(function), parameter), lambda: self._first_of_calls(
            name, through, lambda used: f"`{name}` used as {used}, so its callers are not known"))

    def _argument_fed(self, g: ParsedModule, call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef,
                      parameter: str, shift: int) -> Chain | None:
        """How ``call`` may pass an object's type to ``parameter`` of ``function`` (None:
        it cannot): one step, at the call."""
        where = g.where(call)

        def ends(text: str) -> Chain:
            return (g.step(call, text),)
        arguments = function.args
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        value: ast.expr | None = None
        if parameter in positional:
            at = positional.index(parameter) - shift
            if at < 0:
                return None  # the bound ``self``
            if any(isinstance(a, ast.Starred) for a in call.args[:at + 1]):
                return ends(f"a `*` spread in the call at {where}")
            if at < len(call.args):
                value = call.args[at]
        if value is None:
            value = next((k.value for k in call.keywords if k.arg == parameter), None)
        if value is None:
            if any(k.arg is None for k in call.keywords):
                return ends(f"a `**` spread in the call at {where}")
            return None  # the default: a value of the function's own, followed where written
        if is_type_of(value):
            return ends(f"`{short_code(call)}` at {where} passes `{short_code(value)}`, an object's type")
        held = _type_held(g, value)
        if held is not None:
            return ends(f"`{short_code(call)}` at {where} passes `{short_code(value)}`, which holds "
                        f"`{short_code(held)}` ({g.where(held)}), an object's type")
        fed = self.fed_parameter(g, value)
        if fed is not None:
            return ends(f"`{short_code(call)}` at {where} passes `{short_code(value)}`, a parameter of {fed}")
        unfollowed = self.unfollowed(g, value, frozenset())
        if unfollowed is not None:
            return ends(f"`{short_code(call)}` at {where} passes `{short_code(value)}`, where "
                        f"{unfollowed}, which may be an object's type")
        return None

    def in_raise(self, f: ParsedModule, node: ast.AST) -> bool:
        """Whether the formatted value ``node`` is in the message of a ``raise``: its
        f-string is an argument of the exception raised (``raise E(f"...{X}")``), nothing
        else (``raise (A if f"{X}"... else B)(...)`` computes with the text)."""
        text = f.up(node)
        call = f.up(text) if isinstance(text, ast.JoinedStr) else None
        statement = f.up(call) if isinstance(call, ast.Call) else None
        return isinstance(call, ast.Call) and any(a is text for a in call.args) \
            and isinstance(statement, ast.Raise) and statement.exc is call

    def bound(self, f: ParsedModule, statement: ast.AST, name: str, table: bool) -> Chain | None:
        """A value bound to ``name`` by ``statement``: a local, or a module-level name."""
        up = f.up(statement)
        while up is not None and not isinstance(up, (*SCOPES, ast.ClassDef, ast.Module)):
            up = f.up(up)
        if isinstance(up, ast.ClassDef):
            return (f.step(statement, f"stored in class attribute `{up.name}.{name}` at {f.where(statement)}"),)
        if up is None or isinstance(up, ast.Module):
            return self.global_name(f, name, table)
        return self.local(f, up, name, table)

    def table(self, f: ParsedModule, literal: ast.Dict) -> Chain | None:
        holder = f.up(literal)
        if isinstance(holder, (ast.Assign, ast.AnnAssign)) and holder.value is literal:
            targets = holder.targets if isinstance(holder, ast.Assign) else [holder.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return self.bound(f, holder, targets[0].id, table=True)
        return (f.step(literal, f"a dict (`{short_code(literal)}`) at {f.where(literal)}"),)

    def table_read(self, f: ParsedModule, read: ast.expr, name: str) -> Chain | None:
        """A read of table ``name``: its elements reach where ``T[k]``/``T.get(k)`` goes."""
        parent = f.up(read)
        step = f.step(read, f"table `{name}` read at {f.where(read)}")
        if isinstance(parent, ast.Subscript) and parent.value is read and isinstance(parent.ctx, ast.Load):
            found = self.reach(f, parent)
            return None if found is None else (step, *found)
        if isinstance(parent, ast.Subscript) and parent.value is read:
            return None  # ``T[k] = v``, ``del T[k]``: another value, followed where it is written
        if isinstance(parent, ast.Compare) and any(c is read for c in parent.comparators) \
                and all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
            return None  # ``k in T`` reads only the keys
        if isinstance(parent, ast.Attribute) and parent.attr in ("get", "keys"):
            call = f.up(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                if parent.attr == "keys":
                    return None
                found = self.reach(f, call)
                return None if found is None else (step, *found)
        return (f.step(read, f"table `{name}` used as `{short_code(parent or read)}` at {f.where(read)}"),)

    def read(self, f: ParsedModule, node: ast.expr, name: str, table: bool) -> Chain | None:
        if self.in_annotation(f, node):
            return None
        if table:
            return self.table_read(f, node, name)
        return self.reach(f, node)

    def in_annotation(self, f: ParsedModule, node: ast.AST) -> bool:
        child, up = node, f.up(node)
        while up is not None and not isinstance(up, ast.stmt):
            if isinstance(up, ast.arg) and up.annotation is child:
                return True
            child, up = up, f.up(up)
        return (isinstance(up, ast.AnnAssign) and up.annotation is child) or \
            (isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and up.returns is child)

    # -- names, memoised ------------------------------------------------------------------
    def _memoised(self, key: tuple, compute: Callable[[], Chain | None]) -> Chain | None:
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            self._assumed += 1
            return None  # proven unless another use says otherwise
        if self._depth >= _MAX_DEPTH:
            return (ChainStep("a chain too long to follow"),)
        assumed = self._assumed
        self._active.add(key)
        self._depth += 1
        try:
            found = compute()
        finally:
            self._depth -= 1
            self._active.discard(key)
        if found is not None or self._assumed == assumed or not self._active:
            self._memo[key] = found
        return found

    def local(self, f: ParsedModule, scope: ast.AST, name: str, table: bool) -> Chain | None:
        """Every read of local ``name`` in ``scope`` (nested functions included) is proven."""
        body = scope.body if isinstance(scope, ast.Lambda) else ast.Module(body=scope.body, type_ignores=[])  # type: ignore[attr-defined]

        def compute() -> Chain | None:
            for node in ast.walk(body):
                if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                    return (f.step(node, f"`{name}` declared {type(node).__name__.lower()} at {f.where(node)}"),)
                if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                    found = self.read(f, node, name, table)
                    if found is not None:
                        return found
            return None
        return self._memoised(("local", f.path, id(scope), name, table), compute)

    def global_name(self, f: ParsedModule, name: str, table: bool) -> Chain | None:
        """Every read of module-level ``name`` of ``f``, in ``f`` and wherever it is imported."""
        qualname = f"{f.module}.{name}"

        def compute() -> Chain | None:
            # A module that imports it under another name (``from m import T as U``)
            # re-exports it as ``U``: files that import ``U`` from there mention only that.
            spellings, pending, seen = {name}, [name], set()
            while pending:
                for g in self.mentioning(pending.pop()):
                    if g.path in seen:
                        continue
                    seen.add(g.path)
                    for local, targets in g.imports.items():
                        if local not in spellings and any(self.canonical(t) == qualname for t in targets):
                            spellings.add(local)
                            pending.append(local)
                    for node in self.global_reads(g, f, name, qualname):
                        found = self.read(g, node, name, table)
                        if found is not None:
                            return found
            return None
        return self._memoised(("global", qualname, table), compute)

    # -- calls ----------------------------------------------------------------------------
    def passed(self, f: ParsedModule, call: ast.Call, index: int | None = None,
               keyword: str | None = None) -> Chain | None:
        """The value passed to ``call`` (positional ``index`` or ``keyword``)."""
        func = call.func
        where = f.where(call)

        def ends(text: str) -> Chain:
            return (f.step(call, text),)
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass", "type", "super"):
            return ends(f"{func.id} at {where}")
        if index is not None and any(isinstance(a, ast.Starred) for a in call.args[:index]):
            return ends(f"passed after a `*` spread at {where}")
        callees = self.callees(f, call)
        if isinstance(callees, str):
            return ends(callees)
        for g, function, shift in callees:
            decorator = transforming_decorator(function)
            if decorator is not None:
                return ends(f"passed to `{function.name}` at {where}, decorated with "
                            f"`@{decorator}`, which may not hand it on unchanged")
            parameter = self.parameter(function, shift, index, keyword)
            if parameter.startswith("!"):
                return (g.step(function, f"{function.name}() at {g.where(function)}: {parameter[1:]}"),)
            found = self.local(g, function, parameter, table=False)
            if found is not None:
                return (g.step(function, f"{function.name}({parameter})"), *found)
        return None


    def default(self, f: ParsedModule, arguments: ast.arguments, expr: ast.AST) -> Chain | None:
        """A default argument: the value reaches the parameter's reads."""
        function = f.up(arguments)
        positional = [*arguments.posonlyargs, *arguments.args]
        parameter = None
        for arg, value in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults):
            if value is expr:
                parameter = arg.arg
        for arg, kw_value in zip(arguments.kwonlyargs, arguments.kw_defaults):
            if kw_value is expr:
                parameter = arg.arg
        if parameter is None or function is None:
            return (f.step(expr, f"an argument default at {f.where(expr)}"),)
        found = self.local(f, function, parameter, table=False)
        name = getattr(function, "name", "lambda")
        return None if found is None else (f.step(function, f"{name}({parameter})"), *found)

    def calls_of(self, name: str) -> Iterator[tuple[ParsedModule, ast.expr, ast.Call | None]]:
        """Every read of ``name`` in the tree (by name: a superset of the function's), with
        the call it is the callee of, or None where it is read otherwise."""
        for g in self.mentioning(name):
            for node in g.reads.get(name, ()):
                call = g.up(node)
                yield g, node, call if isinstance(call, ast.Call) and call.func is node else None

    def returned(self, f: ParsedModule, scope: ast.AST | None) -> Chain | None:
        """A returned value reaches wherever each call of the function puts its result."""
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if scope is None:
                return (ChainStep(f"returned from a lambda at {f.path.name}", f.path),)
            return (f.step(scope, f"returned from a lambda at {f.where(scope)}"),)
        name = scope.name

        def through(g: ParsedModule, call: ast.Call) -> Chain | None:
            found = self.reach(g, call)
            return None if found is None else (g.step(call, f"returned by {name}() at {g.where(call)}"), *found)
        return self._memoised(("return", f.path, id(scope)), lambda: self._first_of_calls(
            name, through, lambda used: f"`{name}` (which returns it) used as {used}"))

    def _first_of_calls(self, name: str, through: Callable[[ParsedModule, ast.Call], Chain | None],
                        used_otherwise: Callable[[str], str]) -> Chain | None:
        """The first answer ``through`` gives for a call of the function ``name`` in the
        tree (None: none gives one); where ``name`` is read other than by calling it, the
        calls are not all known: ``used_otherwise`` says so of that read
        (``"`code` at path:line"``)."""
        for g, node, call in self.calls_of(name):
            if call is None:
                return (g.step(node, used_otherwise(f"`{short_code(g.up(node) or node)}` at {g.where(node)}")),)
            found = through(g, call)
            if found is not None:
                return found
        return None


def prove_class_values(texts: dict[Path, str], modules: dict[Path, str],
                       names: Iterable[str], seeds: Iterable[Path]) -> ClassValues:
    """The verdict of every value use of ``names`` (the identifiers Parameter classes
    are spelled with) in the ``seeds`` files (those that mention one); ``texts`` (path
    -> text) and ``modules`` (path -> module name) are the whole tree, where values go."""
    wanted = frozenset(names)
    values = ClassValues()
    prover = _Prover(texts, modules)
    for path in seeds:
        f = prover.file(path)
        if f is None:
            continue
        verdicts: dict[Position, Chain | None] = {}
        prover.mentions.update(id(node) for name in wanted for node in f.reads.get(name, ()))
        for name in wanted:
            for node in f.reads.get(name, ()):
                parent = f.up(node)
                if (isinstance(parent, ast.Call) and parent.func is node) or _needs_class(f, node) \
                        or prover.in_annotation(f, node):
                    continue  # a construction, a class-style use, an annotation: rewrites decide
                try:
                    found = prover.reach(f, node)
                except (RecursionError, TypeError, AttributeError, ValueError) as exc:
                    # A shape the proof does not model: refused, never a failed run.
                    found = (f.step(node, f"not followed ({type(exc).__name__}) at {f.where(node)}"),)
                verdicts[(node.lineno, f.column(node))] = None if found is None else (
                    f.step(node, f.where(node)), *found)
        if verdicts:
            values.verdicts[path] = verdicts
    return values


def _needs_class(f: ParsedModule, node: ast.expr) -> bool:
    """Whether the position of ``node`` itself needs a class (``value_flow.is_class_style``
    on CPython's tree): no value flows anywhere, the use is rewritten or refused as such."""
    parent = f.up(node)
    if isinstance(parent, (ast.Attribute, ast.ClassDef)) or (
            isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.BitOr)) or (
            isinstance(parent, ast.Subscript) and parent.value is node):
        return True
    if isinstance(parent, ast.keyword) and isinstance(f.up(parent), ast.ClassDef):
        return True
    up = parent
    while isinstance(up, (ast.Tuple, ast.List, ast.Set)):
        up = f.up(up)
    if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id in ("isinstance", "issubclass"):
        return True
    return isinstance(up, ast.Compare) and any(is_type_of(s) for s in (up.left, *up.comparators))
