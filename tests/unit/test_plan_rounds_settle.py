"""The planning rounds end settled: a plan is never carried out while a round still finds
a use no rewrite covers (the conversion would leave that use of a converted class behind).

Each round that does not settle refuses at least one more class (or, once, the name
clashes), so ``settle_plan`` allows one round per class plus two; were that ever too few,
the run stops with an internal error and writes nothing, instead of returning the last,
unsettled plan (which a fixed count of 8 rounds used to do).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod import api
from codemod.cli import main
from codemod.pipeline import plan_rounds
from codemod.types import Options

PARAMS = '''from torch.nn import Parameter


class Kind(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)
'''

#: A use no rewrite covers: ``Kind`` must stay a class (found in the first round).
USE = "from pkg.params import Kind\n\nKINDS = [Kind] + [int]\nSUB = KINDS[0].__name__\n"


def _tree(root: Path) -> Path:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "params.py").write_text(PARAMS)
    (package / "use.py").write_text(USE)
    return package


def test_a_refusal_found_in_a_round_is_settled_before_converting(tmp_path: Path) -> None:
    package = _tree(tmp_path)
    result = api.run([package], Options())
    assert [r.subject for r in result.refusals] == ["Kind"]
    assert result.changed() == []


def test_a_plan_that_cannot_settle_stops_the_run_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    package = _tree(tmp_path)
    before = {p.name: p.read_text() for p in package.iterdir()}
    # One round fewer than the refusal needs: the run must not convert with the leftover.
    monkeypatch.setattr(plan_rounds, "_SPARE_ROUNDS", 0)
    with pytest.raises(RuntimeError, match="did not settle in 1 rounds"):
        api.run([package], Options())
    assert main(["apply", str(package)]) == 2
    assert "did not settle" in capsys.readouterr().err
    assert {p.name: p.read_text() for p in package.iterdir()} == before
