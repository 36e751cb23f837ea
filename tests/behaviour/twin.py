"""Load two copies of the ``minivllm`` fixture package side by side in one process.

Behaviour tests compare the original engine with its converted copy: both must be
importable at once, and each copy's own ``from minivllm.distributed import ...`` must bind
to *its* ``distributed`` module (so that simulated tensor-parallel ranks are per copy).

How: the package is imported from the first directory under its real name, its
``sys.modules`` entries are taken out (the module objects live on in an ``EngineCopy``),
and then the second directory is imported the same way. The second copy stays
registered under the real names until the twin is closed, because ``pickle`` looks
functions and classes up by ``__module__`` in ``sys.modules``: the copy that must
round-trip through pickle (the converted one) is the one to load second.

``codemod verify`` does the same on any tree (``codemod/verify/importer.py``, which also
stubs the rest of the engine and keeps each copy out of ``sys.modules`` until its code
runs); this helper imports whole fixture packages for real, as the behaviour tests need,
and shares its clean-up of torch.compile's module cache.

This module deliberately does not import torch.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import shutil
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from codemod.verify.importer import forget_compiled_module_names

PACKAGE = "minivllm"
SUBMODULES = ("minivllm.distributed", "minivllm.model_executor.parameter")
TP_SIZES = (1, 2, 4)


def stub_weight_loader(param, loaded_weight):
    """Stand-in for a model's weight loader.

    Module level, so that it pickles by reference and compares equal across copies.
    """
    param.data.copy_(loaded_weight)


@dataclass
class EngineCopy:
    """One imported copy of the package: its root directory and its module objects."""

    root: Path
    modules: dict[str, types.ModuleType] = field(default_factory=dict)
    package: str = PACKAGE

    def module(self, name: str) -> types.ModuleType:
        """The copy's module ``name`` (full dotted name, e.g. ``minivllm.distributed``)."""
        return self.modules[name]

    @property
    def parameter(self) -> types.ModuleType:
        return self.modules[f"{self.package}.model_executor.parameter"]

    @property
    def distributed(self) -> types.ModuleType:
        return self.modules[f"{self.package}.distributed"]

    def set_tp(self, rank: int, size: int) -> None:
        """Move this copy to simulated tensor-parallel rank ``rank`` of ``size``."""
        self.distributed.set_tensor_parallel(rank, size)


@dataclass
class Twin:
    """The original (``before``) and converted (``after``) copies, loaded together."""

    before: EngineCopy
    after: EngineCopy
    _saved: dict[str, types.ModuleType] = field(default_factory=dict, repr=False)
    _closed: bool = field(default=False, repr=False)

    def set_tp(self, rank: int, size: int) -> None:
        """Put both copies on simulated rank ``rank`` of a group of ``size``."""
        self.before.set_tp(rank, size)
        self.after.set_tp(rank, size)

    def close(self) -> None:
        """Unregister the copy still in ``sys.modules`` and restore what was there before."""
        if self._closed:
            return
        self._closed = True
        for name, module in self.after.modules.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
        _purge(self.after.package)
        sys.modules.update(self._saved)

    def __enter__(self) -> Twin:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _package_entries(package: str) -> dict[str, types.ModuleType]:
    return {
        name: module
        for name, module in sys.modules.items()
        if name == package or name.startswith(package + ".")
    }


def _purge(package: str) -> dict[str, types.ModuleType]:
    entries = _package_entries(package)
    for name in entries:
        del sys.modules[name]
    return entries


def _is_under(path: str | None, root: Path) -> bool:
    if path is None:
        return False
    try:
        Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _check_bindings(copy: EngineCopy, package: str) -> None:
    """Fail loudly if a module of ``copy`` uses a function that came from another copy."""
    owned = {id(module.__dict__) for module in copy.modules.values()}
    for module in copy.modules.values():
        for attr, value in vars(module).items():
            # A decorated function (``@torch.no_grad()``, ``functools.wraps``) carries the
            # wrapped one's ``__module__`` but the decorator's globals: check the original.
            try:
                value = inspect.unwrap(value) if callable(value) else value
            except ValueError:  # a wrapper loop (e.g. a Mock): not a function of ours
                continue
            if isinstance(value, types.FunctionType) and str(
                getattr(value, "__module__", "")
            ).startswith(package):
                if id(value.__globals__) not in owned:
                    raise ImportError(
                        f"{module.__name__}.{attr} of {copy.root} is bound to another copy"
                    )


