"""Independent check of a converted tree, with Python's own ``ast`` (not LibCST).

    python scripts/verify_tree.py [--import] ORIGINAL_DIR CONVERTED_DIR

ORIGINAL_DIR and CONVERTED_DIR are the same source tree before and after ``codemod
apply`` (e.g. two copies of ``vllm/``, or of a directory holding packages). The script
imports nothing from ``codemod``: it must not share the transformer's mistakes. It
reports:

* the converted names: a module-level ``def X`` of the converted tree where the same file
  of the original tree had a ``class X`` deriving, directly or through other classes of the
  tree, from ``torch.nn.Parameter``;
* every use of a converted name *as a class* left anywhere in the converted tree
  (``isinstance``/``issubclass`` arguments, tuples and ``A | B`` unions included;
  ``type(x)``/``x.__class__``, or a name its function binds to one, compared with ``is``,
  ``==``, ``in`` and their negations; class
  bases; ``super(X, ...)``; attribute reads ``X.attr`` other than ``__name__``,
  ``__qualname__``, ``__module__``; ``except X``; ``case X():``; ``X[...]``; ``X | Y``;
  ``singledispatch`` ``.register(X)``; annotations; ``type(x).__name__ == "X"``), resolved through every kind of
  import: absolute, relative, ``import a.b as m; m.X``, ``pkg.mod.X``, star imports
  (honouring ``__all__``), re-exports in ``__init__.py``, module-level aliases ``Y = X``,
  ``getattr(module, "X")``, ``globals()["X"]``, ``module.__dict__["X"]``, ``vars(module)["X"]`` with
  literal names, and modules looked up by a string (``importlib.import_module``, ``sys.modules``);
* other value uses (names stored or passed around), which keep working as factories;
* every import statement the conversion added or changed, which must resolve: the module
  is a module of the tree (or of the standard library, or ``torch``) and the imported name
  is bound in it; and every ``from M import X``, in any file, of a module ``M`` the
  conversion changed, which resolved before and must still; with ``--import`` each such
  statement is also executed in a fresh
  interpreter whose ``sys.path`` starts with the import root (nothing stubbed);
* every changed file compiled with ``compile()``.

Module names come from the import roots: the directory above the topmost directory with
an ``__init__.py`` (directories without one below it are namespace packages, as Python
treats them); files outside any package are named from the given directory. Symlinked
directories are followed and named by the path they are reached through.

Exit status 1 on any class-only use, unresolved added import, or changed file that does
not compile. ``verify(original, converted)`` returns the same as a ``Report``.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import stat
import subprocess
import sys
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: Attributes a module-level function has with the same value the class had.
_SAME_ON_FUNCTIONS = frozenset({"__name__", "__qualname__", "__module__"})

#: Qualified names of the roots every converted class derives from.
_PARAMETER_ROOTS = frozenset({
    "torch.nn.Parameter", "torch.nn.parameter.Parameter",
    "torch.nn.UninitializedParameter", "torch.nn.parameter.UninitializedParameter",
})

#: Modules outside the tree that an added import may name.
_KNOWN_EXTERNAL = frozenset({"torch", "typing_extensions"})

#: Comparison operators with which ``type(x) OP X`` asks about the class.
_TYPE_COMPARISONS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq, ast.In, ast.NotIn)


@dataclass(frozen=True)
class Use:
    """One mention of a converted name: where, what kind, which name, the source text."""

    path: Path
    line: int
    col: int
    kind: str
    name: str
    text: str

    @property
    def class_only(self) -> bool:
        """Whether this use needs a class (it fails or answers differently on a function)."""
        return self.kind not in ("value", "harmless-attribute")

    def render(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.kind}: {self.text} ({self.name})"


@dataclass
class Report:
    """What ``verify`` found; ``ok`` when there is nothing to fix."""

    converted: list[str] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)
    import_problems: list[str] = field(default_factory=list)
    compile_problems: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)
    added_imports: int = 0

    @property
    def class_only_uses(self) -> list[Use]:
        return [use for use in self.uses if use.class_only]

    @property
    def problems(self) -> list[str]:
        """Every problem, one line each."""
        return ([f"CLASS-ONLY USE LEFT: {use.render()}" for use in self.class_only_uses]
                + [f"ADDED IMPORT DOES NOT RESOLVE: {p}" for p in self.import_problems]
                + [f"DOES NOT COMPILE: {p}" for p in self.compile_problems]
                + [f"UNREADABLE FILE MENTIONS A CONVERTED NAME: {p}" for p in self.unreadable])

    @property
    def ok(self) -> bool:
        return not self.problems

    def render(self) -> str:
        """The text the command line prints."""
        kinds = Counter(use.kind for use in self.uses)
        lines = [f"converted names: {len(self.converted)}"]
        lines += [f"  {name}" for name in self.converted]
        lines.append(f"uses of converted names (besides calls and imports): {dict(sorted(kinds.items()))}")
        for use in self.uses:
            label = "CLASS-ONLY USE LEFT" if use.class_only else "value use (a factory reference; fine)"
            lines.append(f"  {label}: {use.render()}")
        lines += [f"  ADDED IMPORT DOES NOT RESOLVE: {p}" for p in self.import_problems]
        lines += [f"  DOES NOT COMPILE: {p}" for p in self.compile_problems]
        lines += [f"  UNREADABLE FILE MENTIONS A CONVERTED NAME: {p}" for p in self.unreadable]
        lines.append(f"added or changed imports: {self.added_imports}, unresolved: {len(self.import_problems)}")
        lines.append(f"changed files: {len(self.changed)}, compiled: "
                     f"{len(self.changed) - len(self.compile_problems)}")
        lines.append(f"class-only uses left: {len(self.class_only_uses)}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- the tree


class _Module:
    """One file of a tree: its module name, path, text and (parsed on first use) code."""

    def __init__(self, name: str, path: Path, root: Path, text: str, readable: bool) -> None:
        self.name = name
        self.path = path
        self.is_package = path.name == "__init__.py"
        self.root = root
        self.text = text
        self.readable = readable
        self._tree: ast.Module | None = None
        self._parsed = False

    @property
    def tree(self) -> ast.Module | None:
        """The file's AST, or None when it cannot be decoded or parsed."""
        if not self._parsed:
            self._parsed = True
            if self.readable:
                try:
                    self._tree = ast.parse(self.text, str(self.path))
                except (SyntaxError, ValueError):
                    self._tree = None
        return self._tree


