"""Two copies of one package imported side by side, the rest of the engine stubbed."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from codemod.verify.direct_imports import direct_imports
from codemod.verify.importer import TreeImport
from codemod.verify.stubs import TensorParallel

FILES = {
    "eng/__init__.py": "import eng_heavy_runtime_that_is_not_installed\n",
    "eng/utils/__init__.py": "from eng.utils.common import *\n",
    "eng/utils/common.py": "def helper():\n    return 'real'\n",
    "eng/tools.py": "def scale():\n    return SIDE\n\n\nSIDE = 'tools'\n",
    "eng/params.py": '''
        import optional_dependency_not_installed
        from eng.distributed import get_tensor_model_parallel_rank
        from eng.tools import scale
        from eng.utils import helper

        SIDE = "{side}"


        def rank():
            return get_tensor_model_parallel_rank()


        def lazy_side():
            from eng.params import SIDE
            return SIDE
    ''',
}


def _tree(root: Path, side: str) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text.replace("{side}", side)).lstrip())
    return root / "eng"


def _import(package_dir: Path, position: TensorParallel) -> TreeImport:
    optional = direct_imports("eng", package_dir, ["eng.params"])
    tree = TreeImport("eng", package_dir, {"eng.params"}, optional, position)
    tree.import_modules(["eng.params"])
    return tree


def test_two_copies_side_by_side_with_stubs(tmp_path: Path) -> None:
    position = TensorParallel()
    before = _import(_tree(tmp_path / "a", "before"), position)
    after = _import(_tree(tmp_path / "b", "after"), position)
    assert not before.failures and not after.failures
    assert "eng" not in sys.modules and "eng.params" not in sys.modules
    old, new = before.module("eng.params"), after.module("eng.params")
    assert old is not None and new is not None and old is not new
    # the package __init__ (heavy) is a stub; a real helper module runs for real
    assert "eng" in before.stubbed
    assert old.scale() == "tools"
    # `from eng.utils.common import *` in a stubbed-below package leaves `helper` out:
    # eng.utils becomes a stub instead of breaking the family module
    assert "eng.utils" in before.fallbacks and "lacks helper" in before.fallbacks["eng.utils"]
    assert "optional_dependency_not_installed" in before.missing
    # tp getters are driven; imports inside functions see their own copy
    position.rank = 3
    with before.active():
        assert (old.rank(), old.lazy_side()) == (3, "before")
    with after.active():
        assert (new.rank(), new.lazy_side()) == (3, "after")
    assert "eng.params" not in sys.modules
