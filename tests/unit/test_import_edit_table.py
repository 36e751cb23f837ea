"""The import statements of files that use converted classes, as inline before/after rows
in the manner of LibCST's ``CodemodTest``: one package is converted once, and each row is
one user module and the exact text ``apply`` makes of it (None: byte-identical).

The rows are what ``transforms/import_edits.py`` and ``transforms/import_format.py`` do:
an import kept while its class is still called (the factory), one a rewrite made unused
removed (a name of a one-line or a parenthesised list, an alias, ``import m as P``, a
relative import), the runtime helpers' import added in the file's first-party section
(one line, or one name per line when it does not fit), an import inside a function (only
top-level imports are edited), comments on and around import lines, and files that name
no converted class or only call one (no-op). Each converted file still passes ruff's
isort check and imports only names its modules define.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

FAMILY = '''
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)


    class Col(Base):
        pass


    class Row(Base):
        pass
'''
HELPERS = "from pkg.params_features import Features, has_param_feature"
DEF = "\n\n\ndef check(p):\n    return "


def _file(imports: str, body: str) -> str:
    """A user module: its import block, then ``def check(p): return <body>``."""
    return textwrap.dedent(imports).strip("\n") + DEF + body + "\n"


#: (row, before, after): ``after`` None when ``apply`` leaves the file byte-identical.
ROWS: list[object] = [
    ("only called: the import stays, nothing else changes",
     _file("import torch\n\nfrom pkg.params import Col", "Col(data=torch.zeros(2))"), None),
    ("no converted class named: untouched",
     _file("import os\n\nfrom pkg.utils import thing", "isinstance(p, thing) and os.sep"), None),
    ("called and checked: the import stays, the helpers' import follows it",
     _file("import torch\n\nfrom pkg.params import Col", "isinstance(p, Col) or Col(data=torch.zeros(2))"),
     _file(f"import torch\n\nfrom pkg.params import Col\n{HELPERS}",
           "has_param_feature(p, Features.Col) or Col(data=torch.zeros(2))")),
    ("only checked: the import goes, the helpers' import takes its place",
     _file("from pkg.params import Col", "isinstance(p, Col)"),
     _file(HELPERS, "has_param_feature(p, Features.Col)")),
    ("type(p) is: param_kind_is, sorted among the first-party imports, sections kept",
     _file("""
        import os

        import torch

        from pkg.params import Row
        from pkg.utils import thing
        """, "type(p) is Row and os.sep and torch and thing"),
     _file("""
        import os

        import torch

        from pkg.params_features import Features, param_kind_is
        from pkg.utils import thing
        """, "param_kind_is(p, Features.Row) and os.sep and torch and thing")),
    ("one-line list: the checked name goes, the line stays one line",
     _file("from pkg.params import Col, Row\nfrom pkg.utils import thing", "isinstance(p, Row) or Col(data=thing)"),
     _file(f"from pkg.params import Col\n{HELPERS}\nfrom pkg.utils import thing",
           "has_param_feature(p, Features.Row) or Col(data=thing)")),
    ("parenthesised list: one name per line still, with the one that stays",
     _file("from pkg.params import (\n    Col,\n    Row,\n)", "isinstance(p, Row) or Col(data=p)"),
     _file(f"from pkg.params import (\n    Col,\n)\n{HELPERS}", "has_param_feature(p, Features.Row) or Col(data=p)")),
    ("helpers of 88 columns fit ruff's default line length: one line",
     "import torch\n\nfrom pkg.params import Col, Row\n\n\ndef check(p):\n"
     "    a = isinstance(f(p), (Col, torch.Tensor))\n    return a or isinstance(p, Row)\n",
     "import torch\n\nfrom pkg.params_features import Features, has_param_feature, "
     "isinstance_or_param_feature\n\n\ndef check(p):\n"
     "    a = isinstance_or_param_feature(f(p), torch.Tensor, Features.Col)\n"
     "    return a or has_param_feature(p, Features.Row)\n"),
    ("helpers too long for the file's imports (one wrapped at 84 columns): one name per line",
     "import torch\nfrom torch.nn.functional import (\n    cross_entropy,\n    dropout,\n"
     "    scaled_dot_product_attention,\n)\n\nfrom pkg.params import Col, Row\n\n\ndef check(p):\n"
     "    a = isinstance(f(p), (Col, torch.Tensor))\n    return a or isinstance(p, Row)\n",
     "import torch\nfrom torch.nn.functional import (\n    cross_entropy,\n    dropout,\n"
     "    scaled_dot_product_attention,\n)\n\nfrom pkg.params_features import (\n    Features,\n"
     "    has_param_feature,\n    isinstance_or_param_feature,\n)\n\n\ndef check(p):\n"
     "    a = isinstance_or_param_feature(f(p), torch.Tensor, Features.Col)\n"
     "    return a or has_param_feature(p, Features.Row)\n"),
    ("an alias still called stays; the helpers go on a line of their own",
     _file("from pkg.params import Col as C", "isinstance(p, C) or C(data=p)"),
     _file(f"from pkg.params import Col as C\n{HELPERS}", "has_param_feature(p, Features.Col) or C(data=p)")),
    ("import m as P, only checked: it goes",
     _file("import pkg.params as P", "isinstance(p, P.Col)"),
     _file(HELPERS, "has_param_feature(p, Features.Col)")),
    ("a relative import, only checked: it goes; the helpers are imported absolutely",
     _file("from .params import Col", "isinstance(p, Col)"),
     _file(HELPERS, "has_param_feature(p, Features.Col)")),
    ("a relative import still called: the helpers go in the first-party section above it",
     _file("import torch\n\nfrom .params import Col", "isinstance(p, Col) or Col(data=torch.zeros(2))"),
     _file(f"import torch\n\n{HELPERS}\n\nfrom .params import Col",
           "has_param_feature(p, Features.Col) or Col(data=torch.zeros(2))")),
    ("an import inside a function stays (only top-level imports are edited); helpers at the top",
     "import torch\n\n\ndef check(p):\n    from pkg.params import Col\n\n    return isinstance(p, Col)\n",
     f"import torch\n\n{HELPERS}\n\n\ndef check(p):\n    from pkg.params import Col\n\n"
     "    return has_param_feature(p, Features.Col)\n"),
    ("a comment after a kept import stays on its line, with the name that stays",
     _file("import torch\n\nfrom pkg.params import Col, Row  # the kinds", "isinstance(p, Row) or Col(data=p)"),
     _file(f"import torch\n\nfrom pkg.params import Col  # the kinds\n{HELPERS}",
           "has_param_feature(p, Features.Row) or Col(data=p)")),
    ("comments between brackets stay with their names; the removed name's goes with it",
     _file("from pkg.params import (  # kinds\n    Col,  # built here\n    Row,  # only checked\n)",
           "isinstance(p, Row) or Col(data=p)"),
     _file(f"from pkg.params import (  # kinds\n    Col,  # built here\n)\n{HELPERS}",
           "has_param_feature(p, Features.Row) or Col(data=p)")),
    ("the comment after a removed import, on its line, goes with it",
     _file("import torch\n\nfrom pkg.params import Row  # noqa: F401", "isinstance(p, Row) and torch"),
     _file(f"import torch\n\n{HELPERS}", "has_param_feature(p, Features.Row) and torch")),
    pytest.param(
        "the comment above the last import, removed, stays above the line that replaces it",
        _file("import torch\n\n# yapf: disable\nfrom pkg.params import Row", "isinstance(p, Row) and torch"),
        _file(f"import torch\n\n# yapf: disable\n{HELPERS}", "has_param_feature(p, Features.Row) and torch"),
        id="the comment above the last import, removed, stays above the line that replaces it",
        marks=pytest.mark.xfail(strict=True, reason=(
            "known limit: the comment goes with the import; carrying it to the added line "
            "(tried 2026-12-05) lost the blank line above it (ruff I001), and lost it still "
            "when the added line sorts first"))),
    ("a one-line import under a comment line that loses a name stays on one line",
     _file("import torch\n\n# parameter kinds: built here, checked in check() below\n"
           "from pkg.params import Col, Row", "isinstance(p, Row) or Col(data=p)"),
     _file("import torch\n\n# parameter kinds: built here, checked in check() below\n"
           f"from pkg.params import Col\n{HELPERS}", "has_param_feature(p, Features.Row) or Col(data=p)")),
    ("a helper the rewrite does not call is not imported",
     _file("import torch\n\nfrom pkg.params import Col", "isinstance(f(p), (Col, torch.Tensor))"),
     _file("import torch\n\nfrom pkg.params_features import Features, isinstance_or_param_feature",
           "isinstance_or_param_feature(f(p), torch.Tensor, Features.Col)")),
    ("a docstring sharing its line with a statement: the import below it (__doc__ kept)",
     '"""Checks.""";  X = 1\n\n\ndef check(p):\n    from pkg.params import Col\n\n    return isinstance(p, Col)\n',
     f'"""Checks.""";  X = 1\n\n{HELPERS}\n\n\ndef check(p):\n    from pkg.params import Col\n\n'
     "    return has_param_feature(p, Features.Col)\n"),
    ("no import at the top: the helpers' import after the docstring, a blank line between",
     '"""Checks."""\n\n\ndef check(p):\n    from pkg.params import Col\n\n    return isinstance(p, Col)\n',
     f'"""Checks."""\n\n{HELPERS}\n\n\ndef check(p):\n    from pkg.params import Col\n\n'
     "    return has_param_feature(p, Features.Col)\n"),
]


def _row(param: object) -> tuple[str, str, str | None]:
    return param.values if hasattr(param, "values") else param  # type: ignore[return-value]


def _ruff() -> str | None:
    here = Path(sys.executable).parent / "ruff"
    return str(here) if here.exists() else shutil.which("ruff")


def _isort_errors(root: Path) -> str:
    run = subprocess.run([_ruff() or "ruff", "check", "--isolated", "--select", "I", "--output-format",
                          "concise", "pkg"], cwd=root, capture_output=True, text=True, check=False)
    return "" if run.returncode == 0 else run.stdout + run.stderr


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imports")
    files = {"pkg/__init__.py": "", "pkg/params.py": textwrap.dedent(FAMILY).lstrip("\n"),
             "pkg/utils.py": "class thing:\n    pass\n"}
    files |= {f"pkg/user{i}.py": _row(row)[1] for i, row in enumerate(ROWS)}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if _ruff() is not None:
        assert _isort_errors(root) == ""  # every row passes isort before
    assert main(["apply", str(root / "pkg")]) == 1
    return root


@pytest.mark.parametrize(("row", "before", "after"), ROWS, ids=[_row(row)[0] for row in ROWS])
def test_import_row(tree: Path, row: str, before: str, after: str | None) -> None:
    index = [_row(r)[0] for r in ROWS].index(row)
    assert (tree / f"pkg/user{index}.py").read_text() == (before if after is None else after)


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed")
def test_isort_still_passes(tree: Path) -> None:
    assert _isort_errors(tree) == ""


def test_every_import_resolves(tree: Path) -> None:
    """Each ``from m import name`` of a converted user names something ``m`` defines."""
    for path in sorted((tree / "pkg").glob("user*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            module = "pkg." + (node.module or "") if node.level else node.module or ""
            if module.split(".")[0] != "pkg":
                continue  # torch's, not the tree's
            source = tree / (module.replace(".", "/") + ".py")
            defined = {target.id for stmt in ast.parse(source.read_text()).body
                       for target in (getattr(stmt, "targets", None) or [stmt])
                       if isinstance(target, ast.Name)}
            defined |= {stmt.name for stmt in ast.parse(source.read_text()).body
                        if isinstance(stmt, ast.FunctionDef | ast.ClassDef)}
            missing = {alias.name for alias in node.names} - defined
            assert not missing, f"{path.name}: {missing} not in {module}"
