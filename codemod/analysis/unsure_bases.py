"""Bases that may be torch's ``Parameter`` (or a Parameter class) through a binding the
class index does not follow: a module-level assignment (``P = nn.Parameter``, then
``class Scale(P)``), a star import of torch (``from torch.nn import *``, then
``class Scale(Parameter)``; another module's star import gives its own ``Parameter``:
``inspect``'s, the tree's own), or a name bound more than once on the way
(``rebound_base``).

Such a class may be a Parameter subclass. Skipping it would leave it a subclass with no
word (and ``check`` silent); converting it would rest on a guess. The index counts it as
a Parameter class and the planner refuses it with the reason given here, so ``apply``
names it and ``check`` reports it (CM001, not fixable).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Container

from codemod.analysis import python_trees
from codemod.analysis.classes import ClassFacts, FileFacts
from codemod.analysis.names import (
    dotted,
    import_aliases,
    import_from_source,
    resolve_dotted,
    statements_in_scope,
)
from codemod.analysis.nested_classes import nested_parameter_classes_of_file
from codemod.types import PARAMETER_QUALNAMES

#: The last name of a base spelled as torch's Parameter classes are.
ROOT_NAMES = frozenset({"Parameter", "UninitializedParameter"})


def unsure_parameter_base(facts: ClassFacts, ff: FileFacts | None,
                          is_parameter: Callable[[str | None], bool],
                          is_class: Container[str],
                          canonical: Callable[[str], str | None],
                          file_of: Callable[[str], FileFacts | None]) -> str | None:
    """Why a base of ``facts`` (a class of ``ff``) may be a Parameter class that the index
    cannot prove; None when every base is resolved or is plainly something else.

    ``is_parameter`` says whether a qualified name (re-exports followed) is torch's
    ``Parameter`` or a Parameter class of the index; ``is_class`` holds the qualified
    names of the classes the index knows (a base naming one is no assignment);
    ``canonical`` follows re-exports and ``file_of`` gives an analysed module's facts.
    """
    if ff is None or not ff.text:
        return None
    for expr, qualname in zip(facts.base_exprs, facts.base_qualnames):
        spelled = dotted(expr)
        if spelled is None:
            continue
        if qualname is None:
            if spelled.rpartition(".")[2] in ROOT_NAMES and _star_parameter(
                    ff, spelled.partition(".")[0], is_parameter, canonical, file_of):
                return (f"its base `{spelled}` may be torch's Parameter through `import *`, "
                        "which the tool does not follow; import it by name")
            block = _block_parameter_class(ff, spelled, is_parameter, canonical)
            if block is not None:
                return (f"its base `{spelled}` is a Parameter class defined in {block}, which "
                        "the tool keeps as a class (only a module's top-level classes convert)")
            where, name = ff, spelled  # maybe assigned in a module-level block
        else:
            target = canonical(qualname) or qualname
            if target in is_class:
                continue
            module, _, name = target.rpartition(".")
            found = file_of(module) if module else None
            if found is None or not found.text:
                continue
            where = found
        for value in _assigned_names(where.text, name):
            if is_parameter(resolve_dotted(value, where.bindings, where.module_name, where.globals)):
                place = "" if where is ff else f" in `{where.module_name}`"
                return (f"its base `{spelled}` is `{value}` bound by an assignment{place}, "
                        "which the tool does not follow; name the base directly")
    return None


def _block_parameter_class(ff: FileFacts, name: str, is_parameter: Callable[[str | None], bool],
                           canonical: Callable[[str], str | None]) -> str | None:
    """Where ``ff`` defines the Parameter class ``name`` in a module-level block (``if
    hasattr(torch, "float8_e4m3fn"): class Fp8Base(nn.Parameter)``), or None."""
    if "." in name or name not in _block_class_names(ff.text):
        return None
    for nested in nested_parameter_classes_of_file(_tree(ff.text), ff, canonical, is_parameter):
        if nested.qualname == name:
            return nested.where
    return None


def _star_parameter(ff: FileFacts, name: str, is_parameter: Callable[[str | None], bool],
                    canonical: Callable[[str], str | None],
                    file_of: Callable[[str], FileFacts | None]) -> bool:
    """Whether a star import of ``ff`` may bind ``name`` to torch's Parameter: one of
    torch's modules, or a module of the tree that binds it so (followed when the index
    parsed it: ``star_sources``, asked by the index stage). A star import of another
    module (``inspect``) gives its own ``Parameter``."""
    for source in star_sources(ff.text, ff.module_name, ff.path.name == "__init__.py"):
        if source.split(".")[0] == "torch":
            return True
        there = file_of(source)
        target = there.bindings.get(name) if there is not None else None
        if target is not None and is_parameter(canonical(target) or target):
            return True
    return False


@functools.lru_cache(maxsize=64)
def _block_class_names(text: str) -> frozenset[str]:
    """The classes ``text`` defines in a module-level block (not its top level)."""
    tree = _tree(text)
    top = {id(stmt) for stmt in tree.body}
    return frozenset(node.name for node, in_scope in statements_in_scope(tree)
                     if in_scope and isinstance(node, ast.ClassDef) and id(node) not in top)


@functools.lru_cache(maxsize=64)
def star_sources(text: str, module_name: str, is_package: bool) -> tuple[str, ...]:
    """The modules ``text`` star-imports (``from m import *``), relative ones resolved."""
    if "import" not in text or "*" not in text:
        return ()
    return tuple(import_from_source(node, module_name, is_package)
                 for node, _ in statements_in_scope(_tree(text))
                 if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names))


@functools.lru_cache(maxsize=256)
def _assigned_names(text: str, name: str) -> list[str]:
    """The dotted names an assignment run in the module's scope binds ``name`` to
    (``name = a.b``, also in a module-level ``if``/``try`` block, and ``name, x = a.b, 1``)."""
    values = []
    for stmt, top in statements_in_scope(_tree(text)):
        if not top or not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            pairs = [(target, stmt.value)]
            if isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple) \
                    and len(target.elts) == len(stmt.value.elts):
                pairs = list(zip(target.elts, stmt.value.elts))
            for bound, value in pairs:
                if isinstance(bound, ast.Name) and bound.id == name:
                    spelled = python_trees.dotted_expr(value)
                    if spelled is not None:
                        values.append(spelled)
    return values


def _tree(text: str) -> ast.Module:
    try:
        return python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ast.Module(body=[], type_ignores=[])


def rebound_base(facts: ClassFacts, ff: FileFacts | None,
                 file_of: Callable[[str], FileFacts | None],
                 canonical: Callable[[str], str | None]) -> str | None:
    """Why a base of ``facts`` that resolves to a Parameter class is not proven to be it:
    its name is bound to different objects in the module that binds it, the class's own
    or a module re-exporting it (``from torch.nn import Parameter``, then ``try: from
    fancylib import Parameter`` or ``Parameter = Tracked``). The index reads one of the
    bindings; Python keeps the one that runs last. Bindings of the same object are one
    (``import torch`` and ``import torch.distributed``; ``torch.nn.Parameter`` and
    ``torch.nn.parameter.Parameter``; the same import twice). None when each is bound
    to one object."""
    if ff is None:
        return None

    def same(target: str) -> str:
        target = canonical(target) or target
        return "torch.nn.Parameter" if target in PARAMETER_QUALNAMES else target

    for expr in facts.base_exprs:
        spelled = dotted(expr)
        if spelled is None:
            continue
        head = spelled.partition(".")[0]
        here: FileFacts | None = ff
        seen: set[str] = set()
        while here is not None and here.module_name not in seen:
            seen.add(here.module_name)
            bound = _module_bindings(here).get(head, ())
            if len({same(target) for target in bound}) > 1:
                return (f"its base `{spelled}` is bound to different objects in "
                        f"`{here.module_name}` (by imports or assignments that may run in "
                        "either order), which the tool does not follow; bind it once")
            target = here.bindings.get(head)
            if target is None:
                break
            module, _, name = target.rpartition(".")
            here = file_of(module) if module else None
            head = name
    return None


def _module_bindings(ff: FileFacts) -> dict[str, tuple[str, ...]]:
    """What each name is bound to by the statements run in ``ff``'s module scope: an
    import's qualified name, an assignment's dotted value resolved through the module's
    imports, and a token of its own for a definition or any other value."""
    if not ff.text:
        return {}
    return _bindings_of(ff.text, ff.module_name, ff.path.name == "__init__.py",
                        tuple(sorted(ff.bindings.items())), ff.globals)


@functools.lru_cache(maxsize=64)
def _bindings_of(text: str, module_name: str, is_package: bool,
                 bindings: tuple[tuple[str, str], ...], module_globals: frozenset[str],
                 ) -> dict[str, tuple[str, ...]]:
    imported = dict(bindings)
    found: dict[str, list[str]] = {}
    for node, top in statements_in_scope(_tree(text)):
        if not top:
            continue
        pairs = [(local, full) for local, _, full in import_aliases(node, module_name, is_package)]
        own = f"<line {getattr(node, 'lineno', 0)}>"
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            pairs.append((node.name, own))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = python_trees.dotted_expr(node.value) if node.value is not None else None
            resolved = resolve_dotted(value, imported, module_name, module_globals) if value else None
            pairs += [(t.id, resolved or own) for t in targets if isinstance(t, ast.Name)]
        for local, target in pairs:
            found.setdefault(local, []).append(target)
    return {local: tuple(targets) for local, targets in found.items()}
