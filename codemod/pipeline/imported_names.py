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
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from codemod.analysis.names import import_from_source, module_name_for
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

    def _star_importers(self) -> dict[str, frozenset[Path]]:
        """Module -> the files that import ``*`` from it (read from the statements'
        text: ``from m import *``, relative ones resolved as the import does)."""
        if self._stars is None:
            stars: dict[str, set[Path]] = {}
            for path, text in self._texts.items():
                if not star_import(text):
                    continue
                module = module_name_for(path)
                for match in _STAR_FROM.finditer(text):
                    dots, name = match.group(1), match.group(2) or None
                    node = ast.ImportFrom(module=name, names=[], level=len(dots))
                    source = import_from_source(node, module, path.name == "__init__.py")
                    if source:
                        stars.setdefault(source, set()).add(path)
            self._stars = {k: frozenset(v) for k, v in stars.items()}
        return self._stars


#: What a file that may import any module reads ``.name`` from (``kept``).
ANY_MODULE = "*"
#: A call that imports a module named by a string (absolute, relative or computed).
_IMPORTING_CALL = re.compile(r"\b(?:import_module|__import__)\s*\(")


def _imported_by_call(text: str) -> frozenset[str]:
    """``{ANY_MODULE}`` when ``text`` calls ``import_module`` or ``__import__``, whose
    argument may name any module (``import_module("pkg.a").name``, ``import_module(".a",
    "pkg")``); else none."""
    return frozenset({ANY_MODULE}) if _IMPORTING_CALL.search(text) is not None else frozenset()


#: ``from m import *`` (also ``from . import *``, ``from .m import (*)``), over blanks and
#: line continuations; group 1 the leading dots, group 2 the module.
_STAR_FROM = re.compile(r"(?m)^[ \t]*from[ \t\\]+(\.*)[ \t]*([\w.]*)[ \t\\]+import[ \t\\]*\(?[ \t\\]*\*")
