"""After migration: what ``codemod apply`` left in a module it converted (factories, kept
classes), and the names whose class-style use ``codemod check`` reports (``Target``)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from codemod.planning.plan import FEATURES_NAME

#: A module ``apply`` converted defines ``class Features:`` at the top level.
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


def converted_names(tree: ast.Module, module: str) -> list[Target]:
    """What ``apply`` left in a module: a factory or a kept class per ``Features`` member.

    Each member's value is the former class's qualified name; the module defines a
    function of that name (the factory) or, for a class ``apply`` kept as a shadow, the
    class itself. A ``Features`` class whose members match neither is not ``apply``'s.
    """
    features: dict[str, str] = {}  # member -> former class name
    functions: set[str] = set()
    classes: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef) and stmt.name != FEATURES_NAME:
            classes.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            for member in stmt.body:
                if isinstance(member, ast.Assign) and len(member.targets) == 1 \
                        and isinstance(member.targets[0], ast.Name):
                    value = member.value
                    text = value.value if isinstance(value, ast.Constant) else None
                    name = member.targets[0].id
                    features[name] = text.rpartition(".")[2] \
                        if isinstance(text, str) and text else name
    out = []
    for member, name in sorted(features.items()):
        if name in functions:
            out.append(Target("factory", name, module, member))
        elif name in classes:
            out.append(Target("shadow", name, module, member))
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
