"""A converted class imported from a module the tree does not hold under that name refuses
the class.

What it finds
    The rewrites know a file's import of a class by the module names the run gives the
    tree's files (their paths below the import root, ``analysis/roots.py``). When the tree
    is reached under another name than the one its files import each other by, those
    imports name no module of the run and are taken for imports of some other object:
    ``isinstance(p, Row)`` after ``from pkg.params import Row`` stays as it is while
    ``Row`` becomes a function. That happens when the tree is given through a symlink
    (``codemod apply pkglink``: the files are ``pkglink.*``, they import ``pkg.*``), when a
    symlinked subpackage is read under its target's name (``from ..params import Row``
    then climbs above the target's top package), or when ``[tool.codemod] src`` names the
    wrong directory (``src.eng.params`` for ``eng.params``). Each such import of a
    converted class's name is reported as an escaped use of the classes of that name,
    which the planner refuses, naming the line.
Reported
    ``from M import X`` (at any depth) where ``X`` is the name of a converted class and
    either the import is relative and climbs above the file's top package (Python
    itself could not run it under the file's name), or ``M`` is a second name of a module
    the run reads once (a symlinked directory or file inside the tree: ``pk.legacy.params``
    for ``pk.sub.params``), or ``M`` is no module of the tree
    yet one of the tree's modules ends with ``.M`` (``src.eng.params`` for ``eng.params``),
    is how ``M`` ends (``layers.params`` for ``eng.layers.params``: a namespace package's
    top directory given as the path) or differs from ``M`` only in its first part
    (``pkglink.params`` for ``pkg.params``).
Not reported
    Imports from modules outside the tree with any other name (``from vllm.x import
    ModelWeightParameter`` in an engine that defines its own): those are other classes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from codemod.analysis.names import import_from_source, module_name_for, statements_in_scope
from codemod.analysis.source_lines import line_text
from codemod.planning.safety_net import Escape
from codemod.prefilters import mentioned


class TreeModules:
    """The module names the run gives the tree's files, and which of them an outside
    module name may stand for (``likely``)."""

    def __init__(self, modules: Iterable[str], aliases: dict[str, str] | None = None) -> None:
        self.modules = frozenset(modules)
        #: A second name of a module of the run (through a symlink) -> its name.
        self.aliases = dict(aliases or {})
        self._sorted = sorted(self.modules)
        self._by_rest: dict[str, str] = {}
        for module in self._sorted:
            head, dot, rest = module.partition(".")
            if dot:
                self._by_rest.setdefault(rest, module)

    def real_name(self, module: str) -> str | None:
        """The name the run gives the module ``module`` is a second name of (through a
        symlinked file, or below a symlinked package), else None."""
        if module in self.aliases:
            return self.aliases[module]
        for alias, real in self.aliases.items():
            if module.startswith(f"{alias}."):
                return real + module[len(alias):]
        return None

    def likely(self, module: str) -> str | None:
        """The tree's module that ``module`` (not one of the tree's) may name: one that
        ends with ``.module`` (the tree is named from a directory above its root), that
        ``module`` ends with (from a directory below it: a namespace package's top
        directory given as the path), or that differs from it only in its first part
        (through a link); else None."""
        if not module or module in self.modules:
            return None
        suffix = "." + module
        for candidate in self._sorted:
            if candidate.endswith(suffix):
                return candidate
        head, dot, rest = module.partition(".")
        if not dot:
            return None
        while rest:
            if rest in self.modules:
                return rest
            rest = rest.partition(".")[2]
        return self._by_rest.get(module.partition(".")[2])


def misnamed_imports(tree: ast.Module, path: Path, text: str,
                     classes_named: dict[str, list[str]], modules: TreeModules) -> list[Escape]:
    """Each import in ``tree`` (the file ``path``, whose text is ``text``) of a converted
    class's name (``classes_named``: the qualified names of the classes of each name)
    that names no module of the tree as its files are named (see the module doc)."""
    module = module_name_for(path)
    is_package = path.name == "__init__.py"
    package_depth = len(module.split(".")) - (0 if is_package else 1) if module else 0
    escapes: list[Escape] = []
    for node, _top in statements_in_scope(tree):
        if modules.aliases and isinstance(node, (ast.Import, ast.ImportFrom)):
            through = _through_second_names(node, module, is_package, text, classes_named, modules)
            if through:
                escapes.extend(through)
                continue
        if not isinstance(node, ast.ImportFrom):
            continue
        wanted = [alias.name for alias in node.names if alias.name in classes_named]
        if not wanted:
            continue
        if node.level:
            if node.level <= package_depth:
                continue
            how = (f"imported by a relative import that climbs above the top package of "
                   f"{module or path.name} (the name this run gives the file): the file is "
                   "imported under another name (a symlinked directory?), where the rewrites "
                   "cannot follow the import")
        else:
            source = import_from_source(node, module, is_package)
            likely = modules.likely(source)
            if likely is None:
                continue
            how = (f"imported from {source}, which is no module of the tree as this run names "
                   f"its files ({likely} is): the files import each other under other names "
                   "(the tree given through a symlink or from a namespace package's top "
                   "directory, or a wrong src setting), where the rewrites cannot follow the "
                   "import; run on the directory the imports start from, or set src")
        code = line_text(text, node.lineno)
        for name in wanted:
            for qualname in classes_named.get(name, ()):
                escapes.append((node.lineno, node.col_offset, qualname, code, how))
    return escapes


def _through_second_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
                          text: str, classes_named: dict[str, list[str]],
                          modules: TreeModules) -> list[Escape]:
    """The escapes of an import that reaches a module by a second name (``modules.aliases``:
    a symlink inside the tree) when that module, or a module below it, defines a converted
    class the file names: ``from pk.legacy.params import X``, ``import pk.legacy.params
    as m`` then ``m.X``, ``from pk.legacy import params``, ``from .legacy.params import X``.
    The rewrites know each module by the name the run gives its file, so a use reached
    through the other name would stay a class-style use of a function."""
    if isinstance(node, ast.Import):
        reached = [alias.name for alias in node.names]
    else:
        source = import_from_source(node, module, is_package)
        # A submodule it imports (``from pk.legacy import params``) before the package.
        reached = [*(f"{source}.{alias.name}" for alias in node.names if source), source]
    escapes: list[Escape] = []
    refused: set[str] = set()
    named: frozenset[str] | None = None
    code = line_text(text, node.lineno)
    for name in reached:
        real = modules.real_name(name)
        if real is None:
            continue
        if named is None:
            named = mentioned(text, frozenset(classes_named))
        for class_name in sorted(named):
            defined = [q for q in classes_named[class_name] if q not in refused
                       and (q.rpartition(".")[0] == real or q.startswith(f"{real}."))]
            if not defined:
                continue
            refused.update(defined)
            how = (f"imported through {name}, a second name of {real} (a symbolic link inside "
                   "the tree), where the rewrites cannot follow it: they know each module by "
                   f"one name; import it by {real}")
            escapes.extend((node.lineno, node.col_offset, q, code, how) for q in defined)
    return escapes
