"""Paths as users and pre-commit give them: ``.``, relative paths, single files and file
lists from inside a package, namespace directories, symlinked subpackages.

A path inside a package is analysed against its whole tree (the top package directory
above it): ``check`` reports the same findings for the given files as a run on the
whole tree, and ``apply`` never writes a part of a conversion that needs files outside
the given paths.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .trees import HIERARCHY, run_main, snapshot

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "fixtures" / "golden" / "namespace_packages"
ENGINE = REPO / "fixtures" / "engine"
FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>CM\d{3}) ")


def findings(out: str, base: Path) -> set[tuple[str, str, str]]:
    """(absolute path, line, code) of each text finding, paths read relative to ``base``."""
    found = set()
    for line in out.splitlines():
        match = FINDING.match(line)
        assert match, f"not a finding line: {line!r}"
        found.add((os.path.normpath(base / match["path"]), match["line"], match["code"]))
    return found


@pytest.fixture
def namespace_tree(tmp_path: Path) -> Path:
    """A copy of the PEP 420 golden input: ``pkg/__init__.py``, then namespace dirs."""
    tree = tmp_path / "tree"
    shutil.copytree(GOLDEN / "input", tree)
    return tree


@pytest.fixture
def engine_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "engine"
    shutil.copytree(ENGINE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def full_findings(tree: Path, capsys: pytest.CaptureFixture[str]) -> set[tuple[str, str, str]]:
    code, out, _ = run_main(["check", "."], tree, capsys)
    assert code == 1
    return findings(out, tree)


def only_under(found: set[tuple[str, str, str]], *paths: Path) -> set[tuple[str, str, str]]:
    return {f for f in found if any(f[0] == str(p) or f[0].startswith(f"{p}{os.sep}")
                                    for p in paths)}


def test_check_dot_inside_a_namespace_dir_reports_as_a_full_run(
        namespace_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = full_findings(namespace_tree, capsys)
    layers = namespace_tree / "pkg/srt/layers"
    code, out, err = run_main(["check", "."], layers, capsys)
    assert code == 1, err
    assert findings(out, layers) == only_under(full, layers)
    # Paths as the user spelled them: relative to the working directory.
    assert out.splitlines()[0].startswith("linear.py:")
    assert not any(line.startswith(("/", "..")) for line in out.splitlines())


def test_check_file_list_like_pre_commit(
        namespace_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = full_findings(namespace_tree, capsys)
    layers = namespace_tree / "pkg/srt/layers"
    code, out, err = run_main(["check", "linear.py", "quant/fp8.py"], layers, capsys)
    assert code == 1, err
    expected = only_under(full, layers / "linear.py", layers / "quant/fp8.py")
    assert len(expected) == 5
    assert findings(out, layers) == expected
    assert {line.split(":")[0] for line in out.splitlines()} == {"linear.py", "quant/fp8.py"}


def test_check_single_file_from_the_tree_root_uses_the_tree(
        engine_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """linear.py alone names Parameter classes defined elsewhere: checked against its
    tree, its isinstance checks are findings (alone, it looked clean)."""
    full = full_findings(engine_tree, capsys)
    linear = Path("minivllm/model_executor/layers/linear.py")
    code, out, err = run_main(["check", str(linear)], engine_tree, capsys)
    assert code == 1, err
    got = findings(out, engine_tree)
    assert got and got == only_under(full, engine_tree / linear)


@pytest.mark.parametrize("args", [["."], ["parameter.py", "layers/linear.py"],
                                  ["./layers/../parameter.py"]])
def test_check_inside_the_engine_package(
        engine_tree: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    full = full_findings(engine_tree, capsys)
    cwd = engine_tree / "minivllm/model_executor"
    code, out, err = run_main(["check", *args], cwd, capsys)
    assert "internal error" not in err
    assert code == 1, err
    given = [Path(os.path.normpath(cwd / a)) for a in args]
    assert findings(out, cwd) == only_under(full, *given)


def test_apply_dot_in_the_top_package_converts_the_tree(
        namespace_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["apply", "."], namespace_tree / "pkg", capsys)
    assert code == 1, err
    for path in (GOLDEN / "expected").rglob("*.py"):
        rel = path.relative_to(GOLDEN / "expected")
        assert (namespace_tree / rel).read_text() == path.read_text(), rel


def test_apply_file_list_covering_every_change_writes_it(
        namespace_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = ["srt/layers/parameter.py", "srt/layers/linear.py", "srt/layers/quant/fp8.py",
             "runtime/loader.py"]
    code, _, err = run_main(["apply", *files], namespace_tree / "pkg", capsys)
    assert code == 1, err
    for rel in files:
        assert (namespace_tree / "pkg" / rel).read_text() == \
            (GOLDEN / "expected/pkg" / rel).read_text(), rel


def test_apply_narrower_than_the_change_writes_nothing(
        namespace_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Converting the classes also changes runtime/loader.py: writing only the given
    directory would leave loader.py testing isinstance against functions."""
    before = snapshot(namespace_tree)
    code, out, err = run_main(["apply", "."], namespace_tree / "pkg/srt/layers", capsys)
    assert code == 2
    assert snapshot(namespace_tree) == before
    assert "../../runtime/loader.py" in err
    assert "nothing written: run `codemod apply ../..`" in err


