"""Import the family modules of two copies of one engine side by side, in one process.

Both trees define the same top package (``vllm``), so each copy is imported under the real
names and then taken out of ``sys.modules`` (its module objects live on in a
``TreeImport``); ``active()`` puts one copy back for as long as its code runs, so that
imports inside functions and ``pickle`` (which finds classes and functions by module name)
see that copy. Every module of the package is found by this module's finder:

* the *real* ones (the family modules, the runtime modules, and the modules of the tree
  that the family modules import directly) are executed from the copy's files; a directly
  imported module that fails to execute becomes a stub (noted), a family module that
  fails is reported by name;
* every other module of the package is a stub (``stubs.stub_module``), and so is a module
  from outside the tree that a tree module imports but that is not installed (an optional
  heavy dependency).

Bytecode is never written, so both trees stay exactly as they are on disk.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codemod.verify.stubs import TensorParallel, stub_module


def _in_package(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


class _StubLoader(importlib.abc.Loader):
    """Loads a stub module (``stubs.stub_module``)."""

    def __init__(self, directory: Path | None, position: TensorParallel) -> None:
        self.directory = directory
        self.position = position

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return stub_module(spec.name, self.directory, self.position)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _FallbackLoader(importlib.machinery.SourceFileLoader):
    """Executes a directly imported module; one that fails becomes a stub instead."""

    def __init__(self, fullname: str, path: str, tree: TreeImport) -> None:
        super().__init__(fullname, path)
        self.tree = tree

    def exec_module(self, module: types.ModuleType) -> None:
        try:
            super().exec_module(module)
            wanted = self.tree.optional.get(module.__name__, set())
            lacking = sorted(name for name in wanted if not hasattr(module, name))
            if lacking:  # e.g. they came from ``from <stub> import *``
                raise ImportError(f"lacks {', '.join(lacking)} once its imports are stubs")
        except Exception as exc:  # noqa: BLE001 - any failure: stand in for the module
            self.tree.fallbacks[module.__name__] = f"{type(exc).__name__}: {exc}"
            directory = Path(self.path).parent if self.path.endswith("__init__.py") else None
            stub = stub_module(module.__name__, directory, self.tree.position)
            keep = {"__name__", "__spec__", "__loader__", "__file__", "__path__", "__package__"}
            for name in list(module.__dict__):
                if name not in keep:
                    del module.__dict__[name]
            module.__dict__.update({k: v for k, v in stub.__dict__.items() if k not in keep})


class _TreeFinder(importlib.abc.MetaPathFinder):
    """Finds every module of one copy's package: real file, or stub."""

    def __init__(self, tree: TreeImport) -> None:
        self.tree = tree

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) \
            -> importlib.machinery.ModuleSpec | None:
        tree = self.tree
        if not _in_package(fullname, tree.package):
            return None
        tree.found.add(fullname)
        rel = fullname.split(".")[1:]
        base = tree.package_dir.joinpath(*rel)
        file = base.with_suffix(".py") if rel else None
        init = base / "__init__.py"
        source = file if file is not None and file.is_file() else init if init.is_file() else None
        directory = base if base.is_dir() else None
        if source is not None and fullname in tree.real:
            return importlib.util.spec_from_file_location(
                fullname, source, submodule_search_locations=[str(base)] if source == init else None)
        if source is not None and fullname in tree.optional:
            loader = _FallbackLoader(fullname, str(source), tree)
            return importlib.util.spec_from_file_location(
                fullname, source, loader=loader,
                submodule_search_locations=[str(base)] if source == init else None)
        parent = sys.modules.get(fullname.rpartition(".")[0])
        if source is None and directory is None and parent is not None \
                and not getattr(parent, "__verify_stub__", False):
            return None  # no such module in a real package: the import fails, as it would
        tree.stubbed.add(fullname)
        return importlib.machinery.ModuleSpec(
            fullname, _StubLoader(directory, tree.position), is_package=directory is not None)


