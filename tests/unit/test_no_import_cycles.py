"""The ``codemod`` package has no import cycle.

The graph is read with CPython's ``ast`` from every ``codemod/**/*.py``: imports at the
top of a module, inside functions and under ``if TYPE_CHECKING:`` all count, since each
one couples the two modules the same way. Importing ``a.b.c`` also imports the packages
``a.b`` and ``a`` (their ``__init__``), so an edge to a module is an edge to each package
above it as well; ``from a.b import c`` is an edge to ``a.b.c`` when that is a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import codemod

PACKAGE_DIR = Path(codemod.__file__).parent


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a ``from ... import`` statement names, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _with_packages(target: str, modules: set[str]) -> set[str]:
    """``target`` and each package above it, among the package's own modules."""
    parts = target.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & modules


def import_graph(root: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports (anywhere in its body)."""
    files = {_module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    modules = set(files)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    edges |= _with_packages(alias.name, modules)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node, module, path.name == "__init__.py")
                edges |= _with_packages(source, modules)
                for alias in node.names:
                    edges |= _with_packages(f"{source}.{alias.name}", modules)
        edges.discard(module)
        graph[module] = edges
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) per strongly connected component
    of more than one module, found with Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, component) for component in components]


def _cycle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside it."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph[node] & component):
                if succ == start:
                    return [*paths[node], start]
                if succ not in paths:
                    paths[succ] = [*paths[node], succ]
                    following.append(succ)
        frontier = following
    raise AssertionError("a strongly connected component always holds a cycle")


def test_the_codemod_package_has_no_import_cycle() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_graph_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The detector finds a cycle closed by an import inside a function, through a
    relative import and through a package ``__init__``."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from pkg.sub import b\n")
    (package / "a.py").write_text("def f():\n    from .sub.b import g\n")
    (package / "sub" / "b.py").write_text("from ..a import f\n")
    (package / "c.py").write_text("import pkg.a\n")
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg", "pkg.sub", "pkg.sub.b"}
    assert graph["pkg.sub"] == {"pkg", "pkg.sub.b"}
    assert graph["pkg.c"] == {"pkg", "pkg.a"}
    assert find_cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.a"]]
