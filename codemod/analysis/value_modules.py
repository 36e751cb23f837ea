"""The tree's modules as the value proofs (``class_values``) read them.

Each file is parsed once, on demand, with CPython's parser (``TreeModules.file``); a
``ParsedModule`` holds its tree, each node's parent, the reads of every identifier, its
imports and its module-level definitions. Names are resolved from a module's own imports,
following re-exports (``canonical``, ``resolved``, ``definition``); nothing is imported.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.names import import_targets
from codemod.analysis.source_lines import char_column, physical_lines
from codemod.types import ChainStep

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
#: The nodes whose body is a scope of its own for the proofs.
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class ParsedModule:
    """One parsed module: its tree, each node's parent, its imports and definitions."""

    def __init__(self, path: Path, module: str, text: str, tree: ast.Module) -> None:
        self.path = path
        self.module = module
        self.is_package = path.name == "__init__.py"
        self.lines = physical_lines(text)
        self.tree = tree
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

    @functools.cached_property
    def _parents_and_reads(self) -> tuple[dict[int, ast.AST], dict[str, list[ast.expr]]]:
        return parents_and_reads(self.tree)

    @property
    def parent(self) -> dict[int, ast.AST]:
        """id(node) -> its parent. Made on first use: most modules are read only to
        resolve a name (their imports and definitions), and walking every node of each
        cost a third of the proofs' time on a large tree."""
        return self._parents_and_reads[0]

    @property
    def reads(self) -> dict[str, list[ast.expr]]:
        """Identifier -> its reads (``Name`` nodes, ``Attribute`` nodes by attribute)."""
        return self._parents_and_reads[1]

    def has_star_import(self) -> bool:
        """Whether the module has a top-level star import (its names may come from anywhere)."""
        return any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
                   for n in self.tree.body)

    def up(self, node: ast.AST) -> ast.AST | None:
        return self.parent.get(id(node))

    def where(self, node: ast.AST) -> str:
        return f"{self.path.name}:{getattr(node, 'lineno', 0)}"

    def step(self, node: ast.AST, text: str) -> ChainStep:
        """A step of a value chain (``class_values``) that happens at ``node`` of this module."""
        return ChainStep(text, self.path, getattr(node, "lineno", 0))

    def column(self, node: ast.AST) -> int:
        """LibCST's 1-based column in characters (CPython counts UTF-8 bytes)."""
        line = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else ""  # type: ignore[attr-defined]
        return char_column(line, node.col_offset)  # type: ignore[attr-defined]

    def scope_of(self, node: ast.AST) -> ast.AST | None:
        """The function (or lambda) whose body holds ``node``; None at module level."""
        up = self.up(node)
        while up is not None and not isinstance(up, SCOPES):
            up = self.up(up)
        return up


def parents_and_reads(tree: ast.AST) -> tuple[dict[int, ast.AST], dict[str, list[ast.expr]]]:
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


def short_code(node: ast.AST) -> str:
    """``node``'s code as a refusal quotes it: at most 40 characters."""
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


class TreeModules:
    """The files of one tree, each parsed once on demand, and the names they define."""

    def __init__(self, texts: dict[Path, str], modules: dict[Path, str]) -> None:
        self.texts = texts
        self.modules = modules
        self.paths = {module: path for path, module in modules.items()}
        self._files: dict[Path, ParsedModule | None] = {}

    # -- files and names --------------------------------------------------------------
    def file(self, path: Path) -> ParsedModule | None:
        if path not in self._files:
            try:
                tree = python_trees.parse(self.texts[path])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            self._files[path] = None if tree is None else ParsedModule(path, self.modules[path], self.texts[path], tree)
        return self._files[path]

    def module_file(self, module: str) -> ParsedModule | None:
        path = self.paths.get(module)
        return self.file(path) if path is not None else None

    def mentioning(self, word: str) -> Iterator[ParsedModule]:
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

    def resolved(self, f: ParsedModule, local: str) -> str | None:
        """What a module-level name of ``f`` names: its own definition or one import."""
        if local in f.functions or local in f.classes or local in f.assigned:
            return f"{f.module}.{local}"
        targets = f.imports.get(local)
        if targets and len(targets) == 1:
            return self.canonical(next(iter(targets)))
        return None

    def definition(self, qualname: str | None) -> tuple[ParsedModule, ast.AST] | None:
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

    def global_reads(self, g: ParsedModule, f: ParsedModule, name: str, qualname: str) -> Iterator[ast.expr]:
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
