"""Which functions of the tree a call can run, for the value proofs (``class_values``).

A value passed to a call reaches the parameter that receives it in every function the
call may run: a function by its name (nested, module-level or imported), a function of an
imported module (``m.f(...)``), or a method (``self.m(...)``, ``C.m(...)``: then every
method of that name in the tree, since an override may be the one that runs). Anything
else is unknown, and the answer says why.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from codemod.analysis.value_modules import FunctionNode, ParsedModule, TreeModules, short_code


def _decorated(function: FunctionNode, name: str) -> bool:
    """Whether ``function`` carries the plain decorator ``@name``."""
    return any(isinstance(d, ast.Name) and d.id == name for d in function.decorator_list)


#: Decorators known to call the function with the arguments it was given.
_PASS_THROUGH_DECORATORS = frozenset({
    "staticmethod", "classmethod", "cache", "lru_cache", "functools.cache",
    "functools.lru_cache", "torch.no_grad", "torch.inference_mode", "override",
    "typing.override", "typing_extensions.override",
})


def transforming_decorator(function: FunctionNode) -> str | None:
    """The first decorator of ``function`` not known to pass its arguments through
    unchanged (a wrapper of the tree may inspect or replace them), as written; else None."""
    for decorator in function.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        if short_code(called) not in _PASS_THROUGH_DECORATORS:
            return short_code(decorator)
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


def _binds_member(node: ast.AST, name: str, f: ParsedModule) -> bool:
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


class CallTargets(TreeModules):
    """``TreeModules`` that also find the functions a call runs and the parameter an
    argument lands in."""

    def __init__(self, texts: dict[Path, str], modules: dict[Path, str]) -> None:
        super().__init__(texts, modules)
        self._methods: dict[str, list[tuple[ParsedModule, FunctionNode]]] = {}
        self._method_stores: dict[str, str | None] = {}

    @staticmethod
    def parameter(function: FunctionNode, shift: int, index: int | None, keyword: str | None) -> str:
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

    def callees(self, f: ParsedModule, call: ast.Call) -> list[tuple[ParsedModule, FunctionNode, int]] | str:
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
        return f"passed to `{short_code(func)}` at {where}, which is not a function of the tree"

    def defined_in_hierarchy(self, f: ParsedModule, owner: ast.ClassDef, name: str,
                             seen: frozenset[str] = frozenset()) -> str | None:
        """None when ``owner`` or a base of it in the tree defines method ``name`` before
        any base outside the tree could; else why not."""
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name for s in owner.body):
            return None
        for base in owner.bases:
            if not isinstance(base, ast.Name):
                return f"the base `{short_code(base)}` of `{owner.name}` is not followed"
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

    def methods(self, name: str, bound: bool) -> list[tuple[ParsedModule, FunctionNode, int]]:
        """Every method ``name`` of every class of the tree (an override may be the one
        that runs), with the arguments a call binds first (``self``, ``cls``)."""
        if name not in self._methods:
            found: list[tuple[ParsedModule, FunctionNode]] = []
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
