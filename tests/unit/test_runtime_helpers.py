"""The runtime's function names are spelled in one place (``codemod/runtime/helpers.py``):
each names a function the runtime defines, and no other module spells one itself."""

from __future__ import annotations

import ast
from pathlib import Path

from codemod.runtime import helpers

PACKAGE = Path(helpers.__file__).resolve().parent.parent
RUNTIME = PACKAGE / "runtime" / "param_runtime.py"


def _runtime_functions() -> set[str]:
    """The public top-level functions of the text ``apply`` copies (below the marker)."""
    body = RUNTIME.read_text().partition("# BEGIN RUNTIME")[2]
    assert body, "param_runtime.py lost its BEGIN RUNTIME marker"
    return {node.name for node in ast.parse(body).body
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")}


def test_every_helper_name_is_a_runtime_function():
    defined = _runtime_functions()
    constants = {name: value for name, value in vars(helpers).items()
                 if name.isupper() and isinstance(value, str)}
    assert set(constants.values()) == helpers.ALL
    assert helpers.ALL <= defined, sorted(helpers.ALL - defined)


def test_no_other_module_spells_a_runtime_function():
    names = _runtime_functions()
    spelled = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "runtime" and path.name in ("helpers.py", "param_runtime.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                spelled.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}")
    assert not spelled, "use codemod.runtime.helpers instead:\n" + "\n".join(spelled)
