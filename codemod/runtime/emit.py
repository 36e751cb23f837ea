"""The runtime module ``apply`` writes beside the root module of each converted family.

What it does
    ``runtime_module_for`` names the module (``<root module>_features``, or
    ``param_features`` in a package whose ``__init__.py`` defines the root) and
    ``runtime_module_text`` writes it: a module docstring, the helpers of
    ``param_runtime`` (everything below its ``BEGIN RUNTIME`` marker, with its imports) and
    one ``class Features`` whose members, named after the former classes, hold their
    qualified names. ``written_members`` reads an earlier output back.
Why
    The engine's own modules stay as their authors wrote them, apart from the classes
    that became functions; the helpers live in one module of their own that imports only
    ``copy``, ``sys``, ``weakref`` and ``torch``, so any engine module can import it at the top.
Fix safety
    A file of that name that ``apply`` did not write is never replaced (the planner
    refuses the family); one it wrote keeps its members, so a run resumed after a kill
    (or a later run converting more of the family) still finds every ``Features.X`` that
    converted modules already use.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from codemod.runtime import helpers

#: The name of the class holding the feature tags, in every runtime module.
FEATURES_NAME = "Features"

#: The names a rewrite may add to any module: the runtime's helpers and ``Features``.
ADDED_ANYWHERE = helpers.ALL | {FEATURES_NAME}


def gained_by_rewrites(runtime_modules: int) -> frozenset[str]:
    """The names a module may gain from its own rewrite that would differ from those a
    rewrite adds to a module it star-imports: with one family, none (both import the
    same runtime's objects); with two or more, the runtime's helpers and ``Features``
    (each family's runtime has its own)."""
    return ADDED_ANYWHERE if runtime_modules > 1 else frozenset()


#: The first line of every runtime module's docstring: how ``apply`` recognises its own.
GENERATED_MARK = "Parameter features and helpers, written by ``codemod apply``"
_RUNTIME_MARKER = "# BEGIN RUNTIME"
_DOC_TEMPLATE = '''"""{mark} for the former
Parameter subclasses of ``{root}``.

``isinstance(p, X)`` is now ``has_param_feature(p, Features.X)`` and ``type(p) is X``
is now ``param_kind_is(p, Features.X)``; each former class ``X`` is a factory function
of the same name that builds a plain ``torch.nn.Parameter`` and gives it kind
``Features.X``.

* What class ``X`` gave its instances is recorded once, when its module is imported
  (``register_param_kind``): its feature tags and, for each method name, the function
  the MRO chose. The factory gives each new parameter all of it in one call
  (``init_param_kind``), then its ``wrap_*`` functions run the former ``__init__``
  bodies.
* Methods are ``BoundParamMethod`` objects stored on the parameter:
  ``param.load_x(...)`` keeps working at every call site, and
  ``torch.compile(fullgraph=True)`` traces through them. Dynamo refuses a per-instance
  callable whose ``__name__`` equals the attribute it is stored under, so ``__name__``
  carries a suffix.
* A method holds its parameter through a weak reference, so ``param -> method ->
  param`` is no reference cycle: a dropped parameter is freed by reference counting
  alone.
* ``copy.deepcopy`` and ``pickle`` look ``__deepcopy__`` / ``__reduce_ex__`` up on the
  instance, so each parameter carries its own: a deep copy keeps every attribute and
  its methods act on the copy; an unpickled parameter gets its attributes and methods
  back.
"""
'''


@dataclass
class RuntimeModule:
    """One runtime module: where it goes and the feature tags it defines."""

    #: Dotted module name (``vllm.model_executor.parameter_features``).
    module: str
    path: Path
    #: The module defining the family's root class, which the docstring names.
    root_module: str
    root_path: Path
    #: ``Features`` member -> former class's qualified name, in order of definition.
    members: dict[str, str] = field(default_factory=dict)
    #: Members an earlier run wrote into the existing file (kept: modules use them).
    written: dict[str, str] = field(default_factory=dict)
    #: A file (or package) of that name exists and ``apply`` did not write it.
    foreign: bool = False


def runtime_module_for(root_module: str, root_path: Path) -> tuple[str, Path]:
    """The dotted name and path of the runtime module of a family rooted in ``root_module``
    (whose file is ``root_path``): ``<stem>_features`` beside it, or ``param_features``
    inside the package when the root is defined in an ``__init__.py``."""
    if root_path.name == "__init__.py":
        return f"{root_module}.param_features", root_path.with_name("param_features.py")
    stem = root_path.stem
    package = root_module.rpartition(".")[0]
    name = f"{stem}_features"
    return (f"{package}.{name}" if package else name), root_path.with_name(f"{name}.py")


def is_generated(text: str) -> bool:
    """Whether ``text`` is a runtime module ``apply`` wrote (its docstring starts with
    ``GENERATED_MARK``)."""
    return text.lstrip("\ufeff").startswith(f'"""{GENERATED_MARK}')


def written_members(text: str) -> dict[str, str] | None:
    """The ``Features`` members of a runtime module ``apply`` wrote (None if it did not
    write ``text``, or it no longer parses)."""
    if not is_generated(text):
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    return features_members(tree)


def features_members(tree: ast.Module) -> dict[str, str]:
    """``member -> value`` of each ``Name = "string"`` in the top-level ``Features`` class(es)
    of ``tree``, in order."""
    members: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == FEATURES_NAME:
            for item in stmt.body:
                if isinstance(item, ast.Assign) and len(item.targets) == 1 \
                        and isinstance(item.targets[0], ast.Name) \
                        and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
                    members[item.targets[0].id] = item.value.value
    return members


def _helpers() -> tuple[str, str]:
    """The runtime's import lines and its body (the text below ``BEGIN RUNTIME``)."""
    text = resources.files("codemod.runtime").joinpath("param_runtime.py").read_text("utf-8")
    head, _, body = text.partition(_RUNTIME_MARKER)
    imports = "".join(line + "\n" for line in head.splitlines()
                      if line.startswith(("import ", "from ")) and "__future__" not in line)
    return imports, body.strip("\n")


def _member_line(name: str, value: str) -> str:
    """``    Name = "qualname"``, the value on a line of its own when too long for one."""
    line = f'    {name} = "{value}"\n'
    return line if len(line) <= 89 else f'    {name} = (\n        "{value}"\n    )\n'


def foreign_statements(old: str, new: str) -> list[tuple[int, str]]:
    """What rewriting an earlier runtime module (``old``, as the file holds it now) with
    this run's text for it (``new``) would drop: (line, what) of each top-level statement
    of ``old`` that binds a name ``new`` does not bind, or, binding none, whose code ``new``
    does not hold (the docstring aside). An output of this version has none; code added
    to the module by hand has some, and is never dropped silently (``outcomes``)."""
    try:
        old_tree = ast.parse(old)
    except (SyntaxError, ValueError):
        return [(1, "text that does not parse")]
    new_tree = ast.parse(new)
    new_names = {name for stmt in new_tree.body for name in _bound_at_top(stmt)}
    new_codes = {ast.get_source_segment(new, stmt) for stmt in new_tree.body}
    foreign: list[tuple[int, str]] = []
    for index, stmt in enumerate(old_tree.body):
        names = _bound_at_top(stmt)
        if names:
            extra = sorted(names - new_names)
            if extra:
                foreign.append((stmt.lineno, ", ".join(extra)))
        elif not (index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)) \
                and ast.get_source_segment(old, stmt) not in new_codes:
            code = (ast.get_source_segment(old, stmt) or "").split("\n")[0]
            foreign.append((stmt.lineno, f"`{code}`"))
    return foreign


def _bound_at_top(stmt: ast.stmt) -> set[str]:
    """The names a top-level statement binds (a definition, an assignment, an import)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {node.id for target in targets for node in ast.walk(target)
                if isinstance(node, ast.Name)}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {alias.asname or alias.name.split(".")[0] for alias in stmt.names}
    return set()


def runtime_module_text(runtime: RuntimeModule) -> str:
    """The source of ``runtime``'s module: docstring, imports, helpers, ``Features``."""
    imports, body = _helpers()
    imports = imports.replace("\nimport torch", "\n\nimport torch", 1)
    members = {**runtime.written, **runtime.members}
    lines = "".join(_member_line(name, value) for name, value in members.items())
    features = (
        f"class {FEATURES_NAME}:\n"
        f'    """Feature tags of the former Parameter subclasses: ``Features.X`` stands for\n'
        f'    class ``X``, and holds its qualified name."""\n\n'
        f"{lines}"
    )
    doc = _DOC_TEMPLATE.format(mark=GENERATED_MARK, root=runtime.root_module)
    return f"{doc}\n{imports}\n\n{features}\n\n{body}\n"
