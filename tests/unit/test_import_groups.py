"""``group_added_imports``: added ``import m`` lines join the file's sections."""

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
        "from __future__ import annotations\n\nimport os\nimport sys\nimport copy\nimport weakref\n\n"
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
