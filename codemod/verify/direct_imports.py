"""The modules of the tree that the family modules import directly.

Those are executed for real when they can be (their own imports are stubs), because a
family's methods often call helpers from them (``copy_weight_``, ``set_weight_attrs``) and
a stub would turn those calls into no-ops that hide differences. A module from which a
family imports a tensor-parallel getter stays a stub, so the verifier drives the rank.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from codemod.verify.families import module_path
from codemod.verify.parsed import parse_file
from codemod.verify.stubs import tp_getter_kind


def _absolute(module: str | None, level: int, importer: str, is_package: bool) -> str | None:
    """The absolute name of ``from <level dots><module> import``, inside ``importer``."""
    if level == 0:
        return module
    parts = importer.split(".")
    base = parts if is_package else parts[:-1]
    if level - 1 > len(base):
        return None
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def direct_imports(package: str, package_dir: Path, modules: Iterable[str]) -> dict[str, set[str]]:
    """Modules of ``package`` (files in ``package_dir``) that ``modules`` import directly,
    each with the names imported from it, minus those from which they import a
    tensor-parallel getter."""
    found: dict[str, set[str]] = {}
    driven: set[str] = set()
    for module in modules:
        path = module_path(package_dir, module)
        if path is None:
            continue
        tree = parse_file(path)
        if tree is None:
            continue
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found.setdefault(alias.name, set())
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node.module, node.level, module, is_package)
                if source is None:
                    continue
                names = found.setdefault(source, set())
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    if module_path(package_dir, f"{source}.{alias.name}") is not None:
                        found.setdefault(f"{source}.{alias.name}", set())
                    else:
                        names.add(alias.name)
                    if tp_getter_kind(alias.name):
                        driven.add(source)
    return {name: names for name, names in found.items()
            if name.startswith(package + ".") and name not in driven
            and module_path(package_dir, name) is not None}
