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
      ``type(...)``/``....__class__`` (each name holds one object, so identity and
      equality answer as before);
    * a pass to a parameter of a function of the tree whose own uses are proven (calls
      by name, through an imported module, ``self.m``/``cls.m``/``C.m``: then *every*
      method of that name in the tree is proven, since an override may receive it);
    * a local or module-level name bound to it, a table ``{key: v}`` whose every read is
      ``T[key]``, ``T.get(key)`` or ``key in T`` (in any module that imports it, also
      through re-exports and ``import m; m.T``), a default argument, a ``return`` whose
      every caller uses the result so, ``a if c else v``;
    * a bare expression statement, an annotation, or formatting into the message of a
      ``raise`` (the message then names the function).

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
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.names import import_targets

#: Verdict key: (line, 1-based column in characters), LibCST's position of the mention.
Position = tuple[int, int]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_EQUALITY = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)
#: How deep a chain is followed before giving up (a refusal).
_MAX_DEPTH = 12


_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def physical_lines(text: str) -> list[str]:
    """The lines as CPython numbers them (``\\r\\n``, ``\\r``, ``\\n``; not ``str.splitlines``,
    which also splits at form feeds and Unicode separators)."""
    return _PHYSICAL_LINE.findall(text)


def char_column(line: str, byte_offset: int) -> int:
    """The 1-based column, in characters, of CPython's ``col_offset`` (UTF-8 bytes) in ``line``."""
    if line.isascii():
        return byte_offset + 1
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace")) + 1


@dataclass
class ClassValues:
    """Per file, per mention of a class name: None when every use it reaches is proven,
    else the chain of the first use that is not."""

    verdicts: dict[Path, dict[Position, str | None]] = field(default_factory=dict)

    def proven(self, path: Path, line: int, column: int) -> bool:
        """Whether the mention at ``path:line:column`` is a value use proven harmless."""
        return self.verdicts.get(path, {}).get((line, column), "") is None

    def why_not(self, path: Path, line: int, column: int) -> str | None:
        """The chain that refuses the mention at ``path:line:column`` (None: none known)."""
        return self.verdicts.get(path, {}).get((line, column))

    def steps_to_refusal(self, path: Path, line: int, column: int) -> tuple[str, ...] | None:
        """``why_not``'s chain, one step each (the proof joins its steps with `` -> ``)."""
        chain = self.why_not(path, line, column)
        return tuple(chain.split(" -> ")) if chain is not None else None


class _File:
    """One parsed module: its tree, each node's parent, its imports and definitions."""

    def __init__(self, path: Path, module: str, text: str, tree: ast.Module) -> None:
        self.path = path
        self.module = module
        self.is_package = path.name == "__init__.py"
        self.lines = physical_lines(text)
        self.tree = tree
        self.parent, self.reads = _parents(tree)
        self.imports: dict[str, set[str]] = {}
        for local, target in import_targets(tree, module, self.is_package):
            self.imports.setdefault(local, set()).add(target)
        self.functions = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
        self.assigned = {t.id for s in tree.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                         for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
                         if isinstance(t, ast.Name)}
        #: Module-level functions whose name is also assigned or imported at module level:
        #: which object the name holds when called depends on the order, so none is assumed.
        self.rebound = {name for name in self.functions
                        if name in self.assigned or name in self.imports or name in self.classes}

    def has_star_import(self) -> bool:
        """Whether the module has a top-level star import (its names may come from anywhere)."""
        return any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
                   for n in self.tree.body)

    def up(self, node: ast.AST) -> ast.AST | None:
        return self.parent.get(id(node))

    def where(self, node: ast.AST) -> str:
        return f"{self.path.name}:{getattr(node, 'lineno', 0)}"

    def column(self, node: ast.AST) -> int:
        """LibCST's 1-based column in characters (CPython counts UTF-8 bytes)."""
        line = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else ""  # type: ignore[attr-defined]
        return char_column(line, node.col_offset)  # type: ignore[attr-defined]

    def scope_of(self, node: ast.AST) -> ast.AST | None:
        """The function (or lambda) whose body holds ``node``; None at module level."""
        up = self.up(node)
        while up is not None and not isinstance(up, _SCOPES):
            up = self.up(up)
        return up


