"""Construction sites and method calls of the family classes, read from the original tree.

A construction site is a call ``X(...)`` (or ``mod.X(...)``) of a family class; its
keyword and positional argument expressions are kept as CPython ``ast`` nodes, for
``arguments`` to turn into small values. Method calls ``obj.m(k=...)`` record which
keywords the tree passes to each method name (``load_merged_column_weight(...,
shard_id=..., shard_offset=...)``), so that methods taking ``**kwargs`` get the same names.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class CallSite:
    """One ``X(...)`` call in the tree."""

    cls: str
    where: str
    args: list[ast.expr]
    keywords: dict[str, ast.expr]


@dataclass
class TreeSites:
    """What ``harvest`` found: construction sites per class, keyword sets per method."""

    constructions: dict[str, list[CallSite]] = field(default_factory=lambda: defaultdict(list))
    method_keywords: dict[str, set[tuple[str, ...]]] = field(
        default_factory=lambda: defaultdict(set))


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def harvest(package_dir: Path, class_names: set[str]) -> TreeSites:
    """Scan every ``.py`` file under ``package_dir`` that mentions a family class."""
    sites = TreeSites()
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not any(name in text for name in class_names):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        where = path.relative_to(package_dir.parent).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _callee(node.func)
            if name is None:
                continue
            named = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
            if name in class_names and not any(kw.arg is None for kw in node.keywords) \
                    and not any(isinstance(arg, ast.Starred) for arg in node.args):
                sites.constructions[name].append(
                    CallSite(name, f"{where}:{node.lineno}", list(node.args), named))
            elif isinstance(node.func, ast.Attribute) and named:
                sites.method_keywords[name].add(tuple(sorted(named)))
    return sites