def test_dry_run_of_a_relative_file_shows_the_whole_change(
        namespace_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(namespace_tree)
    cwd = namespace_tree / "pkg/runtime"
    code, out, err = run_main(["apply", "--dry-run", "../srt/layers/parameter.py"], cwd, capsys)
    assert code == 1, err
    assert snapshot(namespace_tree) == before
    diffed = set(re.findall(r"^\+\+\+ b/(.+)$", out, re.MULTILINE))
    assert diffed == {"../srt/layers/parameter.py", "../srt/layers/linear.py",
                      "../srt/layers/quant/fp8.py", "loader.py",
                      "../srt/layers/parameter_features.py"}
    assert "note: converting ../srt/layers/parameter.py also changes 3 file(s)" in err


def _import_all(root: Path, modules: list[str]) -> str:
    code = "import importlib, sys\n" + "".join(
        f"importlib.import_module({m!r})\n" for m in modules)
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    return done.stderr if done.returncode else ""


SYMLINKED_USE = '''\
from ..params import BaseParam, SplitParam


def kind(p):
    if type(p) is SplitParam:
        return "split"
    return "base" if isinstance(p, BaseParam) else "plain"
'''


def _symlinked_tree(root: Path) -> Path:
    """``tree/pkg/ops`` is a symlink to ``tree/vendored/ops`` (no ``__init__.py`` there):
    Python imports its module as ``pkg.ops.use``, whose ``..params`` is ``pkg.params``."""
    tree = root / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg/__init__.py").write_text("")
    (tree / "pkg/params.py").write_text(HIERARCHY)
    (tree / "vendored/ops").mkdir(parents=True)
    (tree / "vendored/ops/use.py").write_text(SYMLINKED_USE)
    (tree / "pkg/ops").symlink_to("../vendored/ops", target_is_directory=True)
    (tree / "pkg/loop").symlink_to(".", target_is_directory=True)
    return tree


@pytest.mark.parametrize("where", ["tree", "pkg", "ops"])
def test_symlinked_subpackage_is_converted_through_the_link(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        where: str) -> None:
    tree = _symlinked_tree(tmp_path)
    cwd = {"tree": tree, "pkg": tree / "pkg", "ops": tree / "pkg/ops"}[where]
    # As a shell sets it: in pkg/ops, $PWD keeps the link (os.getcwd() does not).
    monkeypatch.setenv("PWD", str(cwd))
    code, out, err = run_main(["check", "."], cwd, capsys)
    assert code == 1 and "CM002" in out, err
    code, _, err = run_main(["apply", "."] if where != "ops" else ["apply", "../.."], cwd, capsys)
    assert code == 1, err
    assert (tree / "pkg/ops").is_symlink()
    converted = (tree / "vendored/ops/use.py").read_text()
    assert "isinstance" not in converted and "has_param_feature(" in converted
    # The runtime module is imported by its absolute name (``apply`` writes it).
    assert "from pkg.params_features import" in converted
    assert _import_all(tree, ["pkg.params", "pkg.ops.use"]) == ""
    code, out, err = run_main(["check", "."], cwd, capsys)
    assert code == 0, out + err


def test_symlinked_directory_leaving_the_tree_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg/__init__.py").write_text("")
    (tree / "pkg/params.py").write_text(HIERARCHY)
    outside = tmp_path / "elsewhere/ops"
    outside.mkdir(parents=True)
    (outside / "use.py").write_text(SYMLINKED_USE)
    (tree / "pkg/ops").symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path)
    for command in (["apply", "."], ["check", "."]):
        code, _, err = run_main(command, tree, capsys)
        assert code == 2
        assert "pkg/ops: symbolic link to a directory outside the tree" in err
    assert snapshot(tmp_path) == before
    # Excluded files are not read, so their uses stay as they are (docs/usage.md): the
    # independent verifier, which follows the link, would rightly report them.
    code, _, err = run_main(["apply", "--extend-exclude", "pkg/ops", "."], tree, capsys,
                            verify_tree=False)
    assert code == 1, err


