"""Import ``libcst.matchers`` without the class docstrings ``dataclasses`` writes for it.

``libcst.matchers`` (which ``libcst.codemod`` and so every conversion needs) defines one
frozen dataclass per node type, ~170 of them, none with a docstring. For each,
``dataclasses`` writes one from ``inspect.signature(cls)``, whose text spells out every
field's annotation (unions of matcher types, each rendered by ``typing``): about a third
of the module's import, ~0.08 s of CPU on the engine's serial path before any file is
read. ``install`` arranges that while that one module runs, such a class gets the
docstring of an empty signature (``"Name()"`` instead of ``"Name(value: ... )"``).
Nothing else differs: the classes, their fields, ``__init__``, ``__eq__``, what they
match. Dataclasses of any other module, made meanwhile, get their usual docstring.

Nothing is imported by ``install``: it adds a finder to ``sys.meta_path`` that acts
when (and if) ``libcst.matchers`` is first imported, so a command that never loads
LibCST (``check`` answered from its cache) pays nothing. Where the standard finders do
not give the module a loader with ``exec_module``, or ``dataclasses`` no longer asks
``inspect`` for the signature, the import is the ordinary one.
"""

from __future__ import annotations

import dataclasses
import importlib.machinery
import inspect
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

#: The module whose dataclasses get empty-signature docstrings.
TARGET = "libcst.matchers"

#: The name under which ``dataclasses`` holds the ``inspect`` module it asks.
_INSPECT = "inspect"

_LOCK = threading.Lock()


class _SignaturesOfOthers:
    """``inspect`` as ``dataclasses`` sees it while ``TARGET`` runs: an empty
    signature for a class of ``TARGET``, the real one for anything else."""

    def __getattr__(self, name: str) -> Any:
        return getattr(inspect, name)

    @staticmethod
    def signature(obj: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
        if getattr(obj, "__module__", None) == TARGET:
            return inspect.Signature()
        return inspect.signature(obj, *args, **kwargs)


def _run_quietly(exec_module: Callable[[ModuleType], None], module: ModuleType) -> None:
    """``exec_module(module)`` with ``dataclasses`` asking ``_SignaturesOfOthers``."""
    with _LOCK:
        real = getattr(dataclasses, _INSPECT, None)
        if real is not inspect:  # not the module this was written against: no change
            exec_module(module)
            return
        setattr(dataclasses, _INSPECT, _SignaturesOfOthers())
        try:
            exec_module(module)
        finally:
            setattr(dataclasses, _INSPECT, real)


class QuietMatchersFinder:
    """A ``sys.meta_path`` finder: finds ``TARGET`` as the standard finders do, and has
    its loader run it with ``_run_quietly``; every other module is left to the other
    finders. (Not an ``importlib.abc.MetaPathFinder``: importing that module would cost
    ``check`` answered from its cache ~5 ms.)"""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        loader = spec.loader if spec is not None else None
        exec_module = getattr(loader, "exec_module", None)
        if spec is None or exec_module is None:
            return None  # the other finders answer, as without this one
        # The loader is this module's own (one per spec): only its run is wrapped.
        loader.exec_module = lambda module: _run_quietly(exec_module, module)  # type: ignore[method-assign,union-attr]
        return spec


def install() -> None:
    """Add the finder in front of ``sys.meta_path`` (once; not if already imported)."""
    if TARGET in sys.modules or any(isinstance(f, QuietMatchersFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, QuietMatchersFinder())