def import_copy(
    root: Path | str, submodules: Iterable[str] = SUBMODULES, package: str = PACKAGE
) -> EngineCopy:
    """Import ``package`` from directory ``root``; leave its modules in ``sys.modules``.

    Whatever was registered under ``package`` before is dropped first (callers save it).
    Bytecode is not written, so the imported trees stay exactly as they were.
    """
    root = Path(root)
    _purge(package)
    entry = str(root)
    sys.path.insert(0, entry)
    saved_flag = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        importlib.invalidate_caches()
        importlib.import_module(package)
        for name in submodules:
            importlib.import_module(name)
    finally:
        sys.dont_write_bytecode = saved_flag
        sys.path.remove(entry)
    copy = EngineCopy(root=root, modules=_package_entries(package), package=package)
    for name, module in copy.modules.items():
        origin = getattr(module, "__file__", None)
        if origin is not None and not _is_under(origin, root):
            raise ImportError(f"{name} was imported from {origin}, not from {root}")
    _check_bindings(copy, package)
    return copy


@contextlib.contextmanager
def open_copy(
    root: Path | str, submodules: Iterable[str] = SUBMODULES, package: str = PACKAGE
) -> Iterator[EngineCopy]:
    """Import one copy for the duration of a ``with`` block, then restore ``sys.modules``."""
    saved = _purge(package)
    try:
        yield import_copy(root, submodules, package)
    finally:
        _purge(package)
        sys.modules.update(saved)


def load_twin(
    before_root: Path | str,
    after_root: Path | str,
    submodules: Iterable[str] = SUBMODULES,
    package: str = PACKAGE,
) -> Twin:
    """Import both copies; ``after`` stays registered under the real names (see module doc).

    Use as a context manager, or call ``close()``, to restore ``sys.modules``.
    """
    submodules = tuple(submodules)
    forget_compiled_module_names()
    saved = _purge(package)
    try:
        before = import_copy(before_root, submodules, package)
        _purge(package)
        after = import_copy(after_root, submodules, package)
    except BaseException:
        _purge(package)
        sys.modules.update(saved)
        raise
    return Twin(before=before, after=after, _saved=saved)


def tp_grid(sizes: Iterable[int] = TP_SIZES) -> Iterator[tuple[int, int]]:
    """Every (rank, size) position of the simulated tensor-parallel groups ``sizes``."""
    for size in sizes:
        for rank in range(size):
            yield rank, size


def each_tp_rank(
    *copies: EngineCopy | Twin, sizes: Iterable[int] = TP_SIZES
) -> Iterator[tuple[int, int]]:
    """Put every copy on each (rank, size) in turn and yield it; back to rank 0 of 1 after.

    Usage: ``for rank, size in each_tp_rank(twin): ...``.
    """
    try:
        for rank, size in tp_grid(sizes):
            for copy in copies:
                copy.set_tp(rank, size)
            yield rank, size
    finally:
        for copy in copies:
            copy.set_tp(0, 1)


def copy_tree(source: Path | str, destination: Path | str) -> Path:
    """Copy a fixture tree, leaving out bytecode caches."""
    destination = Path(destination)
    shutil.copytree(
        source, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return destination


def snapshot(root: Path | str) -> dict[str, bytes]:
    """Every file under ``root`` (bytecode caches left out), as relative path -> bytes."""
    root = Path(root)
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def runtime_of(module: types.ModuleType) -> types.SimpleNamespace:
    """The runtime module whose helpers a converted module uses (``apply`` writes it beside
    the family's root module), read through ``init_param_kind``'s globals, so that it is
    the one of the same engine copy."""
    return types.SimpleNamespace(**module.init_param_kind.__globals__)

