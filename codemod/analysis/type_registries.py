"""torch's registries of tensor subclasses that it matches by exact type: a converted
class handed to one is a harmless value use.

What it finds
    A class that is an element of the list, tuple or set given to
    ``torch._dynamo.config.patch("traceable_tensor_subclasses", [...])`` (or the keyword
    ``traceable_tensor_subclasses=[...]``), or the argument of
    ``torch._dynamo.config.traceable_tensor_subclasses.add(X)``; the same for
    ``nontraceable_tensor_subclasses``. ``torch``/``config`` are resolved through the
    module's imports (``import torch``, ``from torch._dynamo import config``).
Why
    vLLM 0.10-0.11 and Aphrodite 0.10 list their Parameter classes there so that
    ``torch.compile`` traces them (``compilation/decorators.py``); the proof refused the
    list (a value handed to a function outside the tree), which kept 11 of 14 classes.
Fix safety
    torch reads these registries only as ``type(x) in registry`` (``istensor``,
    ``VariableBuilder``): an exact type. After conversion no object has the former class
    as its type, and the factory in its place is no type at all, so the test answers
    False for every object, as it did for every object that was not an instance; the
    parameters the factory builds are plain ``Parameter``s, which Dynamo traces without
    being listed (the point of the migration). A kept class stays in the list as it was.
    Not accepted: a ``config`` or ``torch`` the code binds otherwise where the call stands
    (a local, a module-level assignment), and any registry in a tree that reads one
    back (``type(p) in config.traceable_tensor_subclasses``, a copy of it:
    ``reads_registries``), where the factories would answer otherwise.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from codemod.analysis.python_trees import dotted_expr

#: The ``torch._dynamo.config`` entries holding tensor subclasses matched by exact type.
REGISTRIES = frozenset({"traceable_tensor_subclasses", "nontraceable_tensor_subclasses"})
_CONFIG = "torch._dynamo.config"


def registers_by_exact_type(call: ast.Call, argument: ast.AST, imports: dict[str, set[str]],
                            shadowed: Callable[[str], bool]) -> bool:
    """Whether ``argument`` (a positional or keyword argument of ``call``) hands classes to
    one of torch's ``REGISTRIES``: the entry's new value in ``config.patch``, or what
    ``config.<registry>.add``/``.update`` adds. ``imports``: the module's local name ->
    the modules or objects its imports bind it to; ``shadowed(name)``: whether the name
    is bound otherwise where the call stands (a local, a module-level assignment)."""
    func = call.func
    chain = dotted_expr(func)
    if chain is None or shadowed(chain.partition(".")[0]):
        return False
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "patch" and _resolves_to(func.value, _CONFIG, imports):
        if len(call.args) >= 2 and call.args[1] is argument and isinstance(call.args[0], ast.Constant) \
                and call.args[0].value in REGISTRIES:
            return True
        return any(k.arg in REGISTRIES and k.value is argument for k in call.keywords)
    if func.attr in ("add", "update") and isinstance(func.value, ast.Attribute) \
            and func.value.attr in REGISTRIES and _resolves_to(func.value.value, _CONFIG, imports):
        return any(a is argument for a in call.args)
    return False


def reads_registries(tree: ast.Module) -> bool:
    """Whether ``tree`` uses a registry other than by writing it as
    ``registers_by_exact_type`` accepts (``type(p) in config.traceable_tensor_subclasses``,
    a copy of it): code that reads it back sees the factories where it saw the classes."""
    written: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "patch" and node.args and isinstance(node.args[0], ast.Constant):
                written.add(id(node.args[0]))
            elif node.func.attr in ("add", "update") and isinstance(node.func.value, ast.Attribute):
                written.add(id(node.func.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in REGISTRIES and id(node) not in written:
            return True
        if isinstance(node, ast.Attribute) and node.attr in REGISTRIES and id(node) not in written:
            return True
    return False


def _resolves_to(node: ast.expr, qualname: str, imports: dict[str, set[str]]) -> bool:
    """Whether the name or attribute chain ``node`` is ``qualname`` through the imports
    (only when its first name is bound by an import, to that one target)."""
    chain = dotted_expr(node)
    if chain is None:
        return False
    head, _, rest = chain.partition(".")
    targets = imports.get(head, set())
    return len(targets) == 1 and ".".join(filter(None, [next(iter(targets)), rest])) == qualname
