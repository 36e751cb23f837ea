"""Functions elsewhere in the tree that copy a parameter onto another tensor.

Besides class checks, ``apply`` rewrites code that copies a parameter's ``__dict__`` onto
another tensor (``t.__class__ = p.__class__; t.__dict__ = p.__dict__.copy()``) by adding a
runtime call after it (``rebind_param_methods(t)``) so that the copy's methods act on the
copy. Such a function (one that assigns ``__dict__`` or ``__class__`` in the original, or
calls a runtime function in the converted tree), outside the family and runtime modules,
rewritten or not, is driven when its module
can be imported (with the rest of the engine stubbed, as the family modules' direct
imports are) and it takes one required argument annotated as a tensor, ``Parameter`` or a
family class: ``cases`` calls it on every built parameter in each tree and compares the
returned tensor as a copy of the parameter (kinds, public attributes, data unless on the
``meta`` device, and that its methods act on it, not on the source).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from codemod.runtime.helpers import HAS_PARAM_FEATURE, PARAM_KIND_IS
from codemod.verify.families import Families
from codemod.verify.parsed import parse_file

#: Runtime functions a rewrite of a class check calls (not a change of behaviour to drive).
_CHECK_FUNCTIONS = {HAS_PARAM_FEATURE, PARAM_KIND_IS, "Features"}
_TENSOR_NAMES = {"Tensor", "Parameter"}


@dataclass
class RewrittenFunction:
    """A function copying a parameter (or calling the runtime), taking one tensor."""

    module: str
    name: str
    where: str


def _runtime_names(tree: ast.Module, runtime_modules: set[str]) -> set[str]:
    """Names the module imports from a runtime module (absolute imports, or relative ones
    whose last part names a runtime module's file)."""
    names = set()
    stems = {module.rpartition(".")[2] for module in runtime_modules}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None \
                and (node.module in runtime_modules or node.module.rpartition(".")[2] in stems):
            names |= {alias.asname or alias.name for alias in node.names}
    return names - _CHECK_FUNCTIONS


def _takes_one_tensor(function: ast.FunctionDef, classes: set[str]) -> bool:
    arguments = [*function.args.posonlyargs, *function.args.args]
    required = len(arguments) - len(function.args.defaults)
    if required != 1 or any(default is None for default in function.args.kw_defaults):
        return False
    annotation = arguments[0].annotation
    if annotation is None:
        return False
    named = {node.id if isinstance(node, ast.Name) else node.attr for node in ast.walk(annotation)
             if isinstance(node, (ast.Name, ast.Attribute))}
    return bool(named & (_TENSOR_NAMES | classes))


def _copies_a_dict(function: ast.FunctionDef) -> bool:
    """Whether ``function`` assigns some object's ``__dict__`` or ``__class__``."""
    return any(isinstance(target, ast.Attribute) and target.attr in ("__dict__", "__class__")
               for node in ast.walk(function) if isinstance(node, ast.Assign)
               for target in node.targets)


def _top_functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = parse_file(path)
    if tree is None:
        return {}
    return {stmt.name: stmt for stmt in tree.body if isinstance(stmt, ast.FunctionDef)}


def find_rewritten_functions(families: Families) -> list[RewrittenFunction]:
    """Top-level functions of non-family modules taking one tensor argument that copy an
    object's ``__dict__`` or ``__class__`` in the original tree, or call a runtime
    function (other than the class-check ones) in the converted tree: whether or not the
    conversion rewrote them, they must hand back a tensor that behaves as the original's."""
    found: list[RewrittenFunction] = []
    classes = {member.name for member in families.classes}
    runtimes = set(families.runtime_modules)
    skip = set(families.modules) | runtimes
    stems = {module.rpartition(".")[2] for module in runtimes}
    original_dir, converted_dir = families.original_package_dir, families.converted_package_dir
    for path in sorted(original_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(original_dir)
        parts = [families.package, *rel.with_suffix("").parts]
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        after = converted_dir / rel
        if module in skip or not after.is_file():
            continue
        try:
            before_text, after_text = path.read_text("utf-8"), after.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "__dict__" not in before_text and not any(stem in after_text for stem in stems):
            continue
        before_functions = _top_functions(path)
        after_names: set[str] = set()
        after_functions: dict[str, ast.FunctionDef] = {}
        if after_text != before_text:
            after_functions = _top_functions(after)
            try:
                after_names = _runtime_names(ast.parse(after_text), runtimes)
            except (SyntaxError, ValueError):
                pass
        for name, function in before_functions.items():
            if not _takes_one_tensor(function, classes):
                continue
            rewritten = after_functions.get(name)
            calls = {node.func.id for node in ast.walk(rewritten)
                     if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)} \
                if rewritten is not None else set()
            if _copies_a_dict(function) or calls & after_names:
                where = f"{(Path(families.package) / rel).as_posix()}:{function.lineno}"
                found.append(RewrittenFunction(module, name, where))
    return found
