"""A module of the tree whose members are read by a name the code computes, or all at once.

What it does
    ``computed_lookups`` finds, in one file, the reads of a module's members that no
    rewrite can follow: by a computed name (``getattr(params, kind)``,
    ``params.__dict__[key]``, ``vars(params).get(key)``, and in the module itself
    ``globals()[key]``) or all at once (``vars(params).items()``,
    ``params.__dict__.values()``, ``dict(vars(params))``, ``inspect.getmembers(params)``,
    ``globals().values()``), where the module binds a converted class at module level
    (defines it, imports it, or a star import gives it: ``SafetyNet.follow``). Each read
    names the classes its module binds.
Why
    A converted class is a factory function at run time. Code that picks the class by a
    name it computes and then checks against it (``isinstance(p, getattr(params, kind))``)
    raises ``TypeError``; code that collects the classes of a module
    (``inspect.getmembers(params, inspect.isclass)``) no longer finds them. No rewrite
    sees a class name there, and the safety net follows only literal names.
Fix safety
    Each such read refuses every converted class its module binds, naming the line. The
    module is found as the file's imports bind the name (any import of the file, a
    function's too), or looked up by a string as the safety net reads one
    (``safety_net.module_by_string``: ``import_module("a.b")``, a relative name with its
    package, ``sys.modules["a.b"]``, ``sys.modules[__name__]``). Reads that give only names
    (``.keys()``, ``dir(m)``, ``"X" in vars(m)``, iterating), writes (``globals()[k] =
    v``), a member called where it is read (``getattr(params, kind)(data)``), reads with a
    literal name (the safety net's) and a function's parameter named like the module are
    not such reads. A module reached another way (bound to another name, ``L = params``;
    passed to a function) is not followed: see docs/fix-safety.md. Only the files
    ``planning/lookup_gate.py`` lets through are parsed (a text read of every file).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

from codemod.analysis.ast_uses import dict_owner, literal_key_read
from codemod.analysis.names import import_targets, module_name_for
from codemod.analysis.python_trees import dotted_expr
from codemod.analysis.text_search import star_import
from codemod.planning.lookup_gate import Heads, file_heads, may_look_up
from codemod.planning.plan import Plan
from codemod.planning.safety_net import Escape, SafetyNet, module_by_string

#: (line, 1-based column, the read's code, the module whose members it reads).
Lookup = tuple[int, int, str, str]

def computed_lookups(tree: ast.Module, path: Path, is_module: Callable[[str], bool]) -> Iterator[Lookup]:
    """Each read in ``tree`` (the file ``path``) of the members of a module ``is_module``
    knows, by a computed name or all at once (ask ``may_look_up`` first: it is cheaper)."""
    module = module_name_for(path)
    is_package = path.name == "__init__.py"
    bound: dict[str, list[str]] = {}
    for local, target in import_targets(tree, module, is_package):
        bound.setdefault(local, []).append(target)

    def modules_of(node: ast.AST) -> list[str]:
        """The modules of the tree ``node`` may be (none: it is no module the file names)."""
        if _is_globals(node):
            return [module]
        looked_up = module_by_string(node, module, is_package)
        if looked_up is not None:
            return [looked_up] if is_module(looked_up) else []
        dotted = dotted_expr(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if dotted is None:
            return []
        head, _, rest = dotted.partition(".")
        if _bound_locally(node, head, parents):
            return []  # a function's parameter or local named like the module
        return [found for target in bound.get(head, ())
                if is_module(found := f"{target}.{rest}" if rest else target)]

    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        for owner in _members_read(node, parents):
            for found in modules_of(owner):
                yield (node.lineno, node.col_offset + 1,  # type: ignore[attr-defined]
                       ast.unparse(node), found)


#: Calls that take only a dict's keys (iterating it).
_KEYS_ONLY = frozenset({"list", "sorted", "set", "frozenset", "tuple", "len", "iter", "enumerate"})


def _bound_locally(node: ast.AST, name: str, parents: dict[int, ast.AST]) -> bool:
    """Whether a function around ``node`` binds ``name`` other than by an import (a
    parameter, an assignment, a loop target): there it is no module the file imports."""
    up = parents.get(id(node))
    while up is not None:
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = up.args
            if name in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                        *(a for a in (arguments.vararg, arguments.kwarg) if a))}:
                return True
            body = up.body if isinstance(up.body, list) else [up.body]
            if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                   for stmt in body for n in ast.walk(stmt)):
                return True
        up = parents.get(id(up))
    return False


def _members_read(node: ast.AST, parents: dict[int, ast.AST]) -> list[ast.AST]:
    """The module-like expression whose members ``node`` reads by a computed name or all
    at once: ``getattr(m, name)``, ``inspect.getmembers(m)``, or a module dict
    (``m.__dict__``, ``vars(m)``, ``globals()``) used other than by a literal key, for
    its keys (``.keys()``, ``in``, iterating it) or to write. A member called where it is
    read (``getattr(m, name)(...)``) builds a parameter, which the factory does as the
    class did. ``parents`` holds the parents of ``node`` and of its parent."""
    parent = parents.get(id(node))
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        called = isinstance(parent, ast.Call) and parent.func is node
        plain = isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                                                and func.value.id == "builtins")
        if name == "getattr" and plain and len(node.args) >= 2 and not _literal(node.args[1]) and not called:
            return [node.args[0]]
        if name in ("getmembers", "getmembers_static") and node.args:
            return [node.args[0]]
        if name == "__getattribute__" and isinstance(func, ast.Attribute) and node.args \
                and not _literal(node.args[0]) and not called:
            return [func.value]
    owner = dict_owner(node)
    if owner is None and _is_globals(node):
        owner = node
    if owner is None and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "getattr" and len(node.args) == 2 and isinstance(node.args[1], ast.Constant) \
            and node.args[1].value == "__dict__":
        owner = node.args[0]  # ``getattr(m, "__dict__")``
    if owner is None:
        return []
    key = literal_key_read(node, parents)
    if key is not None and _literal(key):
        return []  # ``m.__dict__["X"]``, ``vars(m).get("X")``: the safety net's
    above = parents.get(id(parent))
    if isinstance(parent, ast.Subscript) and parent.value is node:
        called = isinstance(above, ast.Call) and above.func is parent
        if not isinstance(parent.ctx, ast.Load) or called:
            return []
    elif isinstance(parent, ast.Attribute) and parent.value is node:
        if parent.attr in ("keys", "__contains__", "__iter__", "__len__", "update", "setdefault",
                           "__setitem__", "__delitem__"):
            return []
    elif isinstance(parent, ast.Compare) and any(c is node for c in parent.comparators) \
            and all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
        return []
    elif isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is node:
        return []
    elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
            and parent.func.id in _KEYS_ONLY and parent.args == [node]:
        return []
    return [owner]


def _literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_globals(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals" \
        and not node.args


class ModuleLookups:
    """The escapes of one plan through computed or whole reads of a module's members
    (``computed_lookups``), file by file: each such read refuses every converted class
    its module binds."""

    def __init__(self, plan: Plan, net: SafetyNet, texts: dict[Path, str],
                 mentions: Callable[[Path, str], bool], heads: dict[Path, Heads] | None = None,
                 star_importers: frozenset[Path] | None = None) -> None:
        """``mentions(path, text)``: whether the file names one of the plan's classes
        (the modules that may bind one name it, or star-import: ``star_importers``, else
        each text is read); ``heads``: ``file_heads(texts)``, when made already."""
        self.plan = plan
        self.net = net
        self.heads = file_heads(texts) if heads is None else heads
        self.converted = sorted(q for q, p in plan.classes.items() if p.converted)
        self._bound: dict[str, list[str]] = {}
        binding = [path for path, text in texts.items()
                   if mentions(path, text) or (path in star_importers if star_importers is not None
                                               else star_import(text))]
        self.own = frozenset(binding)
        self.module_words = frozenset(
            word for path in binding
            for word in (path.parent.name if path.name == "__init__.py" else path.stem,
                         module_name_for(path).partition(".")[0]))

    def escapes(self, path: Path) -> list[Escape]:
        """The escapes of the file ``path``."""
        heads = self.heads.get(path)
        if not self.converted or heads is None or not may_look_up(heads, self.module_words, path in self.own):
            return []
        tree = self.net.tree(path)
        if tree is None:
            return []
        out: list[Escape] = []
        for line, column, code, module in computed_lookups(
                tree, path, lambda m: self.net.module_path(m) is not None):
            how = (f"reached through a read of the members of {module} by a computed name or all "
                   "at once, which no rewrite follows (it would find a factory function)")
            out.extend((line, column, qualname, code, how) for qualname in self.bound(module))
        return out

    def bound(self, module: str) -> list[str]:
        """The converted classes ``module`` binds at module level."""
        if module not in self._bound:
            self._bound[module] = [q for q in self.converted if self._binds(module, q)]
        return self._bound[module]

    def _binds(self, module: str, qualname: str) -> bool:
        """Whether ``module`` binds the class, under its own name or another
        (``from .params import Col as C``)."""
        def is_class(found: str | None) -> bool:
            return found == qualname
        name = self.plan.classes[qualname].name
        info = self.net.info(module)
        # Another name is followed only where what it imports has the class's name.
        names = [name, *(local for local, targets in (info.explicit.items() if info is not None else ())
                         if any(target.rpartition(".")[2] == name for target in targets))]
        return any(self.net.follow(f"{module}.{local}", is_class, self.plan.index.canonical) == qualname
                   for local in dict.fromkeys(names))
