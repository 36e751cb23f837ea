"""The planning rounds end settled: a plan is never carried out while a round still finds
a use no rewrite covers (the conversion would leave that use of a converted class behind).

Each round that does not settle refuses at least one more class (or, once, the name
clashes), so ``settle_plan`` allows one round per class plus two; were that ever too few,
the run stops with an internal error and writes nothing, instead of returning the last,
unsettled plan (which a fixed count of 8 rounds used to do).
"""

from __future__ import annotations

import dataclasses
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


# -- the transforms run once, on the settled plan -------------------------------------------

OTHER = '''

class Other(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)
'''


def _two_classes(root: Path) -> Path:
    """``Kind``, kept by a use no rewrite covers, and ``Other``, which converts."""
    root.mkdir(exist_ok=True)
    package = _tree(root)
    (package / "params.py").write_text(PARAMS + OTHER)
    (package / "other.py").write_text(
        "from pkg.params import Other\n\n\ndef is_other(p):\n    return isinstance(p, Other)\n")
    return package


def _recording(monkeypatch: pytest.MonkeyPatch, name: str) -> list[list[str]]:
    """Record the files of each call of ``plan_rounds.<name>``, and the classes the plan
    given to it converts."""
    calls: list[list[str]] = []
    real = getattr(plan_rounds, name)

    def recording(paths, plan, *args, **kwargs):  # type: ignore[no-untyped-def]
        converted = sorted(q.rpartition(".")[2] for q, p in plan.classes.items() if p.converted)
        calls.append([*converted, "|", *sorted(p.name for p in paths)])
        return real(paths, plan, *args, **kwargs)

    monkeypatch.setattr(plan_rounds, name, recording)
    return calls


def test_the_transforms_run_once_on_the_settled_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rounds settle on the leftover scan's answers; the transforms run after, once.
    (They ran in every round: the first round converted ``Kind`` too, found its leftover
    and threw the conversions away.)"""
    package = _two_classes(tmp_path)
    converted = _recording(monkeypatch, "convert_all")
    scanned = _recording(monkeypatch, "scan_leftovers")
    result = api.run([package], Options())
    assert [r.subject for r in result.refusals] == ["Kind"]
    assert sorted(f.path.name for f in result.changed()) == ["other.py", "params.py", "params_features.py"]
    assert scanned == [["Kind", "Other", "|", "other.py", "params.py", "use.py"],
                       ["Other", "|", "other.py", "params.py"]]
    assert converted == [["Other", "|", "other.py", "params.py"]]


def test_a_leftover_only_the_transforms_find_refuses_its_class(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The transforms' own leftover scan checks the screen's: were the screen blind to a
    use, the conversion finds it, its class is refused with the same reason and the
    plan is made again; nothing of the discarded conversion reaches the result."""
    expected = api.run([_two_classes(tmp_path / "a")], Options())
    real = plan_rounds.scan_leftovers

    def blind(*args, **kwargs):  # type: ignore[no-untyped-def]
        return {path: dataclasses.replace(done, leftovers=[])
                for path, done in real(*args, **kwargs).items()}

    monkeypatch.setattr(plan_rounds, "scan_leftovers", blind)
    converted = _recording(monkeypatch, "convert_all")
    package = _two_classes(tmp_path / "b")
    result = api.run([package], Options())
    assert [(r.subject, r.reason.replace(str(tmp_path / "b"), "")) for r in result.refusals] == \
        [(r.subject, r.reason.replace(str(tmp_path / "a"), "")) for r in expected.refusals]
    assert converted == [["Kind", "Other", "|", "other.py", "params.py", "use.py"],
                         ["Other", "|", "other.py", "params.py"]]
    assert {f.path.name: f.new_text for f in result.changed()} == \
        {f.path.name: f.new_text for f in expected.changed()}


LOADER = '''

class Loader(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader=None):
        self._loader = loader

    @property
    def loader(self):
        return self._loader
'''


@pytest.mark.parametrize("heavier", ["fields.py", "kinds.py"])
def test_a_file_only_a_discarded_plan_touches_is_never_converted(tmp_path: Path, heavier: str) -> None:
    """``fields.py`` writes ``Loader``'s backing field and does not compile; ``Loader`` is
    refused (a leftover in ``kinds.py``), so the settled plan does not touch it and the
    run converts ``Kind``, whichever file is larger. (When each round converted, the
    first round converted ``fields.py`` before the leftover was seen if it was the
    larger file, and the run failed on it; if ``kinds.py`` was larger, it did not.)"""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "params.py").write_text(PARAMS + LOADER)
    pad = "# " + "x" * 400 + "\n"
    (package / "kinds.py").write_text("from pkg.params import Loader\nLS = [Loader] + [int]\n"
                                      + (pad if heavier == "kinds.py" else ""))
    (package / "fields.py").write_text("def swap(p, loader):\n    p._loader = loader\n\n\nnonlocal y\n"
                                       + (pad if heavier == "fields.py" else ""))
    result = api.run([package], Options())
    assert [r.subject for r in result.refusals] == ["Loader"]
    assert result.failed() == []
    assert sorted(f.path.name for f in result.changed()) == ["params.py", "params_features.py"]
