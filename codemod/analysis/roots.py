"""Import roots: the one rule that turns a file's path into its dotted module name.

A module's name is its path relative to its *import root*, the directory Python finds
its top package in (the one on ``sys.path``). The root is, in this order:

1. the longest configured ``[tool.codemod] src`` directory holding the file (as ruff's
   ``src`` setting does), when one is configured and holds it;
2. the parent of the highest directory above the file that holds ``__init__.py``,
   searching upward until a project boundary (a directory with ``pyproject.toml``,
   ``setup.py``, ``setup.cfg`` or ``.git``, which is never part of a package) or the
   filesystem root. Directories between the root and the file need no ``__init__.py``:
   they are namespace packages (PEP 420), as Python treats them;
3. else the walked directory holding the file (the tree ``codemod`` was given), or the
   file's own directory.

Paths are made absolute without following symlinks: a file reached through a
symlinked directory is named after where the link sits, as ``import`` names it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: Files that mark a project's top directory: no package extends above or into it.
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def working_directory() -> str:
    """The working directory as the shell spells it (``$PWD``, which keeps the symlinks
    it was entered through) when that is the same directory, else ``os.getcwd()``."""
    real = os.getcwd()
    logical = os.environ.get("PWD", "")
    key = (real, logical)
    if key not in _WORKING_DIRECTORY:
        same = False
        if os.path.isabs(logical) and logical != real:
            try:
                same = os.path.samefile(logical, real)
            except OSError:
                same = False
        _WORKING_DIRECTORY.clear()
        _WORKING_DIRECTORY[key] = os.path.normpath(logical) if same else real
    return _WORKING_DIRECTORY[key]


_WORKING_DIRECTORY: dict[tuple[str, str], str] = {}


def absolute(path: str | os.PathLike[str]) -> str:
    """``path`` absolute and without ``.``/``..`` parts, symlinks left as they are.

    A relative path is read against ``working_directory`` unless it climbs (``..``):
    the system reads that one from the physical directory, as the shell's ``ls ..``."""
    text = os.fspath(path)
    if os.path.isabs(text) or os.pardir in text.split(os.sep):
        return os.path.abspath(text)
    return os.path.normpath(os.path.join(working_directory(), text))


