"""Lines a rewrite made longer than 88 columns are laid out as black and ruff format lay
them out (inline before/after table), and nothing else moves.

``isinstance(p, X)`` becomes ``has_param_feature(p, Features.X)``: a line that fitted may
not fit any more. Such a line is split at the parentheses of its last call when that
reads well (black's right-hand split, then the calls before it), else the expression goes
in parentheses, one operand a line, the operator first. Lines the file already had keep
their bytes, however long.
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
from codemod.transforms.code_layout import lay_out_line, layout_call
from codemod.transforms.def_layout import lay_out_long_lines

I8, I12, I16, I20 = " " * 8, " " * 12, " " * 16, " " * 20
PACKED = "Features.PackedColumnParameter, Features.PackedvLLMParameter"

#: (line, inside brackets, the lines black and ruff format make of it)
LINES = [
    (f"    if has_param_feature(self, {PACKED}) and self.packed_dim == self.output_dim:", False,
     ["    if (", f"{I8}has_param_feature(", f"{I12}self, {PACKED}", f"{I8})",
      f"{I8}and self.packed_dim == self.output_dim", "    ):"]),
    (f"{I12}assert has_param_feature(x, Features.BasevLLMParameter) or isinstance(x, BasevLLMParameter)",
     False,
     [f"{I12}assert has_param_feature(x, Features.BasevLLMParameter) or isinstance(",
      f"{I16}x, BasevLLMParameter", f"{I12})"]),
    (f"{I12}elif param_kind_is(param, Features.RowvLLMParameter, Features.BasevLLMParameter):", False,
     [f"{I12}elif param_kind_is(", f"{I16}param, Features.RowvLLMParameter, Features.BasevLLMParameter",
      f"{I12}):"]),
    (f"{I12}packed_factor = param.packed_factor if has_param_feature(param, Features.BasevLLMParameter) "
     "else param.pack_factor", False,
     [f"{I12}packed_factor = (", f"{I16}param.packed_factor",
      f"{I16}if has_param_feature(param, Features.BasevLLMParameter)", f"{I16}else param.pack_factor",
      f"{I12})"]),
    (f"{I16}has_param_feature(param, {PACKED})", True,
     [f"{I16}has_param_feature(", f"{I20}param, {PACKED}", f"{I16})"]),
    (f"{I16}if has_param_feature(param, Features.BasevLLMParameter) or isinstance(param, BasevLLMParameter)",
     True,
     [f"{I16}if has_param_feature(param, Features.BasevLLMParameter)",
      f"{I16}or isinstance(param, BasevLLMParameter)"]),
    (f"{I20}if has_param_feature(param, Features.BasevLLMParameter) or isinstance(param, BasevLLMParameter):",
     False,
     [f"{I20}if has_param_feature(", f"{I20}    param, Features.BasevLLMParameter",
      f"{I20}) or isinstance(param, BasevLLMParameter):"]),
    (f"{I12}if has_param_feature(param, Features.PerTensorScaleParameter) and weight.ndim == 0:", False,
     [f"{I12}if (", f"{I16}has_param_feature(param, Features.PerTensorScaleParameter)",
      f"{I16}and weight.ndim == 0", f"{I12}):"]),
    (f"{I8}return has_param_feature(param, Features.PackedColumnParameter, Features.PackedvLLMParameter)",
     False,
     [f"{I8}return has_param_feature(", f"{I12}param, {PACKED}", f"{I8})"]),
    # Nothing black would split the same way: left as it is.
    (f"{I8}x += has_param_feature(param, Features.PackedColumnParameter, Features.PackedvLLMParameter)",
     False, None),
]


@pytest.mark.parametrize(("line", "inside", "expected"), LINES)
def test_a_long_line_is_laid_out_as_black_does(line: str, inside: bool, expected: list[str] | None) -> None:
    assert len(line) > 88
    got = lay_out_line(line, inside)
    assert got == expected
    if got is not None:
        assert all(len(laid) <= 88 for laid in got), got


def _ruff() -> str | None:
    here = Path(sys.executable).parent / "ruff"
    return str(here) if here.exists() else shutil.which("ruff")


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed")
@pytest.mark.parametrize(("line", "inside", "expected"), [
    c for c in LINES if c[2] is not None and not (c[1] and c[2][0].lstrip().startswith("if "))])
def test_ruff_format_keeps_the_layout(tmp_path, line: str, inside: bool, expected: list[str]) -> None:
    """The laid-out lines, in a function that makes them valid, are what ``ruff format``
    writes: a maintainer who runs it sees no change."""
    depth = (len(line) - len(line.lstrip())) // 4
    lines = [*expected]
    if inside:  # an operand inside brackets: put it inside a call
        lines = [" " * (depth - 1) * 4 + "f(", *lines, " " * (depth - 1) * 4 + ")"]
        depth -= 1
    if lines[-1].rstrip().endswith(":"):
        lines.append(" " * (depth + 1) * 4 + "pass")
    if lines[0].lstrip().startswith("elif"):
        lines.insert(0, " " * depth * 4 + "if x:\n" + " " * (depth + 1) * 4 + "pass")
    wrappers = [" " * d * 4 + ("def f():" if d == 0 else "if x:") for d in range(depth)]
    code = "\n".join([*wrappers, *lines]) + "\n"
    path = tmp_path / "laid.py"
    path.write_text(code)
    ruff = _ruff()
    assert ruff is not None
    done = subprocess.run([ruff, "format", "--isolated", "--line-length", "88", "--diff", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_long_dict_entry_gets_its_value_in_parentheses() -> None:
    call = layout_call("register_param_kind", [
        ("Features.PackedvLLMParameter", "", [], ""),
        ("methods=", "{", ['"adjust_shard_indexes_for_packing": '
                           'adjust_shard_indexes_for_packing_of_packed_vllm_parameter'], "}"),
    ])
    assert call == textwrap.dedent("""\
        register_param_kind(
            Features.PackedvLLMParameter,
            methods={
                "adjust_shard_indexes_for_packing": (
                    adjust_shard_indexes_for_packing_of_packed_vllm_parameter
                ),
            },
        )""")


LONG_OWN = "x = 1  # " + "a comment the file had, longer than eighty-eight columns " * 2


def test_only_lines_the_conversion_wrote_move() -> None:
    original = ("def f(p):\n"
                "    if isinstance(p, PackedColumnParameter) and p.packed_dim == p.output_dim:\n"
                "        return 1\n"
                f"    {LONG_OWN}\n"
                "    return some_function_with_a_long_name(p, another_argument, a_third_one_here, more_of_it)\n")
    converted = original.replace("isinstance(p, PackedColumnParameter)",
                                 "has_param_feature(p, Features.PackedColumnParameter)")
    converted = converted.replace("another_argument", "another_argument2")
    out = lay_out_long_lines(original, converted)
    assert "    if (\n        has_param_feature(p, Features.PackedColumnParameter)\n" \
           "        and p.packed_dim == p.output_dim\n    ):\n" in out
    assert f"    {LONG_OWN}\n" in out
    # A long line that is not the rewrite's, but changed, is laid out too (it is new).
    assert "return some_function_with_a_long_name(\n" in out
    assert lay_out_long_lines(original, original) is original


def test_conversion_writes_no_line_over_88(tmp_path, capsys) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent("""\
        from torch.nn import Parameter


        class PackedColumnParameter(Parameter):
            def unpack(self, w):  # a comment that makes the function's header long
                return w
        """))
    (pkg / "use.py").write_text(textwrap.dedent("""\
        from pkg.params import PackedColumnParameter


        def load(param, loaded_weight):
            if isinstance(param, PackedColumnParameter) and param.packed_dim == param.output_dim:
                return loaded_weight
        """))
    capsys.readouterr()
    main(["apply", str(pkg)])
    for path in pkg.glob("*.py"):
        if not path.name.endswith("_features.py"):
            text = path.read_text()
            assert all(len(line) <= 88 for line in text.splitlines()), text
    assert "def unpack_of_packed_column_parameter(\n" in (pkg / "params.py").read_text()


def test_lines_are_numbered_as_python_numbers_them() -> None:
    """A form feed inside a string is no line end for CPython: a copy of a long line
    inside the string stays as it is, and the real one is laid out."""
    long_call = "    has_param_feature(param, Features.ModelWeightParameter) and has_param_feature(param, Features.Row)"
    statement = f"y = (\n{long_call}\n)\n"
    original = 'y = (\n    isinstance(param, ModelWeightParameter) and isinstance(param, Row)\n)\n'
    text = f's = """\x0c\x0c\x0c\x0c\n{statement}"""\n{statement}'
    out = lay_out_long_lines(original, text)
    assert out.startswith(f's = """\x0c\x0c\x0c\x0c\n{statement}"""\n')   # the string is untouched
    assert long_call not in out.split('"""')[-1]                            # the real line was laid out
    assert ast.dump(ast.parse(out)) == ast.dump(ast.parse(text))
