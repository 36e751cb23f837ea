"""Long lines re-laid after a conversion are verified in their final form, once: LibCST
parses each part of the new text that is not the file's own (``with_relaid``), not the
whole top-level statement around a re-laid line.

A re-laid line inside a method the use-site rewrite spliced into a large class stands in
its part (``if True:`` and the method); the class's other lines are the file's own text.
A re-laid line outside every part, or a generated statement, is parsed whole.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst

from codemod import api
from codemod.pipeline import workers
from codemod.pipeline.conversion import verify_text
from codemod.transforms.def_layout import lay_out_long_statements, with_relaid
from codemod.types import Options, Outcome

LONG = "x" * 90


def test_a_generated_statement_gets_its_relaid_code_after_its_leading_lines() -> None:
    before = ["y = f(a, b)\n"]
    after = ["y = f(\n    a, b\n)\n"]
    assert with_relaid(["# note\n\ny = f(a, b)\n", "import os\n"], [(before, after)]) == \
        ["# note\n\ny = f(\n    a, b\n)\n", "import os\n"]


def test_a_relaid_line_inside_a_spliced_part_replaces_only_that_part() -> None:
    before = ["class A:\n", "    def f(self):\n", "        return g(a)\n", "\n", "    y = 1\n"]
    after = list(before)
    after[2] = "        return g(\n            a\n        )\n"
    part = "if True:\n    def f(self):\n        return g(a)\n"
    other = "if True:\n    y = 1\n"
    assert with_relaid([part, other], [(before, after)]) == \
        ["if True:\n    def f(self):\n        return g(\n            a\n        )\n", other]


def test_a_relaid_line_outside_every_part_parses_the_whole_statement() -> None:
    before = ["class A:\n", "    z = h(b)\n", "    def f(self):\n", "        return g(a)\n"]
    after = list(before)
    after[1] = "    z = h(\n        b\n    )\n"
    part = "if True:\n    def f(self):\n        return g(a)\n"
    assert with_relaid([part], [(before, after)]) == [part, "".join(after)]


def test_lines_changed_in_two_parts_and_outside_them_fall_back_to_the_whole() -> None:
    before = ["class A:\n", "    def f(self):\n", "        return g(a)\n", "    w = k(c)\n"]
    after = list(before)
    after[2] = "        return g(\n            a\n        )\n"
    after[3] = "    w = k(\n        c\n    )\n"
    part = "if True:\n    def f(self):\n        return g(a)\n"
    assert with_relaid([part], [(before, after)]) == [part, "".join(after)]


def test_a_part_is_matched_at_line_starts_only() -> None:
    # The part's text also ends a longer line: that is not where it stands.
    before = ["class A:\n", "    q = 1  # y = g(a)\n", "    y = g(a)\n"]
    after = list(before)
    after[2] = "    y = g(\n        a\n    )\n"
    part = "if True:\n    y = g(a)\n"
    assert with_relaid([part], [(before, after)]) == ["if True:\n    y = g(\n        a\n    )\n"]


def test_what_verify_parses_is_the_final_text_of_each_generated_part(tmp_path: Path, monkeypatch) -> None:
    """End to end: a long rewritten line in one method of a large class. The generated code
    handed to ``verify_text`` is the method's part in its re-laid form, and it parses;
    swapping in a part LibCST cannot parse makes ``verify_text`` refuse the text."""
    pkg = tmp_path / "eng"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "parameter.py").write_text(textwrap.dedent("""\
        from torch.nn import Parameter


        class BasevLLMParameter(Parameter):
            def __new__(cls, data, **kwargs):
                return super().__new__(cls, data=data, requires_grad=False)

            def __init__(self, data, weight_loader):
                self.weight_loader = weight_loader
        """))
    methods = "".join(f"\n    def m{i}(self, p):\n        return p + {i}\n" for i in range(40))
    (pkg / "layer.py").write_text(
        "from eng.parameter import BasevLLMParameter\n\n\n"
        "class Layer:\n"
        "    def load(self, param, loaded_weight_with_a_rather_long_name_indeed):\n"
        "        if isinstance(param, BasevLLMParameter) and "
        "loaded_weight_with_a_rather_long_name_indeed.ndim:\n"
        "            return 1\n"
        "        return 0\n" + methods)
    seen: dict[str, tuple[str, list[str] | None]] = {}

    def verify(text: str, path: Path, generated: list[str] | None = None) -> str | None:
        seen[path.name] = (text, generated)
        return verify_text(text, path, generated)

    monkeypatch.setattr(workers, "verify_text", verify)
    result = api.run([pkg], Options(jobs=1))
    assert [f.path.name for f in result.files if f.outcome is Outcome.FAILED] == []
    text, generated = seen["layer.py"]
    assert generated is not None
    assert max(map(len, text.splitlines())) <= 88, "the rewritten line was re-laid"
    assert "def m39" not in "".join(generated), "the class's own lines are not parsed again"
    (part,) = [code for code in generated if code.startswith("if True:")]
    assert "has_param_feature(" in part and part[len("if True:\n"):] in text
    for code in generated:
        cst.parse_module(code)
    broken = [code.replace("has_param_feature(", "has_param_feature((", 1) for code in generated]
    assert verify_text(text, pkg / "layer.py", broken) is not None


def test_layout_reports_each_statement_line_by_line() -> None:
    original = "def f(p):\n    return 0\n"
    text = f"def f(p):\n    return has_param_feature(p, Features.{LONG[:40]}) and p.ndim == 2 and p.x\n"
    laid_out, statements = lay_out_long_statements(original, text)
    assert len(statements) == 1
    before, after = statements[0]
    assert "".join(before) == text and "".join(after) == laid_out
    assert len(before) == len(after) == 2 and before[0] == after[0]
