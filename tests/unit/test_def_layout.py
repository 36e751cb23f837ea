"""``lay_out_long_defs``: a generated ``def`` longer than the line limit gets one
parameter per line; the file's own statements keep every byte."""

from __future__ import annotations

import libcst as cst
import pytest

from codemod.transforms.def_layout import lay_out_long_defs

ORIGINAL = "def own(self, a_long_parameter_name, another_long_parameter_name, third=None): pass\n"


def _converted(*generated: str) -> tuple[cst.Module, cst.Module]:
    original = cst.parse_module(ORIGINAL)
    added = [cst.parse_statement(code) for code in generated]
    return original, original.with_changes(body=[*original.body, *added])


@pytest.mark.parametrize(("generated", "expected"), [
    # Too long: one parameter per line, a comma after each (``**kwargs`` too).
    ("def wrap_packed_parameter(param, packed_factor: int, packed_dim: int, **kwargs):\n"
     "    param.packed_dim = packed_dim\n",
     "def wrap_packed_parameter(\n    param,\n    packed_factor: int,\n    packed_dim: int,\n"
     "    **kwargs,\n):\n    param.packed_dim = packed_dim\n"),
    # Keyword-only and positional-only parameters, a return annotation.
    ("def load_weight_of_packed_parameter(self, w, /, *, shard_id: int | None = None) -> int:\n"
     "    return 1\n",
     "def load_weight_of_packed_parameter(\n    self,\n    w,\n    /,\n    *,\n"
     "    shard_id: int | None = None,\n) -> int:\n    return 1\n"),
    # Fits: unchanged.
    ("def wrap_row(param, input_dim, **kwargs):\n    param.input_dim = input_dim\n", None),
    # Already over several lines: unchanged.
    ("def wrap_packed_parameter(\n    param, packed_factor: int, packed_dim: int, more=1, **kwargs\n"
     "):\n    pass\n", None),
])
def test_generated_def_layout(generated: str, expected: str | None) -> None:
    original, tree = _converted(generated)
    out = lay_out_long_defs(original, tree, 79).code
    assert out.startswith(ORIGINAL)  # the file's own statement: every byte kept
    assert out[len(ORIGINAL):] == (generated if expected is None else expected)
    compile(out, "<laid out>", "exec")


def test_a_header_as_long_as_the_file_had_it_stays() -> None:
    """A function whose body changed but whose long header did not keeps its layout."""
    original = cst.parse_module(ORIGINAL)
    own = original.body[0]
    assert isinstance(own, cst.FunctionDef)
    body_changed = own.with_changes(body=cst.parse_statement("def f():\n    return 1\n").body)
    tree = original.with_changes(body=[body_changed])
    assert lay_out_long_defs(original, tree, 79).code.splitlines()[0] == ORIGINAL.split(":")[0] + ":"
