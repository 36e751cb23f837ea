"""An import the conversion removes takes no comment of the file's with it but its own.

LibCST drops a removed statement with its leading lines: vLLM 0.7.3's
``model_executor/layers/linear.py`` lost the ``# yapf: disable`` above
``from vllm.model_executor.parameter import (...)`` and kept the ``# yapf: enable``
below it. The rule (docs/fix-safety.md, "Imports"): the comment lines above a removed
statement stay where they were (above the next statement); what stood inside it (the
comment after it on its line, the comments between its brackets) goes with it. Of an
import that keeps some names, each name that stays keeps its comments, the own-line
comments above a name that goes stay, and the comment after a name that goes, on its
line, goes with it. A line of the file's that only gained lines above it is neither
laid out again nor moved.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor

from codemod.cli import main
from codemod.transforms.import_edits import remove_imports
from codemod.transforms.import_format import format_imports, group_added_imports


def _removed(source: str, *names: str) -> str:
    """``source`` after ``remove_imports`` of ``names`` (imported from ``pkg.params``)."""
    context = CodemodContext(filename="pkg/mod.py", full_module_name="pkg.mod", full_package_name="pkg")
    for name in names:
        RemoveImportsVisitor.remove_unused_import(context, "pkg.params", obj=name)
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    return remove_imports(module, set(names), context).code


def _dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


REMOVALS = {
    "comment-above": (
        """
        import os
        # yapf: disable
        from pkg.params import Base
        # yapf: enable
        from pkg.other import (one,
                               two)
        x = one, two
        """,
        """
        import os
        # yapf: disable
        # yapf: enable
        from pkg.other import (one,
                               two)
        x = one, two
        """,
    ),
    "blank-and-comment-above": (
        """
        import os

        # parameters
        from pkg.params import Base

        x = os
        """,
        """
        import os

        # parameters

        x = os
        """,
    ),
    "section-break-before-a-comment": (
        """
        import os

        from pkg.params import Base
        # the other one
        from pkg.other import one
        x = one
        """,
        """
        import os

        # the other one
        from pkg.other import one
        x = one
        """,
    ),
    "trailing-comment-goes": (
        """
        import os
        from pkg.params import Base  # noqa: F401
        x = os
        """,
        """
        import os
        x = os
        """,
    ),
    "first-after-the-docstring": (
        '''
        """Doc."""

        # parameters
        from pkg.params import Base
        import os
        ''',
        '''
        """Doc."""

        # parameters
        import os
        ''',
    ),
    "two-in-a-row": (
        """
        import os
        # the base
        from pkg.params import Base
        # the packed one
        from pkg.params import Packed
        x = os
        """,
        """
        import os
        # the base
        # the packed one
        x = os
        """,
    ),
    "pragmas": (
        """
        import os
        # type: ignore
        # isort: skip_file
        from pkg.params import Base  # type: ignore  # isort: skip
        x = os
        """,
        """
        import os
        # type: ignore
        # isort: skip_file
        x = os
        """,
    ),
    "last-statement": (
        """
        x = 1
        # late import
        from pkg.params import Base
        """,
        """
        x = 1
        # late import
        """,
    ),
    "inside-the-brackets-goes": (
        """
        import os
        # parameters
        from pkg.params import (  # noqa: F401
            # the base
            Base,  # base
            Packed,  # packed
        )
        x = os
        """,
        """
        import os
        # parameters
        x = os
        """,
    ),
    "some-names-stay": (
        """
        from pkg.params import (  # noqa: E501
            # classes
            Base,  # the base
            # the helper
            helper,  # helps
            Packed,  # packed
            # closing remark
        )  # trailing
        x = helper
        """,
        """
        from pkg.params import (  # noqa: E501
            # classes
            # the helper
            helper,  # helps
            # closing remark
        )  # trailing
        x = helper
        """,
    ),
    "the-last-name-goes": (
        """
        from pkg.params import (helper,  # the helper
                                # the base
                                Base)
        x = helper
        """,
        """
        from pkg.params import (
            helper,  # the helper
            # the base
        )
        x = helper
        """,
    ),
}


@pytest.mark.parametrize("case", sorted(REMOVALS))
def test_removed_imports_keep_the_comments_above_them(case: str) -> None:
    source, expected = REMOVALS[case]
    assert _removed(source, "Base", "Packed") == _dedent(expected)


def test_the_whole_module_path_keeps_them_too() -> None:
    """A statement that mentions the name and holds an import sends the whole module to
    the visitor: the comments stay there too, also in a function."""
    source = """
        import os
        # parameters
        from pkg.params import Base


        def f():
            # local
            from pkg.params import Packed
            # after
            return Base
        """
    expected = """
        import os
        # parameters


        def f():
            # local
            # after
            return 1
        """
    context = CodemodContext(filename="pkg/mod.py", full_module_name="pkg.mod", full_package_name="pkg")
    for name in ("Base", "Packed"):
        RemoveImportsVisitor.remove_unused_import(context, "pkg.params", obj=name)
    module = cst.parse_module(_dedent(source).replace("return Base", "return 1  # Base"))
    got = remove_imports(module, {"Base", "Packed"}, context).code
    assert got == _dedent(expected).replace("return 1", "return 1  # Base")


def test_a_line_that_only_gained_lines_above_it_is_not_laid_out_again() -> None:
    original = cst.parse_module(_dedent("""
        import os
        # yapf: disable
        from pkg.params import Base
        from pkg.other import (one,
                               two)
        import zzz
        import aaa
        """))
    carried = original.with_changes(body=[
        original.body[0],
        original.body[2].with_changes(leading_lines=original.body[1].leading_lines),
        original.body[3].with_changes(leading_lines=[cst.EmptyLine()]),
        original.body[4],
    ])
    assert format_imports(original, carried) is carried
    assert group_added_imports(original, carried).code == carried.code


def _convert(tmp_path: Path, layer: str) -> str:
    """``layer`` (the text of ``pkg/layer.py``) after ``codemod apply`` on a package whose
    ``pkg/params.py`` defines the parameter classes ``Base`` and ``Packed``."""
    files = {
        "pkg/__init__.py": "",
        "pkg/other.py": "one = two = 1\n",
        "pkg/params.py": """
            from torch.nn import Parameter


            def helper():
                pass


            class Base(Parameter):
                def __new__(cls, data, **kwargs):
                    return super().__new__(cls, data, requires_grad=False)

                def __init__(self, data, loader):
                    self.loader = loader


            class Packed(Base):
                def __init__(self, data, loader, dim):
                    super().__init__(data, loader)
                    self.dim = dim
            """,
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dedent(text))
    (tmp_path / "pkg/layer.py").write_text(layer)
    main(["apply", str(tmp_path / "pkg")])
    return (tmp_path / "pkg/layer.py").read_text()


USE = "\n\ndef f(p):\n    return isinstance(p, Packed) or isinstance(p, Base)\n"


def test_vllm_yapf_pragmas_stay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM 0.7.3's linear.py: the pragma pair around the import that goes stays, and
    the import below keeps its bytes."""
    out = _convert(tmp_path, _dedent("""
        import os
        # yapf: disable
        from pkg.params import (Base,
                                Packed)
        # yapf: enable
        from pkg.other import (one,
                               two)
        """) + USE)
    assert "# yapf: disable\n# yapf: enable\nfrom pkg.other import (one,\n" \
           "                       two)\n" in out, out
    assert "from pkg.params import" not in out


