"""``group_added_imports``: added import lines join the file's sections in isort's order."""

from __future__ import annotations

import libcst as cst
import pytest

from codemod.transforms.import_format import group_added_imports

CASES = {
    "no-stdlib": (
        '"""Doc."""\nimport torch\nfrom torch import nn\n\nx = 1\n',
        '"""Doc."""\nimport copy\nimport weakref\n\nimport torch\nfrom torch import nn\n\nx = 1\n',
    ),
    "future-and-stdlib": (
        "from __future__ import annotations\n\nimport os\nimport sys\n\nimport torch\n\nx = 1\n",
        "from __future__ import annotations\n\nimport copy\nimport os\nimport sys\nimport weakref\n\n"
        "import torch\n\nx = 1\n",
    ),
    "future-only": (
        "from __future__ import annotations\n\nimport torch\n\nx = 1\n",
        "from __future__ import annotations\n\nimport copy\nimport weakref\n\nimport torch\n\nx = 1\n",
    ),
    "comment-before-block": (
        '"""Doc."""\n\n# third party\nimport torch\n\nx = 1\n',
        '"""Doc."""\n\nimport copy\nimport weakref\n\n# third party\nimport torch\n\nx = 1\n',
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_sections(case):
    source, expected = CASES[case]
    original = cst.parse_module(source)
    # What AddImportsVisitor produces: the new lines after the last import.
    lines = source.split("\n")
    last = max(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
    added = "\n".join(lines[: last + 1] + ["import weakref", "import copy"] + lines[last + 1:])
    assert group_added_imports(original, cst.parse_module(added)).code == expected


def test_third_party_added_before_its_section():
    source = "import os\n\nfrom torch.nn import Parameter\n\nx = 1\n"
    added = "import os\n\nfrom torch.nn import Parameter\nimport torch\n\nx = 1\n"
    out = group_added_imports(cst.parse_module(source), cst.parse_module(added)).code
    assert out == "import os\n\nimport torch\nfrom torch.nn import Parameter\n\nx = 1\n"


def test_nothing_added_is_unchanged():
    source = "import torch\nimport copy\n\nx = 1\n"
    tree = cst.parse_module(source)
    assert group_added_imports(tree, tree) is tree


@pytest.mark.parametrize(("source", "expected"), [
    pytest.param(  # after the file's first-party line that sorts before it
        "import torch\n\nfrom pkg.layers import f\nfrom pkg.utils import g\n\nx = 1\n",
        "import torch\n\nfrom pkg.layers import f\nfrom pkg.params_features import Features\n"
        "from pkg.utils import g\n\nx = 1\n", id="among-first-party"),
    pytest.param(  # a new first-party section after third party, a blank line between
        "import torch\nfrom torch import nn\n\nx = 1\n",
        "import torch\nfrom torch import nn\n\nfrom pkg.params_features import Features\n\nx = 1\n",
        id="new-section"),
    pytest.param(  # the file's imports all went: laid out alone, two lines before a def
        "def f():\n    pass\n",
        "from pkg.params_features import Features\n\n\ndef f():\n    pass\n", id="alone"),
])
def test_runtime_module_import_goes_to_its_place(source, expected):
    tree = cst.parse_module(source)
    lines = source.split("\n")
    imports = [i for i, line in enumerate(lines) if line.startswith(("import ", "from "))]
    at = imports[-1] + 1 if imports else 0
    added = "\n".join(lines[:at] + ["from pkg.params_features import Features"] + lines[at:])
    out = group_added_imports(tree, cst.parse_module(added), first_party="pkg",
                              movable=frozenset({"pkg.params_features"})).code
    assert out == expected


def test_other_first_party_imports_the_rewrite_added_stay_where_they_are():
    """Moving an import of the engine's own modules could change its import order."""
    source = "import torch\n\nfrom pkg.utils import g\n\nx = 1\n"
    added = "import torch\n\nfrom pkg.utils import g\nfrom pkg.base import wrap_base\n\nx = 1\n"
    out = group_added_imports(cst.parse_module(source), cst.parse_module(added), first_party="pkg").code
    assert out == added


@pytest.mark.parametrize(("source", "changed", "expected"), [
    # A one-line import after the docstring's blank line stays on one line (its blank
    # line before it is not a line of its own).
    ('"""Doc."""\n\nfrom pkg.params import Column, Pinned, Row\n\nx = 1\n',
     '"""Doc."""\n\nfrom pkg.params import (\n    Pinned,\n    Row,\n)\n\nx = 1\n',
     '"""Doc."""\n\nfrom pkg.params import Pinned, Row\n\nx = 1\n'),
    # An import that spanned lines keeps one name per line.
    ('"""Doc."""\n\nfrom pkg.params import (\n    Column,\n    Pinned,\n)\n\nx = 1\n',
     '"""Doc."""\n\nfrom pkg.params import (Pinned)\n\nx = 1\n',
     '"""Doc."""\n\nfrom pkg.params import (\n    Pinned,\n)\n\nx = 1\n'),
])
def test_changed_import_keeps_its_own_layout(source, changed, expected):
    """``format_imports`` lays a changed import out as the original one was."""
    from codemod.transforms.import_format import format_imports

    assert format_imports(cst.parse_module(source), cst.parse_module(changed)).code == expected
