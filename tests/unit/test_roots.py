"""Unit tests for codemod.analysis.roots: module names from import roots, and the
``[tool.codemod] src`` setting that gives the roots explicitly."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod import api
from codemod.analysis.roots import ImportRoots
from codemod.config import load_config
from codemod.types import Options


def make(root: Path, files: list[str]) -> Path:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


@pytest.mark.parametrize(
    ("files", "target", "expected"),
    [
        pytest.param(["eng/pkg/__init__.py", "eng/pkg/srt/layers/parameter.py"],
                     "eng/pkg/srt/layers/parameter.py", "pkg.srt.layers.parameter",
                     id="namespace-dirs-below-a-top-package"),
        pytest.param(["eng/pkg/__init__.py", "eng/pkg/sub/__init__.py", "eng/pkg/sub/m.py"],
                     "eng/pkg/sub/m.py", "pkg.sub.m", id="regular-packages"),
        pytest.param(["eng/pkg/__init__.py", "eng/pkg/sub/__init__.py"],
                     "eng/pkg/sub/__init__.py", "pkg.sub", id="package-init"),
        pytest.param(["eng/pkg/__init__.py", "eng/pkg/a/__init__.py", "eng/pkg/a/b/c/m.py"],
                     "eng/pkg/a/b/c/m.py", "pkg.a.b.c.m", id="namespace-below-a-package"),
        # A project boundary is never part of a package: the search stops there.
        pytest.param(["__init__.py", "proj/pyproject.toml", "proj/pkg/__init__.py",
                      "proj/pkg/m.py"], "proj/pkg/m.py", "pkg.m", id="stops-at-pyproject"),
        pytest.param(["__init__.py", "proj/.git/HEAD", "proj/m.py"], "proj/m.py", "m",
                     id="stops-at-git"),
    ],
)
def test_module_names(tmp_path: Path, files: list[str], target: str, expected: str) -> None:
    make(tmp_path, files)
    assert ImportRoots().module_name(tmp_path / target) == expected


def test_walked_tree_is_the_root_of_files_in_no_package(tmp_path: Path) -> None:
    make(tmp_path, ["eng/ns/a/parameter.py"])
    roots = ImportRoots.of(walked=[tmp_path / "eng"])
    assert roots.module_name(tmp_path / "eng/ns/a/parameter.py") == "ns.a.parameter"
    assert ImportRoots().module_name(tmp_path / "eng/ns/a/parameter.py") == "parameter"


def test_configured_src_roots_longest_first(tmp_path: Path) -> None:
    make(tmp_path, ["python/sgl/srt/m.py", "python/sgl/__init__.py", "other/x.py"])
    roots = ImportRoots.of(src=[tmp_path / "python", tmp_path / "python/sgl/srt"])
    assert roots.module_name(tmp_path / "python/sgl/srt/m.py") == "m"
    assert ImportRoots.of(src=[tmp_path / "python"]).module_name(
        tmp_path / "python/sgl/srt/m.py") == "sgl.srt.m"
    # A file under no configured root falls back to the inferred rule.
    assert roots.module_name(tmp_path / "other/x.py") == "x"


def test_tree_of(tmp_path: Path) -> None:
    make(tmp_path, ["eng/pkg/__init__.py", "eng/pkg/srt/layers/m.py", "eng/loose.py"])
    roots = ImportRoots()
    assert roots.tree_of(tmp_path / "eng/pkg/srt/layers/m.py") == str(tmp_path / "eng/pkg")
    assert roots.tree_of(tmp_path / "eng/pkg/srt") == str(tmp_path / "eng/pkg")
    assert roots.tree_of(tmp_path / "eng") == str(tmp_path / "eng")
    assert roots.tree_of(tmp_path / "eng/loose.py") == str(tmp_path / "eng/loose.py")


def test_src_setting_is_read_relative_to_the_pyproject(tmp_path: Path) -> None:
    make(tmp_path, ["python/sgl/srt/m.py"])
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\nsrc = ["python"]\n')
    assert load_config(tmp_path / "python").src == (tmp_path / "python",)


def test_src_setting_names_namespace_packages(tmp_path: Path) -> None:
    """No ``__init__.py`` anywhere: ``src`` alone says ``sgl`` is the top package."""
    (tmp_path / "python/sgl/srt").mkdir(parents=True)
    (tmp_path / "python/sgl/srt/parameter.py").write_text(
        "from torch.nn import Parameter\n\n\nclass P(Parameter):\n    pass\n")
    (tmp_path / "python/sgl/srt/use.py").write_text(
        "from sgl.srt.parameter import P\n\n\ndef f(x):\n    return isinstance(x, P)\n")
    result = api.run([tmp_path / "python/sgl/srt"], Options(src=(tmp_path / "python",)))
    use = next(f for f in result.changed() if f.path.name == "use.py")
    assert "has_param_feature(x, Features.P)" in (use.new_text or "")
    without = api.run([tmp_path / "python/sgl/srt"], Options())
    assert not [f for f in without.changed() if f.path.name == "use.py"]