def is_under(path: str, directory: str) -> bool:
    """Whether the absolute ``path`` is ``directory`` or lies below it."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


@dataclass
class ImportRoots:
    """Where a run's module names are rooted: configured ``src`` roots and walked trees."""

    #: Absolute ``[tool.codemod] src`` directories (empty: infer roots from the tree).
    src: tuple[str, ...] = ()
    #: Absolute directories that were walked: the fallback root of files in no package.
    walked: tuple[str, ...] = ()
    _top_package: dict[str, str | None] = field(default_factory=dict, repr=False)
    _packages: dict[str, str] = field(default_factory=dict, repr=False)
    #: ``module_name`` by path as given (and, for a relative path, the working directory).
    _module_names: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, src: Iterable[str | os.PathLike[str]] = (),
           walked: Iterable[str | os.PathLike[str]] = ()) -> ImportRoots:
        return cls(tuple(absolute(p) for p in src), tuple(absolute(p) for p in walked))

    def top_package(self, directory: str) -> str | None:
        """The highest directory at or above ``directory`` (absolute) holding
        ``__init__.py``, below the nearest project boundary; None if there is none."""
        if directory not in self._top_package:
            highest: str | None = None
            if not any(os.path.exists(os.path.join(directory, m)) for m in PROJECT_MARKERS):
                parent = os.path.dirname(directory)
                above = self.top_package(parent) if parent != directory else None
                own = directory if os.path.isfile(os.path.join(directory, "__init__.py")) else None
                highest = above or own
            self._top_package[directory] = highest
        return self._top_package[directory]

    def _configured_root(self, path: str) -> str | None:
        """The longest ``src`` root holding ``path`` (a root holds itself)."""
        matching = [root for root in self.src if is_under(path, root)]
        return max(matching, key=len) if matching else None

    def _directory_root(self, directory: str) -> str:
        """The import root of the files directly in ``directory`` (absolute)."""
        configured = self._configured_root(directory)
        if configured is not None:
            return configured
        top = self.top_package(directory)
        if top is not None:
            return os.path.dirname(top)
        walked = [root for root in self.walked if is_under(directory, root)]
        return max(walked, key=len) if walked else directory

    def root_of(self, path: str | os.PathLike[str]) -> str:
        """The import root (absolute directory) of the file or directory ``path``."""
        full = absolute(path)
        return self._directory_root(full if os.path.isdir(full)
                                    else os.path.dirname(full))

    def _package(self, directory: str) -> str:
        """Dotted name of ``directory`` (absolute) below its import root ("" at the root)."""
        package = self._packages.get(directory)
        if package is None:
            rel = os.path.relpath(directory, self._directory_root(directory))
            package = "" if rel == os.curdir else rel.replace(os.sep, ".")
            self._packages[directory] = package
        return package

    def module_name(self, path: str | os.PathLike[str]) -> str:
        """Dotted module name of the file ``path`` (``pkg/__init__.py`` is ``pkg``)."""
        text = os.fspath(path)
        key = (text, "" if os.path.isabs(text) else working_directory())
        known = self._module_names.get(key)
        if known is None:
            known = self._module_names[key] = self._module_name(text)
        return known

    def _module_name(self, path: str) -> str:
        directory, name = os.path.split(absolute(path))
        package = self._package(directory)
        stem = name[:-3] if name.endswith(".py") else name
        if stem == "__init__":
            return package
        return f"{package}.{stem}" if package else stem

    def link_boundary(self, walked: str | os.PathLike[str]) -> str:
        """The directory a symlinked directory found under ``walked`` must point into to
        be entered: the project (nearest directory above with a project marker), else
        the import root of ``walked``."""
        start = absolute(walked)
        current = start
        while True:
            if any(os.path.exists(os.path.join(current, m)) for m in PROJECT_MARKERS):
                return current
            parent = os.path.dirname(current)
            if parent == current:
                return self.root_of(start) if os.path.isdir(start) else os.path.dirname(start)
            current = parent

    def in_package(self, path: str | os.PathLike[str]) -> bool:
        """Whether the file ``path`` lies in a package (a ``src`` root or an
        ``__init__.py`` above it), rather than being named after a walked tree."""
        full = absolute(path)
        directory = os.path.dirname(full)
        return (self._configured_root(directory) is not None
                or self.top_package(directory) is not None)

    def tree_of(self, path: str | os.PathLike[str]) -> str:
        """The whole tree a file or directory belongs to (absolute): the top-level
        package directory below its import root, or ``path`` itself when it is in none."""
        full = absolute(path)
        configured = self._configured_root(full)
        if configured is not None:
            if full == configured:
                return full
            first = os.path.relpath(full, configured).split(os.sep)[0]
            return os.path.join(configured, first)
        directory = full if os.path.isdir(full) else os.path.dirname(full)
        top = self.top_package(directory)
        return top if top is not None else full


_current = ImportRoots()


def current() -> ImportRoots:
    """The roots of the run in progress (inferred roots only, outside a run)."""
    return _current


@contextlib.contextmanager
def using(roots: ImportRoots) -> Iterator[ImportRoots]:
    """Make ``roots`` the run's roots (forked workers inherit them) for the duration."""
    global _current
    previous, _current = _current, roots
    try:
        yield roots
    finally:
        _current = previous


def module_files(paths: Iterable[Path], roots: ImportRoots | None = None) -> dict[str, Path]:
    """Module name -> file, for ``paths`` in order (the first file of a name wins)."""
    roots = roots or current()
    out: dict[str, Path] = {}
    for path in paths:
        out.setdefault(roots.module_name(path), path)
    return out