def test_a_files_own_import_is_not_moved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The blank line above an import that goes lands on the next line, which stays the
    file's own: not sorted among the added lines."""
    out = _convert(tmp_path, _dedent("""
        import os

        from pkg.params import Base, Packed
        import zzz
        import aaa
        """) + USE)
    assert out.startswith("import os\n\nimport zzz\nimport aaa\n"), out


def test_comments_of_names_that_stay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _convert(tmp_path, _dedent("""
        import os
        from pkg.params import (helper,  # the helper
                                # the base
                                Base,
                                Packed)  # noqa: F401
        """) + USE.replace("return", "helper()\n    return"))
    assert out.startswith("import os\nfrom pkg.params import (\n    helper,  # the helper\n"
                          "    # the base\n)  # noqa: F401\n"), out


def test_a_merged_import_laid_out_again_keeps_its_comments() -> None:
    """``AddImportsVisitor`` merged a name into an import with comments: laid out one
    name per line, each comment stays with its name."""
    original = cst.parse_module("from pkg.m import (  # first party\n    A,  # a\n    # b next\n    B)\n")
    merged = cst.parse_module("from pkg.m import (  # first party\n    A,  # a\n    # b next\n    B, C)\n")
    out = format_imports(original, merged).code
    assert out == "from pkg.m import (  # first party\n    A,  # a\n    # b next\n    B,\n    C,\n)\n"