def _parents(tree: ast.AST) -> tuple[dict[int, ast.AST], dict[str, list[ast.expr]]]:
    """id(node) -> its parent, for every node of ``tree``; and identifier -> the reads
    of it (``Name`` nodes, and ``Attribute`` nodes by their attribute name).

    Every node of every proof's file passes here once: node classes are compared by
    identity (CPython's parser makes no subclasses of them) and the loop's lookups are
    local names."""
    parent: dict[int, ast.AST] = {}
    reads: dict[str, list[ast.expr]] = {}
    stack = [tree]
    pop, push = stack.pop, stack.append
    name_kind, attribute_kind, load, node_kind = ast.Name, ast.Attribute, ast.Load, ast.AST
    while stack:
        node = pop()
        kind = type(node)
        if kind is name_kind and type(node.ctx) is load:  # type: ignore[attr-defined]
            reads.setdefault(node.id, []).append(node)  # type: ignore[attr-defined, arg-type]
            continue
        if kind is attribute_kind and type(node.ctx) is load:  # type: ignore[attr-defined]
            reads.setdefault(node.attr, []).append(node)  # type: ignore[attr-defined, arg-type]
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for child in value:
                    if isinstance(child, node_kind):
                        parent[id(child)] = node
                        push(child)
            elif isinstance(value, node_kind):
                parent[id(value)] = node
                push(value)
    return parent, reads


