"""Annotations naming several converted classes say ``Parameter`` once."""

from __future__ import annotations

import pytest

from codemod import api
from codemod.types import Options
from tests.speed.test_prefilter import PARAMS, write_tree

CASES = {
    "p: Base | Parameter": "p: Parameter",
    "p: dict[int, Base | Packed]": "p: dict[int, Parameter]",
    "p: Base | Packed | None": "p: Parameter | None",
    "p: Base | None": "p: Parameter | None",
    "p: Union[Base, Parameter]": "p: Parameter",
    "p: Union[Base, Packed, int]": "p: Union[Parameter, int]",
    "p: typing.Union[Base, Packed]": "p: Parameter",
    "p: Optional[Union[Base, Packed]]": "p: Optional[Parameter]",
    "p: list[Base] | list[Packed]": "p: list[Parameter]",
    "p: int | int": "p: int | int",  # not rewritten: left as written
}


@pytest.mark.parametrize("annotation", sorted(CASES))
def test_members_once(tmp_path, annotation):
    body = ("import typing\nfrom typing import Optional, Union\n\nfrom torch.nn import Parameter\n\n"
            "from pkg.params import Base, Packed\n\n\n"
            f"def f({annotation}) -> None:\n    return Base(p), Packed(p), Optional, Union, typing\n")
    root = write_tree(tmp_path / "src", {"pkg/params.py": PARAMS, "pkg/use.py": body}) / "pkg"
    result = api.run([root], Options())
    changed = {f.path.name: f for f in result.changed()}
    text = changed["use.py"].new_text if "use.py" in changed else body
    assert f"def f({CASES[annotation]}) -> None:" in text
    compile(text, "use.py", "exec")


def test_union_import_dropped_when_unused(tmp_path):
    body = ("from typing import Union\n\nfrom torch.nn import Parameter\n\nfrom pkg.params import Base\n\n\n"
            "def f(p: Union[Base, Parameter]) -> None:\n    pass\n")
    root = write_tree(tmp_path / "src", {"pkg/params.py": PARAMS, "pkg/use.py": body}) / "pkg"
    text = next(f for f in api.run([root], Options()).changed() if f.path.name == "use.py").new_text
    assert text is not None and "Union" not in text and "def f(p: Parameter) -> None:" in text
