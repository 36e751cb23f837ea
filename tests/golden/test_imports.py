"""Every module of every golden tree, as ``codemod apply`` converts it today, imports
with the tree's import root (the directory above its top package) as the only tree on
``sys.path``.

This proves that each import the tool added resolves to a module of the tree (an
import named after a file alone, ``from parameter import ...``, fails here), also
through namespace packages (directories without ``__init__.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codemod.cli import main

pytest.importorskip("torch")

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input").is_dir())

#: Imports every module of each tree given, forgetting the tree's modules in between
#: (the cases share package names); prints {tree: error or null} as JSON.
_IMPORT_ALL = """
import importlib, json, pathlib, sys, traceback
import torch
outcome = {}
for tree in sys.argv[1:]:
    root = pathlib.Path(tree)
    before = set(sys.modules)
    sys.path.insert(0, tree)
    error = None
    try:
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            importlib.import_module(".".join(parts))
    except BaseException:
        error = traceback.format_exc()
    sys.path.remove(tree)
    for name in set(sys.modules) - before:
        del sys.modules[name]
    outcome[tree] = error
print(json.dumps(outcome))
"""


@pytest.fixture(scope="module")
def import_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | None]:
    """Case -> the traceback of the first import that failed in its converted tree."""
    trees = {}
    for case in CASES:
        tree = tmp_path_factory.mktemp(case) / "tree"
        shutil.copytree(GOLDEN / case / "input", tree)
        main(["apply", str(tree)])
        trees[case] = str(tree)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONWARNINGS="ignore")
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-c", _IMPORT_ALL, *trees.values()], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.splitlines()[-1])
    return {case: outcome[tree] for case, tree in trees.items()}


@pytest.mark.parametrize("case", CASES)
def test_every_module_of_the_converted_tree_imports(
        case: str, import_errors: dict[str, str | None]) -> None:
    assert import_errors[case] is None, import_errors[case]
