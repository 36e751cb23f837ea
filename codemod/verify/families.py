"""Which classes a conversion converted, read from the converted tree itself.

``apply`` writes one runtime module per family (``<root>_features.py`` or
``param_features.py``), whose ``Features`` class names every former class by its qualified
name. Those names, with the runtime module's path, give the family modules, the top
package and the import root of both trees (the original is laid out as the converted
one). Classes of those modules that derive from ``Parameter`` but have no feature tag
(kept whole, refused) are part of the family too: their ``isinstance`` answers are
compared as well.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from codemod.runtime.emit import features_members, is_generated
from codemod.verify.parsed import parse_file


class VerifyUsageError(Exception):
    """The two trees cannot be verified (no runtime module, different layouts...)."""


@dataclass
class FamilyClass:
    """One class of a converted family."""

    name: str
    module: str
    #: The ``Features`` member (None for a class kept whole, which has none).
    feature: str | None
    #: The runtime module defining that member.
    runtime_module: str | None

    @property
    def key(self) -> str:
        """``module.Name``: two families may each have a class of the same name."""
        return f"{self.module}.{self.name}"


@dataclass
class Families:
    """The converted families of a pair of trees."""

    #: The top package both trees define (``vllm``).
    package: str
    original_package_dir: Path
    converted_package_dir: Path
    classes: list[FamilyClass] = field(default_factory=list)
    runtime_modules: list[str] = field(default_factory=list)

    @property
    def modules(self) -> list[str]:
        """The modules defining the family classes, in order of first appearance."""
        return list(dict.fromkeys(cls.module for cls in self.classes))


def _runtime_files(converted: Path) -> list[Path]:
    """Every runtime module ``apply`` wrote under ``converted``."""
    found = []
    for path in sorted(converted.rglob("*features.py")):
        if "__pycache__" in path.parts:
            continue
        try:
            head = path.read_text("utf-8", errors="replace")[:400]
        except OSError:
            continue
        if is_generated(head):
            found.append(path)
    return found


def module_path(package_dir: Path, module: str) -> Path | None:
    """The file of dotted ``module`` in the tree whose top package lives in ``package_dir``."""
    rel = module.split(".")[1:]
    base = package_dir.joinpath(*rel) if rel else package_dir
    for candidate in (base.with_suffix(".py") if rel else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def _package_dir(runtime_path: Path, runtime_module: str) -> Path:
    """The top package's directory, from a runtime module's path and dotted name."""
    depth = runtime_module.count(".")
    return runtime_path.parents[depth - 1] if depth else runtime_path.parent


def _kept_classes(path: Path, module: str, known: set[str]) -> list[FamilyClass]:
    """Classes of ``path`` deriving from ``Parameter`` or a family class, lacking a tag."""
    tree = parse_file(path)
    if tree is None:
        return []
    kept = []
    family = set(known)
    for stmt in tree.body:
        if not isinstance(stmt, ast.ClassDef) or stmt.name in known:
            continue
        bases = {base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                 for base in stmt.bases}
        if bases & (family | {"Parameter"}):
            kept.append(FamilyClass(stmt.name, module, None, None))
            family.add(stmt.name)
    return kept


def _runtime_module_name(path: Path, qualified: str) -> str | None:
    """The dotted name of runtime module ``path``, one of whose members is ``qualified``:
    beside the member's module, or inside it when that module is a package."""
    module = qualified.rpartition(".")[0]
    for candidate in (f"{module.rpartition('.')[0]}.{path.stem}".lstrip("."),
                      f"{module}.{path.stem}"):
        if candidate.count(".") > len(path.parents) - 1:
            continue
        if module_path(_package_dir(path, candidate), candidate) == path:
            return candidate
    return None


def find_families(original: Path, converted: Path) -> Families:
    """The converted families of ``converted`` (a converted copy of ``original``)."""
    original, converted = original.resolve(), converted.resolve()
    for path in (original, converted):
        if not path.is_dir():
            raise VerifyUsageError(f"{path} is not a directory")
    runtimes = _runtime_files(converted)
    if not runtimes:
        raise VerifyUsageError(f"{converted} holds no runtime module written by `codemod apply` "
                               "(nothing was converted there)")
    families: Families | None = None
    for path in runtimes:
        members = features_members(ast.parse(path.read_text("utf-8")))
        if not members:
            continue
        runtime_module = _runtime_module_name(path, next(iter(members.values())))
        if runtime_module is None:
            continue
        package_dir = _package_dir(path, runtime_module)
        package = runtime_module.split(".")[0]
        if families is None:
            original_dir = original / package_dir.relative_to(converted) \
                if package_dir.is_relative_to(converted) else original
            families = Families(package, original_dir, package_dir)
        families.runtime_modules.append(runtime_module)
        for feature, qualified in members.items():
            module, _, name = qualified.rpartition(".")
            families.classes.append(FamilyClass(name, module, feature, runtime_module))
    if families is None:
        raise VerifyUsageError(f"the runtime modules under {converted} name no class")
    known = {cls.name for cls in families.classes}
    for module in families.modules:
        found = module_path(families.original_package_dir, module)
        if found is None:
            raise VerifyUsageError(f"{module} is not in {families.original_package_dir}: "
                                   "give the original tree the converted one was made from")
        families.classes.extend(_kept_classes(found, module, known))
    return families