def python_files(top: Path) -> list[Path]:
    """Every ``.py`` file under ``top``, following symlinked directories once each."""
    found: list[Path] = []
    seen: set[str] = set()
    for current, dirs, files in os.walk(top, followlinks=True):
        real = os.path.realpath(current)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        found += [Path(current) / f for f in sorted(files)
                  if f.endswith(".py") and os.path.isfile(os.path.join(current, f))
                  and stat.S_ISREG(os.stat(os.path.join(current, f)).st_mode)]
    return found


def import_root(top: Path, path: Path) -> Path:
    """The directory ``path``'s module is imported from: above its topmost package."""
    highest: Path | None = None
    directory = path.parent
    while True:
        if (directory / "__init__.py").exists():
            highest = directory
        if directory == top or directory == directory.parent:
            break
        directory = directory.parent
    if highest == top:  # the given directory is itself a package: walk up above it
        while (highest.parent / "__init__.py").exists() and highest.parent != highest:
            highest = highest.parent
    return highest.parent if highest is not None else top


def module_name(root: Path, path: Path) -> str:
    """Dotted module name of ``path`` imported from ``root``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def load_tree(top: Path) -> dict[str, _Module]:
    """Every module of the tree under ``top`` by name (read now, parsed when needed)."""
    modules: dict[str, _Module] = {}
    for path in python_files(top):
        root = import_root(top, path)
        name = module_name(root, path)
        try:
            raw = path.read_bytes()
        except OSError:
            modules.setdefault(name, _Module(name, path, root, "", False))
            continue
        try:  # PEP 263: a coding cookie or a BOM says how to read it, as Python does
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
            text, readable = raw.decode(encoding), True
        except (SyntaxError, LookupError, UnicodeDecodeError):
            text, readable = raw.decode("utf-8", errors="replace"), False
        modules.setdefault(name, _Module(name, path, root, text, readable))
    return modules


def _absolute(module: _Module, level: int, target: str | None) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if not level:
        return target or ""
    parts = module.name.split(".") if module.name else []
    if not module.is_package:
        parts = parts[:-1]
    parts = parts[: max(len(parts) - (level - 1), 0)]
    return ".".join(parts + ([target] if target else []))


def _module_level(statements: list[ast.stmt]):
    """Statements run at import time, including those under ``if``/``try``/``with``."""
    for stmt in statements:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for block in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, block, None)
            if isinstance(inner, list):
                yield from _module_level([s for s in inner if isinstance(s, ast.stmt)] +
                                         [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body])


def _literal_names(node: ast.AST) -> list[str]:
    """The strings of a literal list/tuple (``__all__``)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