class _MissingFinder(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: a module no other finder knows, imported by a module of
    the tree, is stubbed (an optional dependency that is not installed)."""

    def __init__(self, tree: TreeImport) -> None:
        self.tree = tree

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) \
            -> importlib.machinery.ModuleSpec | None:
        if not self._asked_by_tree():
            return None
        self.tree.missing.add(fullname)
        return importlib.machinery.ModuleSpec(
            fullname, _StubLoader(None, self.tree.position), is_package=True)

    def _asked_by_tree(self) -> bool:
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            if not name.startswith(("importlib", "_frozen_importlib", "codemod.verify")):
                return _in_package(name, self.tree.package)
            frame = frame.f_back  # type: ignore[assignment]
        return False


@dataclass
class TreeImport:
    """One copy of the package: where it lives, what is real, and its module objects."""

    package: str
    package_dir: Path
    real: set[str]
    #: Modules to execute for real if they can, with the names the families import.
    optional: dict[str, set[str]]
    position: TensorParallel
    modules: dict[str, types.ModuleType] = field(default_factory=dict)
    stubbed: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    #: Directly imported modules that failed to execute, and why (they are stubs now).
    fallbacks: dict[str, str] = field(default_factory=dict)
    #: Family modules that failed to import, and why.
    failures: dict[str, str] = field(default_factory=dict)
    #: Every module name of the package this copy's finder was asked for.
    found: set[str] = field(default_factory=set)

    @contextlib.contextmanager
    def active(self) -> Iterator[TreeImport]:
        """Register this copy's modules and finders for the duration of the block.

        Only the names this copy registered are swapped (a scan of all of ``sys.modules``
        per call would cost more than the cases); ``import_modules`` scans once."""
        saved = {name: sys.modules.pop(name) for name in self.modules.keys() | self.found
                 if name in sys.modules}
        missing_saved = {name: sys.modules[name] for name in self.missing if name in sys.modules}
        sys.modules.update(self.modules)
        finder, fallback = _TreeFinder(self), _MissingFinder(self)
        sys.meta_path.insert(0, finder)
        sys.meta_path.append(fallback)
        flag = sys.dont_write_bytecode
        sys.dont_write_bytecode = True
        try:
            yield self
        finally:
            sys.dont_write_bytecode = flag
            sys.meta_path.remove(finder)
            sys.meta_path.remove(fallback)
            self.modules = {name: sys.modules.pop(name) for name in self.modules.keys() | self.found
                            if name in sys.modules}
            for name in self.missing:
                sys.modules.pop(name, None)
            sys.modules.update(missing_saved)
            sys.modules.update(saved)

    def import_modules(self, names: Iterable[str]) -> dict[str, types.ModuleType]:
        """Import ``names`` (inside ``active()``); failures go to ``failures``."""
        imported: dict[str, types.ModuleType] = {}
        outside = _take(self.package)  # whatever another copy or the user left registered
        try:
            self._import(names, imported)
        finally:
            sys.modules.update(outside)
        return imported

    def _import(self, names: Iterable[str], imported: dict[str, types.ModuleType]) -> None:
        with self.active():
            importlib.invalidate_caches()
            for name in names:
                try:
                    imported[name] = importlib.import_module(name)
                except Exception as exc:  # noqa: BLE001 - reported by name
                    self.failures[name] = f"{type(exc).__name__}: {exc}"

    def module(self, name: str) -> types.ModuleType | None:
        return self.modules.get(name)


def _take(package: str) -> dict[str, types.ModuleType]:
    """Remove and return every ``sys.modules`` entry of ``package``."""
    taken = {name: module for name, module in sys.modules.items() if _in_package(name, package)}
    for name in taken:
        del sys.modules[name]
    return taken


def forget_compiled_module_names() -> None:
    """Drop what ``torch.compile`` caches by module name (Dynamo's ``_import_module``): a
    copy loaded under the same names as an earlier one would be traced with the earlier
    copy's modules. Nothing to do when torch's compiler was never imported."""
    convert = sys.modules.get("torch._dynamo.symbolic_convert")
    cached = getattr(convert, "_import_module", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()
