"""Which names of a module other files reach through it: an import a rewrite made unused
in its own file may still be what another file imports.

What it does
    ``ImportedNames.kept(path, module, name)`` answers whether another file of the tree
    imports ``name`` from ``module`` (``from module import name``), star-imports
    ``module``, or reads an attribute ``.name`` or spells ``"name"`` as a string (as
    text, a superset: ``getattr(m, "name")``, ``m.__dict__["name"]``) while importing
    ``module`` or a package above it (``m.name``, ``pkg.a.name``), or while calling
    ``import_module``/``__import__`` (``importlib.import_module("pkg.a").name``: any
    module, the name may be relative or computed).
Why
    ``apply`` drops the import of a converted class once the last use in its file was
    rewritten (``isinstance(p, Col)`` -> ``has_param_feature(p, Features.Col)``). When
    another module imports ``Col`` from that file (``from pkg.a import Col``, or ``from
    pkg import Col`` through an ``__init__.py``), dropping it broke that module's import.
Fix safety
    Every answer errs towards keeping: an import left in place that nothing uses any more
    is harmless, a dropped one that another file needs is a broken tree. A file that does
    not parse, and spells the name, keeps every import of that name. Only the spellings of
    the tree's Parameter classes are asked about. Not seen: a module reached without an
    import statement or a call that imports (``sys.modules["pkg.a"]`` read with a
    computed name).

The other way round: ``ImportedNames.star_held(module)``
    A module without ``__all__`` gives ``from module import *`` every public name it
    binds, so a name a rewrite adds to it (``Features``, ``has_param_feature``, a
    ``wrap_*`` function) lands in each module that star-imports it, and would replace
    that module's own ``Features`` (or be replaced by it); and a name the module's own
    star imports gave it would be replaced by the one a rewrite adds. ``star_held``
    names what star imports connect with the module: what its own star imports of the
    tree's modules give it; and, unless one literal ``__all__`` says what a star import
    of it gives, each star-importer's module-scope names (CPython's symbol table,
    ``global`` in a function included), what its other star imports give it, the names
    its own rewrite may add (its classes' generated functions; with two families or
    more, the runtime's helpers: ``gained_by_rewrites``), and so
    on through the modules star-importing it. The rewrites never add a name it lists
    (``transforms/refs.py`` imports a helper under another name; a generated function
    with such a name refuses its classes). Not known: the names a star import of a
    module outside the tree gives.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.names import import_from_source, literal_all, module_name_for, module_scope_bindings
from codemod.analysis.text_search import star_import, unjoined
from codemod.pipeline.indexing import file_import_targets


class ImportedNames:
    """What the files of a tree import from each other, asked name by name."""

    def __init__(self, texts: dict[Path, str], naming: Callable[[str], Iterable[Path]],
                 names: Iterable[str]) -> None:
        """``texts``: every file of the tree; ``naming(name)``: the files whose text
        names ``name`` as a word (the run's mention cache); ``names``: the names asked
        about (the spellings of the tree's Parameter classes): an import of any other
        name (``torch``, ``Parameter``) that a rewrite made unused is dropped as before."""
        self._texts = texts
        self._naming = naming
        self._names = frozenset(names)
        self._targets: dict[Path, list[tuple[str, str]] | None] = {}
        self._by_name: dict[str, tuple[dict[str, frozenset[Path]], dict[Path, frozenset[str]]]] = {}
        self._stars: dict[str, frozenset[Path]] | None = None
        #: Names a file that does not parse spells: it may import them from anywhere.
        self._unreadable_names: set[str] = set()
        self._paths: dict[str, Path] | None = None
        self._bindings: dict[str, frozenset[str] | None] = {}

    def prepared(self) -> tuple[object, ...]:
        """The answers for every name, computed now, as plain values (sent from the forked
        process that computed them to the parent, ``adopt``: the processes that convert
        files, forked after, inherit them instead of each searching the tree again)."""
        for name in sorted(self._names):
            self._of(name)
        return self._by_name, self._star_importers(), frozenset(self._unreadable_names)

    def adopt(self, answers: tuple[object, ...]) -> None:
        """Take the answers another process's ``prepared`` gave (the same texts and
        names): ``kept`` then searches nothing."""
        by_name, stars, unreadable = answers
        self._by_name = dict(by_name)  # type: ignore[call-overload]
        self._stars = stars  # type: ignore[assignment]
        self._unreadable_names = set(unreadable)  # type: ignore[call-overload]

    def kept(self, path: Path, module: str, name: str) -> bool:
        """Whether the binding of ``name`` in ``module`` (the file ``path``) is reached
        from another file, so its import must stay."""
        if name not in self._names:
            return False
        imported, read = self._of(name)
        stars = self._star_importers()
        if name in self._unreadable_names:
            return True
        if imported.get(f"{module}.{name}", frozenset()) - {path} or \
                stars.get(module, frozenset()) - {path}:
            return True
        # ``.name`` (or ``"name"``) read in a file that imports this module or a package
        # above it (``import pkg.a as m``, then ``m.name``; ``import pkg``, then
        # ``pkg.a.name``), or that may import any module (``ANY_MODULE``).
        return any(other != path and any(full in (module, ANY_MODULE) or module.startswith(full + ".")
                                         for full in modules)
                   for other, modules in read.items())

    def _of(self, name: str) -> tuple[dict[str, frozenset[Path]], dict[Path, frozenset[str]]]:
        """(``module.name`` -> the files that import it, the files that read ``.name`` ->
        the modules each imports)."""
        found = self._by_name.get(name)
        if found is None:
            attribute = re.compile(rf"\.\s*{re.escape(name)}(?!\w)|[\"']{re.escape(name)}[\"']")
            word = re.compile(rf"{re.escape(name)}(?!\w)")
            imported: dict[str, set[Path]] = {}
            read: dict[Path, frozenset[str]] = {}
            for path in self._naming(name):
                text = self._texts[path]
                if path not in self._targets:
                    self._targets[path] = file_import_targets(path, text)
                targets = self._targets[path]
                if targets is None:
                    if next(unjoined(text, word), None) is not None:
                        self._unreadable_names.add(name)  # it may import the name
                    continue
                if attribute.search(text) is not None:
                    read[path] = frozenset(full for _local, full in targets) | _imported_by_call(text)
                for _local, full in targets:
                    if full.rpartition(".")[2] == name:
                        imported.setdefault(full, set()).add(path)
            found = {k: frozenset(v) for k, v in imported.items()}, read
            self._by_name[name] = found
        return found

    def star_importers(self) -> dict[str, frozenset[Path]]:
        """Module -> the files that import ``*`` from it: one read of every text (~50 ms
        on vLLM 0.34), which ``check`` has a forked process make (``adopt_star_importers``)."""
        return self._star_importers()

    def star_importer_paths(self) -> frozenset[Path]:
        """Every file that imports ``*`` from a module of the tree."""
        return frozenset(path for paths in self._star_importers().values() for path in paths)

    def adopt_star_importers(self, stars: dict[str, frozenset[Path]]) -> None:
        """Take what another process's ``star_importers`` gave (the same texts)."""
        self._stars = stars

    def star_held(self, module: str, gained: Callable[[str], frozenset[str]] = lambda _: frozenset(),
                  ) -> dict[str, str]:
        """Each name a module that star imports connect with ``module`` holds -> where, in
        words (see the module doc): no name a rewrite adds to ``module`` may be one.
        ``gained``: the names a star-importer (a module name) may gain from its own
        rewrite (the runtime's helpers, ``gained_by_rewrites``; its classes' generated
        functions)."""
        found = {name: f"{source}, which {module} star-imports"
                 for source in self._star_sources_of(module) for name in self._star_exports(source, set())}
        seen = {module}
        pending = [module]
        while pending:
            exporter = pending.pop()
            if self._declared_all(exporter) is not None:
                continue  # its ``__all__`` decides what a star import of it gives
            for path in sorted(self._star_importers().get(exporter, ())):
                importer = module_name_for(path)
                held = (self._module_bindings(importer) or frozenset()) | gained(importer)
                for source in self._star_sources(path):
                    if source != exporter:
                        held |= self._star_exports(source, set())
                for name in held:
                    found.setdefault(name, f"{importer}, which star-imports {module}")
                if importer not in seen:
                    seen.add(importer)
                    pending.append(importer)
        return found

    def _star_exports(self, module: str, seen: set[str]) -> frozenset[str]:
        """The names ``from module import *`` gives, as far as known: its ``__all__``
        when a literal list or tuple says it, else its public module-scope names and
        what its own star imports give (a module outside the tree: none known)."""
        if module in seen or self._module_bindings(module) is None:
            return frozenset()
        seen.add(module)
        declared = self._declared_all(module)
        if declared is not None:
            return declared
        names = self._module_bindings(module) or frozenset()
        inherited = [self._star_exports(other, seen) for other in self._star_sources_of(module)]
        return frozenset(n for n in names if not n.startswith("_")).union(*inherited)

    def _star_sources_of(self, module: str) -> list[str]:
        path = self._module_paths().get(module)
        return self._star_sources(path) if path is not None else []

    def _star_sources(self, path: Path) -> list[str]:
        """The modules ``path`` star-imports."""
        return [source for source, importers in self._star_importers().items() if path in importers]

    def _module_paths(self) -> dict[str, Path]:
        if self._paths is None:
            self._paths = {module_name_for(path): path for path in sorted(self._texts)}
        return self._paths

    def _declared_all(self, module: str) -> frozenset[str] | None:
        """What ``module``'s ``__all__`` lists, when one literal says it (``names.literal_all``);
        else None (no ``__all__``, or one computed or bound where it may not run: the
        module's public names may all reach a star import)."""
        path = self._module_paths().get(module)
        return literal_all(self._texts[path]) if path is not None else None

    def _module_bindings(self, module: str) -> frozenset[str] | None:
        """The names ``module`` binds in its module scope (``module_scope_bindings``);
        None when it is no readable file of the tree."""
        if module not in self._bindings:
            path = self._module_paths().get(module)
            self._bindings[module] = None if path is None else module_scope_bindings(self._texts[path], str(path))
        return self._bindings[module]

    def _star_importers(self) -> dict[str, frozenset[Path]]:
        """Module -> the files that import ``*`` from it (``from m import *`` anywhere in
        the file, relative ones resolved as the import does), read from CPython's tree of
        each file whose text holds ``import *`` (from its lines, where it does not parse)."""
        if self._stars is None:
            stars: dict[str, set[Path]] = {}
            for path, text in self._texts.items():
                if not star_import(text):
                    continue
                module = module_name_for(path)
                try:
                    nodes = [node for node in ast.walk(python_trees.parse(text))
                             if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)]
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    # Read from the text (a line that starts with the statement) instead.
                    nodes = [ast.ImportFrom(module=match.group(2) or None, names=[], level=len(match.group(1)))
                             for match in _STAR_FROM.finditer(text)]
                for node in nodes:
                    source = import_from_source(node, module, path.name == "__init__.py")
                    if source:
                        stars.setdefault(source, set()).add(path)
            self._stars = {k: frozenset(v) for k, v in stars.items()}
        return self._stars


#: ``from m import *`` starting a line (also ``from . import *``, ``from .m import (*)``),
#: over blanks and line continuations; group 1 the leading dots, group 2 the module.
_STAR_FROM = re.compile(r"(?m)^[ \t]*from[ \t\\]+(\.*)[ \t]*([\w.]*)[ \t\\]+import[ \t\\]*\(?[ \t\\]*\*")
#: What a file that may import any module reads ``.name`` from (``kept``).
ANY_MODULE = "*"
#: A call that imports a module named by a string (absolute, relative or computed).
_IMPORTING_CALL = re.compile(r"\b(?:import_module|__import__)\s*\(")


def _imported_by_call(text: str) -> frozenset[str]:
    """``{ANY_MODULE}`` when ``text`` calls ``import_module`` or ``__import__``, whose
    argument may name any module (``import_module("pkg.a").name``, ``import_module(".a",
    "pkg")``); else none."""
    return frozenset({ANY_MODULE}) if _IMPORTING_CALL.search(text) is not None else frozenset()