class Tree:
    """A tree's modules with their module-level bindings, resolved on demand."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.modules = load_tree(top)
        self._symbols: dict[str, dict[str, set[str]]] = {}
        self._stars: dict[str, list[str]] = {}
        self._all: dict[str, list[str] | None] = {}

    def _bind(self, table: dict[str, set[str]], name: str, target: str) -> None:
        table.setdefault(name, set()).add(target)

    def import_bindings(self, module: _Module, node: ast.Import | ast.ImportFrom,
                        table: dict[str, set[str]], stars: list[str]) -> None:
        """Add what one import statement binds to ``table`` (star sources to ``stars``)."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self._bind(table, alias.asname, alias.name)
                else:
                    head = alias.name.split(".")[0]
                    self._bind(table, head, head)
            return
        base = _absolute(module, node.level, node.module)
        for alias in node.names:
            if alias.name == "*":
                stars.append(base)
            else:
                self._bind(table, alias.asname or alias.name, f"{base}.{alias.name}" if base else alias.name)

    def symbols(self, name: str) -> dict[str, set[str]]:
        """Module-level names of module ``name`` -> qualified names they may stand for."""
        if name in self._symbols:
            return self._symbols[name]
        table: dict[str, set[str]] = {}
        stars: list[str] = []
        self._symbols[name] = table
        module = self.modules.get(name)
        if module is None or module.tree is None:
            return table
        for stmt in _module_level(module.tree.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._bind(table, stmt.name, f"{name}.{stmt.name}")
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.import_bindings(module, stmt, table, stars)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                value = self.reference(module, stmt.value)
                for target in targets:
                    if isinstance(target, ast.Name):
                        self._bind(table, target.id, value or f"{name}.{target.id}")
                    elif (isinstance(target, ast.Subscript) and _is_globals(target.value)
                          and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
                        self._bind(table, target.slice.value, value or f"{name}.{target.slice.value}")
        self._stars[name] = stars
        for source in stars:
            for exported in self.exports(source):
                self._bind(table, exported, f"{source}.{exported}")
        return table

    def exports(self, name: str, _seen: frozenset[str] = frozenset()) -> list[str]:
        """What ``from name import *`` binds: ``__all__`` when given, else the public names."""
        module = self.modules.get(name)
        if module is None or module.tree is None or name in _seen:
            return []
        declared: list[str] | None = None
        for stmt in _module_level(module.tree.body):
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                    for t in stmt.targets):
                declared = _literal_names(stmt.value)
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
                    and stmt.target.id == "__all__":
                declared = (declared or []) + _literal_names(stmt.value)
        if declared is not None:
            return declared
        own = set(self.symbols(name)) if name not in _seen else set()
        return sorted(n for n in own if not n.startswith("_"))

    def reference(self, module: _Module, node: ast.AST, local: dict[str, set[str]] | None = None) -> str | None:
        """The one qualified name a module-level expression refers to, if plain enough."""
        found = self.qualify(module, node, local)
        return next(iter(found)) if len(found) == 1 else None

    def qualify(self, module: _Module, node: ast.AST, local: dict[str, set[str]] | None = None) -> set[str]:
        """Qualified names ``node`` (a name, attribute chain, ``getattr(m, "X")`` or
        ``globals()["X"]``) may stand for in ``module``, before following re-exports."""
        table = local if local is not None else self.symbols(module.name)
        if isinstance(node, ast.Name):
            return set(table.get(node.id, ()))
        if isinstance(node, ast.Attribute):
            return {f"{q}.{node.attr}" for q in self.qualify(module, node.value, local)}
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)):
            return {f"{q}.{node.args[1].value}" for q in self.qualify(module, node.args[0], local)}
        if (isinstance(node, ast.Subscript) and _is_globals(node.value) and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)):
            return set(self.symbols(module.name).get(node.slice.value, ()))
        looked_up = _module_by_string(node)
        if looked_up is not None:
            return {looked_up}
        if (isinstance(node, ast.Subscript) and (owner := _dict_owner(node.value)) is not None
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            return {f"{q}.{node.slice.value}" for q in self.qualify(module, owner, local)}
        return set()

    def canonical(self, qualname: str, _seen: frozenset[str] = frozenset()) -> set[str]:
        """Every definition ``qualname`` leads to through re-exports and submodules."""
        if qualname in _seen:
            return set()
        seen = _seen | {qualname}
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix not in self.modules:
                continue
            rest = parts[cut + 1:]
            table = self.symbols(prefix)
            targets = table.get(parts[cut])
            if not targets:
                return {qualname}
            out: set[str] = set()
            for target in targets:
                full = ".".join([target, *rest])
                out |= {full} if target == f"{prefix}.{parts[cut]}" else self.canonical(full, seen)
            return out
        return {qualname}


def _module_by_string(node: ast.AST) -> str | None:
    """``a.b`` of ``importlib.import_module("a.b")``, ``import_module("a.b")``,
    ``sys.modules["a.b"]`` or ``sys.modules.get("a.b")``."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name == "import_module" or (name == "get" and isinstance(func, ast.Attribute)
                                       and ast.unparse(func.value) == "sys.modules"):
            return node.args[0].value
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "sys.modules" \
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    return None


def _dict_owner(node: ast.AST) -> ast.AST | None:
    """``m`` of ``m.__dict__`` or ``vars(m)``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" \
            and len(node.args) == 1:
        return node.args[0]
    return None


def _type_names(module_tree: ast.Module, shorts: dict[str, str]) -> list[tuple[ast.AST, str]]:
    """``type(x).__name__ == "X"`` comparisons (``__class__``, ``__qualname__``, ``in`` a
    literal tuple too) naming a converted class ``X`` (``shorts``: short -> qualified)."""
    found = []
    for node in ast.walk(module_tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if not any(isinstance(o, ast.Attribute) and o.attr in ("__name__", "__qualname__")
                   and _is_type_of(o.value) for o in operands):
            continue
        for operand in operands:
            for item in operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]:
                if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value in shorts:
                    found.append((node, shorts[item.value]))
    return found


def _is_globals(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals" \
        and not node.args


# --------------------------------------------------------------------------- converted names


class _Hierarchy:
    """Answers whether a class of a tree derives from ``torch.nn.Parameter``."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self._answers: dict[str, bool] = {}

    def class_def(self, qualname: str) -> tuple[_Module, ast.ClassDef] | None:
        """The module-level ``class`` statement defining ``qualname``, if in the tree."""
        owner, _, short = qualname.rpartition(".")
        module = self.tree.modules.get(owner)
        if module is None or module.tree is None:
            return None
        for stmt in _module_level(module.tree.body):
            if isinstance(stmt, ast.ClassDef) and stmt.name == short:
                return module, stmt
        return None

    def is_parameter(self, qualname: str) -> bool:
        """Whether ``qualname`` is a class deriving, through classes of the tree, from Parameter."""
        if qualname in _PARAMETER_ROOTS:
            return True
        if qualname in self._answers:
            return self._answers[qualname]
        self._answers[qualname] = False  # a cycle answers no
        found = self.class_def(qualname)
        answer = False
        if found is not None:
            module, node = found
            answer = any(self.is_parameter(target)
                         for base in node.bases for q in self.tree.qualify(module, base)
                         for target in self.tree.canonical(q))
        self._answers[qualname] = answer
        return answer


def converted_names(converted: Path | Tree, original: Path | Tree | None = None,
                    changed: list[Path] | None = None) -> set[str]:
    """Qualified names that were a Parameter class in ``original`` and are a module-level
    function in ``converted`` (without ``original``: functions with a ``Features`` member)."""
    after = converted if isinstance(converted, Tree) else Tree(Path(converted).absolute())
    if original is None:
        return _names_from_features(after)
    before = original if isinstance(original, Tree) else Tree(Path(original).absolute())
    if changed is None:
        changed = changed_files(before.top, after.top)
    by_path = {m.path: m for m in after.modules.values()}
    before_by_rel = {m.path.relative_to(before.top): m for m in before.modules.values()}
    hierarchy = _Hierarchy(before)
    names: set[str] = set()
    for path in changed:
        counterpart, previous = by_path.get(path), before_by_rel.get(path.relative_to(after.top))
        if counterpart is None or previous is None or counterpart.tree is None or previous.tree is None:
            continue
        functions = {s.name for s in counterpart.tree.body if isinstance(s, ast.FunctionDef)}
        for stmt in _module_level(previous.tree.body):
            if isinstance(stmt, ast.ClassDef) and stmt.name in functions \
                    and hierarchy.is_parameter(f"{previous.name}.{stmt.name}"):
                names.add(f"{counterpart.name}.{stmt.name}")
    return names


def _names_from_features(tree: Tree) -> set[str]:
    """Module-level functions that a member of a generated ``class Features`` names: the
    member's value is the former class's qualified name (``pkg.params.Packed``), the
    class lives in the family's runtime module (``pkg/params_features.py``)."""
    names: set[str] = set()
    for module in tree.modules.values():
        if module.tree is None or "class Features" not in module.text:
            continue
        for node in module.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "Features":
                for item in node.body:
                    if isinstance(item, ast.Assign) and isinstance(item.value, ast.Constant) \
                            and isinstance(item.value.value, str):
                        qualname = item.value.value
                        owner = tree.modules.get(qualname.rpartition(".")[0])
                        if owner is not None and owner.tree is not None and any(
                                isinstance(n, ast.FunctionDef) and n.name == qualname.rpartition(".")[2]
                                for n in owner.tree.body):
                            names.add(qualname)
    return names


# --------------------------------------------------------------------------- uses


def _file_bindings(tree: Tree, module: _Module) -> dict[str, set[str]]:
    """Every binding a name may have somewhere in the file: module level plus imports and
    aliases inside functions and classes (a use resolves if any of them is converted)."""
    table = {k: set(v) for k, v in tree.symbols(module.name).items()}
    stars: list[str] = []
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            tree.import_bindings(module, node, table, stars)
    for source in stars:
        for exported in tree.exports(source):
            table.setdefault(exported, set()).add(f"{source}.{exported}")
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            for q in tree.qualify(module, node.value, table):
                table.setdefault(node.targets[0].id, set()).add(q)
    return table


def _kind(node: ast.AST, parents: dict[int, ast.AST]) -> str:
    """How the expression ``node`` (which names a converted function) is used."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return "harmless-attribute" if parent.attr in _SAME_ON_FUNCTIONS else "attribute"
    if isinstance(parent, ast.Call) and parent.func is node:
        return "call"  # a factory call: what the function is for
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return "subscript"
    child, up = node, parent
    union = False
    while isinstance(up, (ast.Tuple, ast.List, ast.Set, ast.BinOp, ast.Starred)):
        union = union or (isinstance(up, ast.BinOp) and isinstance(up.op, ast.BitOr))
        child, up = up, parents.get(id(up))
    if isinstance(up, ast.Call) and isinstance(up.func, ast.Name):
        if up.func.id in ("isinstance", "issubclass") and child in up.args:
            return up.func.id
        if up.func.id == "super" and child in up.args:
            return "super"
    if isinstance(up, ast.Call) and isinstance(up.func, ast.Attribute) and up.func.attr == "register" \
            and up.args and up.args[0] is child:
        return "dispatch-register"
    if isinstance(up, ast.Compare) and all(isinstance(op, _TYPE_COMPARISONS) for op in up.ops) \
            and any(_is_type_of(side) or _holds_type(side, up, parents) for side in [up.left, *up.comparators]):
        return "type-comparison"
    if isinstance(up, ast.ClassDef) and child in up.bases:
        return "class-base"
    if isinstance(up, ast.ExceptHandler) and up.type is child:
        return "except"
    if isinstance(up, ast.MatchClass) and up.cls is child:
        return "match-class"
    if _in_annotation(child, up, parents):
        return "annotation"
    if union:
        return "union"
    return "value"


def _in_annotation(child: ast.AST, up: ast.AST | None, parents: dict[int, ast.AST]) -> bool:
    """Whether ``child`` sits in an annotation (of an argument, a return or a variable)."""
    while up is not None:
        if isinstance(up, ast.arg):
            return up.annotation is child
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return up.returns is child
        if isinstance(up, ast.AnnAssign):
            return up.annotation is child
        if not isinstance(up, (ast.Subscript, ast.Tuple, ast.BinOp, ast.Attribute, ast.List)):
            return False
        child, up = up, parents.get(id(up))
    return False


def _holds_type(side: ast.AST, compare: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether ``side`` is a name that the function around ``compare`` binds, anywhere
    in it, to ``type(x)`` or ``x.__class__`` (``t = type(p)``, then ``t == X``), or such
    a binding itself (``(t := type(p)) == X``)."""
    if isinstance(side, ast.NamedExpr):
        return _is_type_of(side.value)
    if not isinstance(side, ast.Name):
        return False
    scope = parents.get(id(compare))
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope = parents.get(id(scope))
    if scope is None:
        return False
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and _is_type_of(node.value) and any(
                isinstance(target, ast.Name) and target.id == side.id for target in node.targets):
            return True
        if isinstance(node, ast.NamedExpr) and _is_type_of(node.value) and node.target.id == side.id:
            return True
    return False


def _is_type_of(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
        return True
    return isinstance(node, ast.Attribute) and node.attr == "__class__"


def _spellings(tree: Tree, names: set[str]) -> set[str]:
    """Every module-level name under which a module can reach one of ``names``: the
    short names, plus aliases (``K = X``, ``from m import X as K``, ``globals()["K"] = X``)
    bound in modules that mention one of them, until no new alias turns up."""
    shorts = {n.rsplit(".", 1)[-1] for n in names}
    scanned: set[str] = set()
    grown = True
    while grown:
        grown = False
        for module in tree.modules.values():
            if module.name in scanned or not any(s in module.text for s in shorts):
                continue
            scanned.add(module.name)
            for local, targets in tree.symbols(module.name).items():
                if local not in shorts and any(tree.canonical(t) & names for t in targets):
                    shorts.add(local)
                    grown = True
    return shorts


def find_uses(tree: Tree, names: set[str]) -> tuple[list[Use], list[str]]:
    """Every use of ``names`` in ``tree`` (besides imports and the definitions), and the
    files that mention one of the short names but cannot be read or parsed."""
    shorts = _spellings(tree, names)
    uses: list[Use] = []
    unreadable: list[str] = []
    for module in sorted(tree.modules.values(), key=lambda m: str(m.path)):
        if not shorts or not any(s in module.text for s in shorts):
            continue
        if module.tree is None:
            unreadable.append(str(module.path))
            continue
        table = _file_bindings(tree, module)

        def resolve(node: ast.AST) -> str | None:
            for q in tree.qualify(module, node, table):
                hit = tree.canonical(q) & names
                if hit:
                    return min(hit)
            return None

        parents: dict[int, ast.AST] = {}
        for parent in ast.walk(module.tree):
            for child in ast.iter_child_nodes(parent):
                parents[id(child)] = parent
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
                continue  # a binding, not a use
            if not isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
                continue
            name = resolve(node)
            if name is None:
                continue
            parent = parents.get(id(node))
            if isinstance(parent, ast.Attribute) and parent.value is node and resolve(parent):
                continue  # the inner part of a longer chain that resolves
            kind = _kind(node, parents)
            if kind != "call":
                uses.append(Use(module.path, node.lineno, node.col_offset + 1, kind, name, ast.unparse(node)))
        for node, name in _type_names(module.tree, {n.rsplit(".", 1)[-1]: n for n in names}):
            uses.append(Use(module.path, node.lineno, node.col_offset + 1, "type-name", name, ast.unparse(node)))
    return uses, unreadable


# --------------------------------------------------------------------------- imports and compiling


def changed_files(original: Path, converted: Path) -> list[Path]:
    """Files of ``converted`` that are new or differ from ``original``."""
    out = []
    for path in python_files(converted):
        before = original / path.relative_to(converted)
        if not before.exists() or before.read_bytes() != path.read_bytes():
            out.append(path)
    return out


def _imports(module: _Module) -> set[tuple[str, str | None, str | None]]:
    """(absolute module, imported name or None, alias) of every import in the file."""
    out: set[tuple[str, str | None, str | None]] = set()
    if module.tree is None:
        return out
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            out |= {(alias.name, None, alias.asname) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node.level, node.module)
            out |= {(base, alias.name, alias.asname) for alias in node.names}
    return out


def _import_problem(tree: Tree, source: str, name: str | None) -> str | None:
    """Why ``from source import name`` (``import source`` when name is None) fails, if it does."""
    top = source.split(".")[0]
    if source not in tree.modules:
        if any(m == source or m.startswith(source + ".") for m in tree.modules):
            pass  # a namespace package of the tree
        elif any(m == top or m.startswith(top + ".") for m in tree.modules):
            return f"no module {source} in the tree"
        elif top in sys.stdlib_module_names or top in _KNOWN_EXTERNAL:
            return None
        else:
            return f"module {source} is neither in the tree nor the standard library"
    if name is None or name == "*":
        return None
    if f"{source}.{name}" in tree.modules:
        return None
    if name not in tree.symbols(source):
        module = tree.modules.get(source)
        where = f" ({module.path})" if module else ""
        return f"{source}{where} binds no {name}"
    return None


def check_imports(original: Tree, converted: Tree, changed: list[Path]) -> tuple[int, list[str], list[str]]:
    """Count of imports added or changed in ``changed`` files, problems found statically,
    and the import statements (absolute form) to execute for ``--import``."""
    by_path = {m.path: m for m in converted.modules.values()}
    before_by_rel = {m.path.relative_to(original.top): m for m in original.modules.values()}
    problems: list[str] = []
    statements: list[str] = []
    count = 0
    for path in changed:
        module = by_path.get(path)
        if module is None or module.tree is None:
            continue
        previous = before_by_rel.get(path.relative_to(converted.top))
        old = _imports(previous) if previous is not None else set()
        for source, name, alias in sorted(_imports(module) - old, key=str):
            count += 1
            problem = _import_problem(converted, source, name)
            if problem:
                problems.append(f"{path}: {'from ' + source + ' import ' + name if name else 'import ' + source}: "
                                f"{problem}")
            statement = f"from {source} import {name}" if name else f"import {source}"
            statements.append(f"{module.root}\t{path}\t{statement}")
    # Imports from a changed module, anywhere in the tree: the name each one imports must
    # still be bound there (a rewrite may have dropped an import another file re-exports).
    changed_paths = set(changed)
    changed_modules = {m.name for m in converted.modules.values() if m.path in changed_paths}
    for module in converted.modules.values():
        for source, name, _alias in sorted(_imports(module), key=str):
            if source not in changed_modules or name in (None, "*"):
                continue
            assert name is not None
            if _import_problem(original, source, name) is None:
                problem = _import_problem(converted, source, name)
                if problem:
                    problems.append(f"{module.path}: from {source} import {name}: {problem}")
                statements.append(f"{module.root}\t{module.path}\tfrom {source} import {name}")
    return count, problems, sorted(set(statements))


_IMPORT_RUNNER = """
import importlib, json, sys
results = []
for line in sys.stdin.read().splitlines():
    root, path, statement = line.split("\\t")
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        exec(statement, {})
    except BaseException as exc:
        results.append(f"{path}: {statement}: {type(exc).__name__}: {exc}")
print(json.dumps(results))
"""


def execute_imports(statements: list[str], timeout: float = 300) -> list[str]:
    """Run each added import statement in one fresh interpreter (``sys.path`` = the file's
    import root first); the statements that raise."""
    if not statements:
        return []
    done = subprocess.run([sys.executable, "-c", _IMPORT_RUNNER], input="\n".join(statements),
                          capture_output=True, text=True, timeout=timeout, cwd="/")
    if done.returncode != 0:
        return [f"import runner failed: {done.stderr.strip()[-2000:]}"]
    return json.loads(done.stdout.strip().splitlines()[-1])


def compile_problems(changed: list[Path]) -> list[str]:
    """Changed files that ``compile()`` rejects."""
    problems = []
    for path in changed:
        try:
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            problems.append(f"{path}: {exc}")
    return problems


def verify(original: Path, converted: Path, run_imports: bool = False) -> Report:
    """Check ``converted`` (the tree ``original`` after conversion); see the module docstring."""
    original, converted = Path(original).absolute(), Path(converted).absolute()
    before, after = Tree(original), Tree(converted)
    changed = changed_files(original, converted)
    names = converted_names(after, before, changed)
    uses, unreadable = find_uses(after, names)
    count, problems, statements = check_imports(before, after, changed)
    if run_imports and not problems:
        problems = execute_imports(statements)
    return Report(converted=sorted(names), uses=uses, import_problems=problems,
                  compile_problems=compile_problems(changed), unreadable=unreadable,
                  changed=changed, added_imports=count)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("original", type=Path)
    parser.add_argument("converted", type=Path)
    parser.add_argument("--import", dest="run_imports", action="store_true",
                        help="also execute every added import in a fresh interpreter")
    args = parser.parse_args(argv)
    report = verify(args.original, args.converted, run_imports=args.run_imports)
    print(report.render())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