NAMESPACE_TOP = {
    "eng/layers/parameter.py": """import torch


class BaseP(torch.nn.Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)


class Packed(BaseP):
    pass
""",
    "eng/models/user.py": "from eng.layers.parameter import Packed\n\n\ndef f(p):\n    return isinstance(p, Packed)\n",
}


@pytest.mark.parametrize("where", ["eng", "inside"])
def test_namespace_top_directory_given_as_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   where: str) -> None:
    """A tree whose top directory has no ``__init__.py`` (a PEP 420 namespace package)
    and whose files import each other as ``eng.…``, given from its top directory or from
    inside it: its files are named ``layers.parameter`` (the directory given is their
    import root), so ``from eng.layers.parameter import Packed`` names no module of the
    run. The class is refused, naming the import, and nothing is written (it was
    converted, and ``isinstance(p, Packed)`` left against a function)."""
    work = tmp_path / "work"
    for rel, text in NAMESPACE_TOP.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    before = snapshot(work)
    cwd, target = (work, "eng") if where == "eng" else (work / "eng", ".")
    code, _, err = run_main(["apply", target], cwd, capsys)
    assert code == 1, err
    assert snapshot(work) == before
    assert "Packed: used at" in err and "imported from eng.layers.parameter, which is no module" in err


USER = "from {source} import SplitParam\n\n\ndef f(p):\n    return isinstance(p, SplitParam)\n"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_tree_given_through_a_symlink_refuses_what_its_imports_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``codemod apply pkglink`` where ``pkglink -> pkg`` names the files ``pkglink.*``;
    they import each other as ``pkg.*``. The class is refused (it was converted while
    ``user.py``'s ``isinstance(p, SplitParam)`` stayed, a ``TypeError``, and ``check`` passed)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "params.py").write_text(HIERARCHY)
    (tmp_path / "pkg" / "user.py").write_text(USER.format(source="pkg.params"))
    (tmp_path / "pkglink").symlink_to(tmp_path / "pkg", target_is_directory=True)
    before = snapshot(tmp_path / "pkg")
    code, _, err = run_main(["apply", "pkglink"], tmp_path, capsys)
    assert code == 1
    assert snapshot(tmp_path / "pkg") == before
    assert "pkglink/params.py:23: SplitParam: used at pkglink/user.py:1" in err
    assert "imported from pkg.params, which is no module of the tree" in err
    code, out, _ = run_main(["check", "pkglink"], tmp_path, capsys)
    assert code == 1 and "CM001 `SplitParam`" in out and "imported from pkg.params" in out
    # Given by its own name, the same tree converts.
    code, _, _ = run_main(["apply", "pkg"], tmp_path, capsys)
    assert code == 1
    assert "isinstance(p, SplitParam)" not in (tmp_path / "pkg" / "user.py").read_text()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlinked_subpackage_read_under_its_targets_name_refuses_its_relative_import(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``pkg/layers -> ../shared``: the run reads ``shared/user.py`` once, as
    ``shared.user``, where ``from ..params import SplitParam`` climbs above the top package.
    Python runs it as ``pkg.layers.user``; the rewrites cannot follow it: refused."""
    (tmp_path / "pyproject.toml").write_text("")
    for package in ("pkg", "shared"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "pkg" / "params.py").write_text(HIERARCHY)
    (tmp_path / "shared" / "user.py").write_text(USER.format(source="..params"))
    (tmp_path / "pkg" / "layers").symlink_to(Path("..") / "shared", target_is_directory=True)
    before = snapshot(tmp_path)
    code, _, err = run_main(["apply", "."], tmp_path, capsys)
    assert code == 1
    assert snapshot(tmp_path) == before
    assert "SplitParam: used at shared/user.py:1" in err
    assert "climbs above the top package of shared.user" in err


def test_a_src_setting_one_level_too_high_refuses_what_the_imports_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``src = ["."]`` for a ``src/`` layout names the files ``src.eng.…``; they import
    ``eng.…``: refused (it was converted and ``isinstance(p, SplitParam)`` left)."""
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\nsrc = ["."]\n')
    package = tmp_path / "src" / "eng"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "params.py").write_text(HIERARCHY)
    (package / "user.py").write_text(USER.format(source="eng.params"))
    before = snapshot(tmp_path)
    code, _, err = run_main(["apply", "src"], tmp_path, capsys)
    assert code == 1
    assert snapshot(tmp_path) == before
    assert "imported from eng.params, which is no module of the tree as this run names its " \
        "files (src.eng.params is)" in err
