"""After migration: what ``codemod apply`` left in a module it converted (factories, kept
classes), and the names whose class-style use ``codemod check`` reports (``Target``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from codemod.planning.plan import FEATURES_NAME
from codemod.runtime.emit import features_members

#: A runtime module ``apply`` wrote defines ``class Features:`` at the top level.
FEATURES_CLASS = re.compile(rf"^class\s+{FEATURES_NAME}\s*[:(]", re.MULTILINE)


@dataclass(frozen=True)
class Target:
    """A name whose class-style use may be a finding."""

    #: Before migration: "class" (a Parameter class ``apply`` converts) or "kept" (a class
    #: ``apply`` keeps but whose converted subclasses share its feature: a *shadow*).
    #: After: "factory" (a function ``apply`` made) or "shadow" (a kept class).
    kind: str
    name: str
    module: str
    #: Its ``Features`` member (the class name, after any ``feature-prefix``).
    feature: str
    #: The runtime module holding ``Features`` and the helpers (after migration; "" when
    #: the target was recognised without one: they are then in ``module``).
    runtime: str = ""

    @property
    def helpers_module(self) -> str:
        """Where ``Features``, ``has_param_feature`` and ``param_kind_is`` are imported from."""
        return self.runtime or self.module


def converted_names(tree: ast.Module, runtime: str,
                    defined_in: Callable[[str], ast.Module | None]) -> list[Target]:
    """What ``apply`` left behind, read from a runtime module it wrote (``runtime``, its
    name): a factory or a kept class per member of its ``Features`` class.

    Each member's value is the former class's qualified name; the module it names
    (``defined_in`` gives its tree) defines a function of that name (the factory) or, for a
    class ``apply`` kept as a shadow, the class itself. A member that matches neither is
    not ``apply``'s.
    """
    out = []
    for feature, qualname in sorted(features_members(tree).items()):
        if not qualname:
            continue
        module, _, name = qualname.rpartition(".")
        there = defined_in(module)
        if there is None:
            continue
        for stmt in there.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                out.append(Target("factory", name, module, feature, runtime))
                break
            if isinstance(stmt, ast.ClassDef) and stmt.name == name:
                out.append(Target("shadow", name, module, feature, runtime))
                break
    return out


#: A wrap function ``apply`` writes next to each factory.
WRAP_DEF = re.compile(r"^def\s+wrap_\w+\s*\(", re.MULTILINE)


def factories_in(tree: ast.Module, module: str) -> list[Target]:
    """What ``apply`` left in a module, recognised without its ``Features`` class: a
    module-level ``def X`` that builds a ``Parameter(...)`` and calls a module-level
    ``wrap_*`` function of the module (each factory calls the wraps of its MRO)."""
    functions = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    wraps = {name for name in functions if name.startswith("wrap_")}
    out = []
    for name, node in sorted(functions.items()):
        if name in wraps:
            continue
        called = {_call_name(n) for n in ast.walk(node) if isinstance(n, ast.Call)}
        if called & wraps and any(c and c.endswith("Parameter") for c in called):
            out.append(Target("factory", name, module, name))
    return out


def _call_name(call: ast.Call) -> str | None:
    """The last name of what ``call`` calls (``f`` for ``f(...)`` and ``m.f(...)``)."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
