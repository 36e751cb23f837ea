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


def direct_imports(package: str, package_dir: Path, modules: Iterable[str]) -> set[str]:
    """Modules of ``package`` (files in ``package_dir``) that ``modules`` import directly,
    minus those from which they import a tensor-parallel getter."""
    found: set[str] = set()
    driven: set[str] = set()
    for module in modules:
        path = module_path(package_dir, module)
        if path is None:
            continue
        try:
            tree = ast.parse(path.read_text("utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node.module, node.level, module, is_package)
                if source is None:
                    continue
                found.add(source)
                for alias in node.names:
                    found.add(f"{source}.{alias.name}")
                    if tp_getter_kind(alias.name):
                        driven.add(source)
    inside = {name for name in found
              if (name == package or name.startswith(package + "."))
              and module_path(package_dir, name) is not None
              and name != package}
    return inside - driven
