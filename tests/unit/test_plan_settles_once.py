"""The planner settles hierarchies a second time only when a generated-name clash
refused more classes; otherwise the second pass would give the same plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod import api
from codemod.planning.plan import Planner
from codemod.types import Options, RefusalKind

PARAMS = '''from torch.nn import Parameter


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)


class Packed(Base):
    pass
'''


@pytest.mark.parametrize(("extra", "settles"), [("", 1), ("\n\ndef wrap_base(p):\n    return p\n", 2)])
def test_second_settle_only_after_a_name_clash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               extra: str, settles: int) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "params.py").write_text(PARAMS + extra)
    calls: list[int] = []
    settle = Planner._settle

    def counted(self: Planner, plans: dict) -> None:  # type: ignore[type-arg]
        calls.append(1)
        settle(self, plans)

    monkeypatch.setattr(Planner, "_settle", counted)
    result = api.read_tree([tmp_path], Options())
    plan = Planner(api.analyse(result.sources, result)).plan()
    assert len(calls) == settles
    refusals = plan.refusals()
    if extra:
        assert [r.subject for r in refusals] == ["Base", "Packed"]
        assert all(r.kind is RefusalKind.UNCONVERTIBLE and "wrap_base" in r.reason for r in refusals)
    else:
        assert refusals == []