def _is_type_of(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "type":
        return True
    return isinstance(expr, ast.Attribute) and expr.attr == "__class__"


def _code(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


def _decorated(function: _Function, name: str) -> bool:
    return any(isinstance(d, ast.Name) and d.id == name for d in function.decorator_list)


#: Decorators known to call the function with the arguments it was given.
_PASS_THROUGH_DECORATORS = frozenset({
    "staticmethod", "classmethod", "cache", "lru_cache", "functools.cache",
    "functools.lru_cache", "torch.no_grad", "torch.inference_mode", "override",
    "typing.override", "typing_extensions.override",
})


def _transforming_decorator(function: _Function) -> str | None:
    """The first decorator of ``function`` not known to pass its arguments through
    unchanged (a wrapper of the tree may inspect or replace them), as written; else None."""
    for decorator in function.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        if _code(called) not in _PASS_THROUGH_DECORATORS:
            return _code(decorator)
    return None


def _binds_locally(scope: ast.AST, name: str) -> bool:
    """Whether function or lambda ``scope`` binds ``name`` other than with a nested ``def``
    (a parameter, an assignment, a loop or ``with`` target, an import...): a call of
    ``name`` there does not reach the module's function of that name."""
    arguments = scope.args  # type: ignore[attr-defined]
    params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
              *(a for a in (arguments.vararg, arguments.kwarg) if a is not None)]
    if any(a.arg == name for a in params):
        return True
    body = [scope.body] if isinstance(scope, ast.Lambda) else scope.body  # type: ignore[attr-defined]
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and node.id == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            pending.extend(getattr(node, "decorator_list", []))
            continue
        pending.extend(ast.iter_child_nodes(node))
    return False


def _binds_member(node: ast.AST, name: str, f: _File) -> bool:
    """Whether ``node`` binds member ``name`` of some object other than with ``def``: an
    assignment to ``name`` directly in a class body, to ``obj.name``, or ``setattr(obj,
    "name", ...)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
        return len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
            and node.args[1].value == name
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    else:
        return False
    in_class = isinstance(f.up(node), ast.ClassDef)
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, ast.Attribute) and part.attr == name:
                return True
            if in_class and isinstance(part, ast.Name) and part.id == name:
                return True
    return False


class _Prover:
    """Follows values through the files of one tree, parsing each file once, on demand."""

    def __init__(self, texts: dict[Path, str], modules: dict[Path, str]) -> None:
        self.texts = texts
        self.modules = modules
        self.paths = {module: path for path, module in modules.items()}
        self._files: dict[Path, _File | None] = {}
        self._memo: dict[tuple, str | None] = {}
        self._active: set[tuple] = set()
        self._assumed = 0
        self._depth = 0
        self._methods: dict[str, list[tuple[_File, _Function]]] = {}
        self._method_stores: dict[str, str | None] = {}

    # -- files and names --------------------------------------------------------------
    def file(self, path: Path) -> _File | None:
        if path not in self._files:
            try:
                tree = python_trees.parse(self.texts[path])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            self._files[path] = None if tree is None else _File(path, self.modules[path], self.texts[path], tree)
        return self._files[path]

    def module_file(self, module: str) -> _File | None:
        path = self.paths.get(module)
        return self.file(path) if path is not None else None

    def mentioning(self, word: str) -> Iterator[_File]:
        """The parsed files whose text holds the identifier ``word``."""
        pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")
        for path, text in self.texts.items():
            if word in text and pattern.search(text):
                found = self.file(path)
                if found is not None:
                    yield found

    def canonical(self, qualname: str, seen: frozenset[str] = frozenset()) -> str:
        """Follow re-exports: ``pkg.T`` -> ``pkg.mod.T`` when ``pkg`` imports ``T``."""
        module, _, name = qualname.rpartition(".")
        holder = self.module_file(module) if module else None
        if holder is None or qualname in seen or name in holder.functions or name in holder.classes \
                or name in holder.assigned:
            return qualname
        targets = holder.imports.get(name)
        if not targets or len(targets) != 1:
            return qualname
        return self.canonical(next(iter(targets)), seen | {qualname})

    def resolved(self, f: _File, local: str) -> str | None:
        """What a module-level name of ``f`` names: its own definition or one import."""
        if local in f.functions or local in f.classes or local in f.assigned:
            return f"{f.module}.{local}"
        targets = f.imports.get(local)
        if targets and len(targets) == 1:
            return self.canonical(next(iter(targets)))
        return None

    def definition(self, qualname: str | None) -> tuple[_File, ast.AST] | None:
        """The module-level function or class ``qualname`` names in the tree."""
        if qualname is None:
            return None
        module, _, name = qualname.rpartition(".")
        holder = self.module_file(module)
        if holder is None:
            return None
        if name in holder.rebound:
            return None
        found = holder.functions.get(name) or holder.classes.get(name)
        return (holder, found) if found is not None else None

    # -- one value ----------------------------------------------------------------------
    def reach(self, f: _File, expr: ast.AST) -> str | None:
        """None when every use the value of ``expr`` reaches is proven, else the chain."""
        parent = f.up(expr)
        where = f.where(expr)
        if isinstance(parent, ast.Call):
            if parent.func is expr:
                return None
            if any(a is expr for a in parent.args):
                return self.passed(f, parent, index=parent.args.index(expr))  # type: ignore[arg-type]
            return f"`{_code(parent)}` at {where}"
        if isinstance(parent, ast.keyword):
            call = f.up(parent)
            if parent.arg is None or not isinstance(call, ast.Call):
                return f"a `**` spread at {where}"
            return self.passed(f, call, keyword=parent.arg)
        if isinstance(parent, ast.Compare):
            return self.compared(f, parent)
        if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
            holder = f.up(parent)
            if isinstance(holder, ast.Compare) and parent is not holder.left \
                    and all(isinstance(op, (ast.In, ast.NotIn)) for op in holder.ops):
                return self.compared(f, holder)
            if isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name) \
                    and holder.func.id in ("isinstance", "issubclass"):
                return f"{holder.func.id} at {where}"
            return f"an element of `{_code(parent)}` at {where}"
        if isinstance(parent, ast.Dict):
            if any(v is expr and k is not None for k, v in zip(parent.keys, parent.values)):
                return self.table(f, parent)
            return f"a key of a dict at {where}"
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is expr:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found = self.bound(f, parent, target.id, table=False)
                elif isinstance(target, ast.Attribute):
                    found = f"stored in an attribute (`{_code(target)}`) at {where}"
                else:
                    found = f"stored in `{_code(target)}` at {where}"
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
            return f"attribute `.{parent.attr}` at {where}"
        if isinstance(parent, ast.BinOp):
            return f"`{_code(parent)}` at {where}"
        if isinstance(parent, ast.Subscript) and parent.value is expr:
            return f"subscripted (`{_code(parent)}`) at {where}"
        if isinstance(parent, ast.Starred):
            return f"a `*` spread at {where}"
        if isinstance(parent, ast.ClassDef):
            return f"a base of class `{parent.name}` at {where}"
        return f"`{_code(parent)}` at {where}" if parent is not None else f"unknown use at {where}"

    def compared(self, f: _File, compare: ast.Compare) -> str | None:
        sides = [compare.left, *compare.comparators]
        if any(_is_type_of(s) for s in sides):
            return f"`type(...)` comparison at {f.where(compare)}"
        if not all(isinstance(op, _EQUALITY) for op in compare.ops):
            return f"`{_code(compare)}` at {f.where(compare)}"
        return None

    def in_raise(self, f: _File, node: ast.AST) -> bool:
        """Whether ``node`` is in the expression of a ``raise`` (only a message)."""
        up = f.up(node)
        while up is not None and not isinstance(up, ast.stmt):
            up = f.up(up)
        return isinstance(up, ast.Raise)

    def bound(self, f: _File, statement: ast.AST, name: str, table: bool) -> str | None:
        """A value bound to ``name`` by ``statement``: a local, or a module-level name."""
        up = f.up(statement)
        while up is not None and not isinstance(up, (*_SCOPES, ast.ClassDef, ast.Module)):
            up = f.up(up)
        if isinstance(up, ast.ClassDef):
            return f"stored in class attribute `{up.name}.{name}` at {f.where(statement)}"
        if up is None or isinstance(up, ast.Module):
            return self.global_name(f, name, table)
        return self.local(f, up, name, table)

    def table(self, f: _File, literal: ast.Dict) -> str | None:
        holder = f.up(literal)
        if isinstance(holder, (ast.Assign, ast.AnnAssign)) and holder.value is literal:
            targets = holder.targets if isinstance(holder, ast.Assign) else [holder.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return self.bound(f, holder, targets[0].id, table=True)
        return f"a dict (`{_code(literal)}`) at {f.where(literal)}"

    def table_read(self, f: _File, read: ast.expr, name: str) -> str | None:
        """A read of table ``name``: its elements reach where ``T[k]``/``T.get(k)`` goes."""
        parent = f.up(read)
        if isinstance(parent, ast.Subscript) and parent.value is read and isinstance(parent.ctx, ast.Load):
            found = self.reach(f, parent)
            return None if found is None else f"table `{name}` read at {f.where(read)} -> {found}"
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
                return None if found is None else f"table `{name}` read at {f.where(read)} -> {found}"
        return f"table `{name}` used as `{_code(parent or read)}` at {f.where(read)}"

    def read(self, f: _File, node: ast.expr, name: str, table: bool) -> str | None:
        if self.in_annotation(f, node):
            return None
        if table:
            return self.table_read(f, node, name)
        return self.reach(f, node)

    def in_annotation(self, f: _File, node: ast.AST) -> bool:
        child, up = node, f.up(node)
        while up is not None and not isinstance(up, ast.stmt):
            if isinstance(up, ast.arg) and up.annotation is child:
                return True
            child, up = up, f.up(up)
        return (isinstance(up, ast.AnnAssign) and up.annotation is child) or \
            (isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and up.returns is child)

    # -- names, memoised ------------------------------------------------------------------
    def _memoised(self, key: tuple, compute) -> str | None:
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            self._assumed += 1
            return None  # proven unless another use says otherwise
        if self._depth >= _MAX_DEPTH:
            return "a chain too long to follow"
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

    def local(self, f: _File, scope: ast.AST, name: str, table: bool) -> str | None:
        """Every read of local ``name`` in ``scope`` (nested functions included) is proven."""
        body = scope.body if isinstance(scope, ast.Lambda) else ast.Module(body=scope.body, type_ignores=[])  # type: ignore[attr-defined]

        def compute() -> str | None:
            for node in ast.walk(body):
                if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                    return f"`{name}` declared {type(node).__name__.lower()} at {f.where(node)}"
                if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                    found = self.read(f, node, name, table)
                    if found is not None:
                        return found
            return None
        return self._memoised(("local", f.path, id(scope), name, table), compute)

    def global_name(self, f: _File, name: str, table: bool) -> str | None:
        """Every read of module-level ``name`` of ``f``, in ``f`` and wherever it is imported."""
        qualname = f"{f.module}.{name}"

        def compute() -> str | None:
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

    def global_reads(self, g: _File, f: _File, name: str, qualname: str) -> Iterator[ast.expr]:
        """Reads in ``g`` of ``f``'s module-level ``name``: by its own name in ``f`` (or
        through a star import), by a name ``g`` imports it as, as ``m.name``."""
        locals_ = {local for local, targets in g.imports.items()
                   if any(self.canonical(t) == qualname for t in targets)}
        if g is f:
            locals_.add(name)
        modules = {local for local, targets in g.imports.items() if f.module in targets}
        if g.has_star_import():
            locals_.add(name)
        for local in locals_:
            yield from (n for n in g.reads.get(local, ()) if isinstance(n, ast.Name))
        if modules:
            for node in g.reads.get(name, ()):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
                    yield node

    # -- calls ----------------------------------------------------------------------------
    def passed(self, f: _File, call: ast.Call, index: int | None = None,
               keyword: str | None = None) -> str | None:
        """The value passed to ``call`` (positional ``index`` or ``keyword``)."""
        func = call.func
        where = f.where(call)
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass", "type", "super"):
            return f"{func.id} at {where}"
        if index is not None and any(isinstance(a, ast.Starred) for a in call.args[:index]):
            return f"passed after a `*` spread at {where}"
        callees = self.callees(f, call)
        if isinstance(callees, str):
            return callees
        for g, function, shift in callees:
            decorator = _transforming_decorator(function)
            if decorator is not None:
                return (f"passed to `{function.name}` at {where}, decorated with "
                        f"`@{decorator}`, which may not hand it on unchanged")
            parameter = self.parameter(function, shift, index, keyword)
            if parameter.startswith("!"):
                return f"{function.name}() at {g.where(function)}: {parameter[1:]}"
            found = self.local(g, function, parameter, table=False)
            if found is not None:
                return f"{function.name}({parameter}) -> {found}"
        return None

    @staticmethod
    def parameter(function: _Function, shift: int, index: int | None, keyword: str | None) -> str:
        """The parameter of ``function`` that receives the value ("!why" when none does)."""
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        if index is not None:
            at = index + shift
            if at < len(positional):
                return positional[at].arg
            if arguments.vararg is not None:
                return f"!collected in `*{arguments.vararg.arg}`"
            return "!no parameter receives it"
        named = [a.arg for a in (*arguments.args, *arguments.kwonlyargs)]
        if keyword in named:
            return keyword
        if arguments.kwarg is not None:
            return f"!collected in `**{arguments.kwarg.arg}`"
        return "!no parameter receives it"

    def callees(self, f: _File, call: ast.Call) -> list[tuple[_File, _Function, int]] | str:
        """Every function of the tree ``call`` may run, with how many arguments the call
        binds before its own (``self``); a string says why that is not known."""
        func = call.func
        where = f.where(call)
        if isinstance(func, ast.Name):
            scope = f.scope_of(call)
            while scope is not None:
                body = [] if isinstance(scope, ast.Lambda) else scope.body  # type: ignore[attr-defined]
                nested = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and s.name == func.id]
                if nested:
                    return [(f, nested[-1], 0)]
                if _binds_locally(scope, func.id):
                    return (f"passed to `{func.id}` at {where}, a local name of "
                            f"`{getattr(scope, 'name', 'lambda')}` that may hold any function")
                scope = f.scope_of(scope)
            found = self.definition(self.resolved(f, func.id))
            if found is not None and isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
                return [(found[0], found[1], 0)]
            return f"passed to `{func.id}` at {where}, which is not a function of the tree"
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            base = func.value.id
            method = f.scope_of(call)
            while method is not None and not isinstance(f.up(method), ast.ClassDef):
                method = f.scope_of(method)
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args \
                    and method.args.args[0].arg == base and not _decorated(method, "staticmethod"):
                owner = f.up(method)
                assert isinstance(owner, ast.ClassDef)
                missing = self.defined_in_hierarchy(f, owner, func.attr)
                if missing is not None:
                    return f"passed to `{base}.{func.attr}` at {where}: {missing}"
                stored = self.method_stored(func.attr)
                if stored is not None:
                    return f"passed to `{base}.{func.attr}` at {where}: {stored}"
                return self.methods(func.attr, bound=True)
            target = self.resolved(f, base)
            module_file = self.module_file(target) if target is not None else None
            if module_file is not None:
                function = module_file.functions.get(func.attr)
                if function is not None and func.attr not in module_file.rebound:
                    return [(module_file, function, 0)]
            found = self.definition(target)
            if found is not None and isinstance(found[1], ast.ClassDef):
                missing = self.defined_in_hierarchy(found[0], found[1], func.attr)
                stored = self.method_stored(func.attr)
                if missing is None and stored is not None:
                    return f"passed to `{base}.{func.attr}` at {where}: {stored}"
                if missing is None:
                    return self.methods(func.attr, bound=False)
        return f"passed to `{_code(func)}` at {where}, which is not a function of the tree"

    def defined_in_hierarchy(self, f: _File, owner: ast.ClassDef, name: str,
                             seen: frozenset[str] = frozenset()) -> str | None:
        """None when ``owner`` or a base of it in the tree defines method ``name`` before
        any base outside the tree could; else why not."""
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name for s in owner.body):
            return None
        for base in owner.bases:
            if not isinstance(base, ast.Name):
                return f"the base `{_code(base)}` of `{owner.name}` is not followed"
            found = self.definition(self.resolved(f, base.id))
            if found is None or not isinstance(found[1], ast.ClassDef):
                return f"the base `{base.id}` of `{owner.name}` is not a class of the tree"
            qualname = f"{found[0].module}.{found[1].name}"
            if qualname in seen:
                continue
            if self.defined_in_hierarchy(found[0], found[1], name, seen | {qualname}) is None:
                return None
        return f"`{owner.name}` and its bases do not define `{name}`"

    def method_stored(self, name: str) -> str | None:
        """Where the tree binds ``name`` other than with ``def`` (``name = f`` in a class
        body, ``obj.name = f``, ``setattr(obj, "name", f)``): a method call ``x.name(...)``
        may then run that object instead of any ``def name``; None when nowhere."""
        if name not in self._method_stores:
            found = None
            pattern = re.compile(rf"\b{re.escape(name)}\b")
            for path, text in self.texts.items():
                if found is not None:
                    break
                if name not in text or not pattern.search(text):
                    continue
                g = self.file(path)
                if g is None:
                    continue
                for node in ast.walk(g.tree):
                    if _binds_member(node, name, g):
                        found = f"`{name}` is also bound other than by `def` at {g.where(node)}"
                        break
            self._method_stores[name] = found
        return self._method_stores[name]

    def methods(self, name: str, bound: bool) -> list[tuple[_File, _Function, int]]:
        """Every method ``name`` of every class of the tree (an override may be the one
        that runs), with the arguments a call binds first (``self``, ``cls``)."""
        if name not in self._methods:
            found: list[tuple[_File, _Function]] = []
            pattern = re.compile(rf"\bdef\s+{re.escape(name)}\s*\(")
            for path, text in self.texts.items():
                if name in text and pattern.search(text):
                    g = self.file(path)
                    if g is None:
                        continue
                    for node in ast.walk(g.tree):
                        if isinstance(node, ast.ClassDef):
                            found.extend((g, s) for s in node.body
                                         if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name)
            self._methods[name] = found
        out = []
        for g, function in self._methods[name]:
            static = _decorated(function, "staticmethod")
            shift = 0 if static else 1 if bound or _decorated(function, "classmethod") else 0
            out.append((g, function, shift))
        return out

    def default(self, f: _File, arguments: ast.arguments, expr: ast.AST) -> str | None:
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
            return f"an argument default at {f.where(expr)}"
        found = self.local(f, function, parameter, table=False)
        name = getattr(function, "name", "lambda")
        return None if found is None else f"{name}({parameter}) -> {found}"

    def returned(self, f: _File, scope: ast.AST | None) -> str | None:
        """A returned value reaches wherever each call of the function puts its result."""
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return f"returned from a lambda at {f.where(scope) if scope else f.path.name}"
        name = scope.name

        def compute() -> str | None:
            for g in self.mentioning(name):
                for node in g.reads.get(name, ()):
                    call = g.up(node)
                    if not (isinstance(call, ast.Call) and call.func is node):
                        return f"`{name}` (which returns it) used as `{_code(call or node)}` at {g.where(node)}"
                    found = self.reach(g, call)
                    if found is not None:
                        return f"returned by {name}() at {g.where(call)} -> {found}"
            return None
        return self._memoised(("return", f.path, id(scope)), compute)


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
        verdicts: dict[Position, str | None] = {}
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
                    found = f"not followed ({type(exc).__name__}) at {f.where(node)}"
                verdicts[(node.lineno, f.column(node))] = None if found is None else f"{f.where(node)} -> {found}"
        if verdicts:
            values.verdicts[path] = verdicts
    return values


def _needs_class(f: _File, node: ast.expr) -> bool:
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
    return isinstance(up, ast.Compare) and any(_is_type_of(s) for s in (up.left, *up.comparators))
