"""A planning round that leaves the plan as it is converts every file ``apply`` changes:
the files that only write a backing field are converted in it, in the same parallel map
as the others, not in a second pass; ``check`` still computes leftovers only for the
files that mention a class."""

from __future__ import annotations

from pathlib import Path

from codemod import api
from codemod.pipeline import plan_rounds
from codemod.types import Options
from tests.speed.test_prefilter import PARAMS, write_tree

FILES = {
    "pkg/params.py": PARAMS,
    "pkg/use.py": "from pkg.params import Base\ndef f(p):\n    return isinstance(p, Base)\n",
    "pkg/fields.py": "def g(p):\n    p._input_dim = 1\n",
}


def _maps(root: Path, monkeypatch, convert: bool = True) -> list[list[str]]:
    """The candidate files of each round: converted (``apply``), or scanned for leftovers
    (``check``)."""
    maps: list[list[str]] = []
    real = plan_rounds.convert_all if convert else plan_rounds.scan_leftovers

    def recording(paths, *args, **kwargs):
        maps.append(sorted(p.name for p in paths))
        return real(paths, *args, **kwargs)

    monkeypatch.setattr(plan_rounds, "convert_all" if convert else "scan_leftovers", recording)
    if convert:
        result = api.run([root], Options())
        changed = {f.path.name for f in result.changed()}
        assert {"params.py", "use.py", "fields.py"} <= changed
    else:
        options = Options()
        result = api.read_tree([root], options)
        api.settle_plan(result, api.analyse(result.sources, result), options, convert=False)
    return maps


def test_one_map_when_the_plan_holds(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "src", FILES) / "pkg"
    assert _maps(root, monkeypatch) == [["fields.py", "params.py", "use.py"]]


def test_check_leaves_field_only_files_out(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "src", FILES) / "pkg"
    assert _maps(root, monkeypatch, convert=False) == [["params.py", "use.py"]]
