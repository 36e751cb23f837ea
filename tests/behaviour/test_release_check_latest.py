"""The helpers of ``scripts/release_check_latest.py`` (and the isolated trees of
``release_trees.py``) that run without the vLLM wheel.

The release check itself needs the download (not part of the default run); these keep
its parsing of the CLI's output, its stubs and its tables from drifting unnoticed.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main as codemod_main
from scripts import release_check_latest as rc
from scripts import whole_tree as wt
from tests.behaviour import release_trees as lt

REFUSED_LEAF = {
    "pkg/__init__.py": "",
    "pkg/params.py": '''
        from torch.nn import Parameter


        class Base(Parameter):
            def __new__(cls, data, **kwargs):
                return super().__new__(cls, data=data, requires_grad=False)

            def __init__(self, data, weight_loader):
                self._weight_loader = weight_loader


        class Weight(Base):
            pass


        class Shared(Base):
            @property
            def data(self):
                raise ValueError("no data")
    ''',
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def test_apply_summary_parser_reads_the_cli(tmp_path, capsys):
    # A refused leaf, as in vLLM 0.34: the base is kept (a shadow), the other class converted.
    _write(tmp_path, REFUSED_LEAF)
    capsys.readouterr()
    assert codemod_main(["apply", str(tmp_path / "pkg")]) == 1
    summary = wt.parse_apply_summary(capsys.readouterr().err)
    # params.py and the runtime module ``apply`` added beside it
    assert (summary.changed, summary.converted) == (2, 1)
    assert summary.scanned is not None and summary.scanned >= 2
    assert sorted(cls for cls, _, _ in summary.refusals) == ["Base", "Shared"]
    for _, where, reason in summary.refusals:
        assert where.startswith(str(tmp_path)) and reason


def test_parser_without_a_summary_line():
    summary = wt.parse_apply_summary("error: something else\n")
    assert summary.changed is None and summary.refusals == []


@pytest.mark.parametrize(
    ("finding", "expected"),
    [
        ("p/parameter.py:199:1: CM001 `BasevLLMParameter` derives from torch.nn.Parameter; ...", True),
        ("p/parameter.py:9:1: CM001 `ModelWeightParameter` derives from torch.nn.Parameter; ...", False),
        ("p/marlin.py:93:20: CM004 `isinstance` check against `BasevLLMParameter`, a class ...", False),
        ("p/linear.py:5:4: CM002 [*] `isinstance` check against Parameter class `X`", False),
    ],
)
def test_only_cm001_on_kept_classes_is_expected_after_apply(finding, expected):
    kept = {"BasevLLMParameter", "SharedWeightParameter"}
    assert wt.expected_after_apply(finding, kept) is expected


def test_changed_files(tmp_path):
    before, after = tmp_path / "a", tmp_path / "b"
    _write(before, {"x.py": "1\n", "y.py": "2\n", "gone.py": "3\n"})
    _write(after, {"x.py": "1\n", "y.py": "20\n", "new.py": "4\n"})
    assert wt.changed_files(before, after) == ["gone.py", "new.py", "y.py"]


def test_stubs_and_probe_compile():
    for rel, text in {**lt.STUBS, lt.PROBE: lt.PROBE_SOURCE}.items():
        compile(text, rel, "exec")
    assert not set(lt.STUBS) & set(lt.REAL_FILES), "a stub would hide a real file"
    assert {f"{rel.removesuffix('.py').replace('/', '.')}" for rel in (lt.PARAMETER, lt.KV_CACHE)} <= set(
        lt.SUBMODULES
    )


def test_release_check_floor_names_what_verify_missed():
    assert rc.coverage_problems(list(rc.FUNCTIONS_CALLED),
                                [f"{where}x.py:1" for where in rc.CHECK_SITES_IN]) == []
    problems = rc.coverage_problems([], ["vllm/model_executor/layers/linear.py:9"],
                                    [rc.COPYING_FUNCTIONS_CALLED[0]])
    assert problems == [
        "verify did not call vllm.model_executor.parameter.permute_param_layout_",
        f"verify did not call {rc.COPYING_FUNCTIONS_CALLED[1]}",
        "verify asked no rewritten class check in "
        "vllm/model_executor/kernels/linear/mixed_precision/",
    ]


def test_latest_tables_add_the_block_quant_class():
    pytest.importorskip("torch")
    from tests.behaviour import battery_latest as bl

    assert set(bl.ONE_PER_CLASS_LATEST) == {bl.SHADOW, *bl.CONVERTED}
    blocks = [c for c in bl.LOAD_CASES_LATEST if c.build.cls == "BlockQuantScaleParameter"]
    groups = [c for c in bl.LOAD_CASES_LATEST if c.build.cls == "GroupQuantScaleParameter"]
    assert len(blocks) == len(groups) > 0
    assert len({c.id for c in bl.LOAD_CASES_LATEST}) == len(bl.LOAD_CASES_LATEST)


def test_twin_loads_a_package_with_decorated_functions(tmp_path):
    # vLLM's reload/layerwise.py has `@torch.no_grad()` functions: the wrapper (defined in
    # another package) keeps the wrapped function's __module__ but not its globals.
    from tests.behaviour.twin import copy_tree, load_twin

    _write(tmp_path / "a", {
        "deco_pkg/__init__.py": """
            import contextlib


            @contextlib.contextmanager
            def work():
                yield __name__
        """,
    })
    copy_tree(tmp_path / "a", tmp_path / "b")
    with load_twin(tmp_path / "a", tmp_path / "b", submodules=(), package="deco_pkg") as twin:
        before, after = twin.before.module("deco_pkg"), twin.after.module("deco_pkg")
        assert before is not after and before.work.__module__ == "deco_pkg"
        with before.work() as name:
            assert name == "deco_pkg"
