"""The runtime module ``apply`` writes beside each family's root module.

One module per family root (``<root>_features.py``; ``param_features.py`` for a root in an
``__init__.py``), holding the helpers and the one ``Features`` class; the engine's own
files import from it, and none of them carries the runtime or a ``Features`` class.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codemod import api
from codemod.cli import main
from codemod.runtime.emit import GENERATED_MARK, runtime_module_for, written_members
from codemod.types import Options
from tests.speed.test_prefilter import PARAMS, write_tree

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"
SUBCLASS = """
    from pkg.params import Base


    class Scaled(Base):
        def __init__(self, data, scale=1.0, **kwargs):
            super().__init__(data, **kwargs)
            self.scale = scale
"""
USER = """
    from pkg.params import Packed
    from pkg.scaled import Scaled


    def kind(p):
        if isinstance(p, Scaled):
            return "scaled"
        return "packed" if isinstance(p, Packed) else "other"
"""


def _family(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "src", {"pkg/params.py": PARAMS, "pkg/scaled.py": SUBCLASS,
                                         "pkg/user.py": USER}) / "pkg"


def _texts(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))
            if "__pycache__" not in p.parts}


def test_one_runtime_module_per_family_imported_where_needed(tmp_path):
    root = _family(tmp_path)
    assert main(["apply", str(root)]) == 1
    texts = _texts(root)
    runtime = texts["params_features.py"]
    assert runtime.startswith(f'"""{GENERATED_MARK}')
    assert [n for n in texts if n.endswith("_features.py")] == ["params_features.py"]
    tree = ast.parse(runtime)
    features = next(s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == "Features")
    members = {s.targets[0].id: s.value.value for s in features.body if isinstance(s, ast.Assign)}
    assert members == {"Base": "pkg.params.Base", "Packed": "pkg.params.Packed",
                       "Scaled": "pkg.scaled.Scaled"}
    for name in ("params.py", "scaled.py", "user.py"):
        assert "class Features" not in texts[name] and "BoundParamMethod" not in texts[name], name
        assert "from pkg.params_features import" in texts[name], name
        assert "Features_" not in texts[name], name
    assert "import copy" not in texts["params.py"] and "import weakref" not in texts["params.py"]
    probe = ("import torch\nfrom pkg.scaled import Scaled\nfrom pkg.params import Packed\n"
             "from pkg.user import kind\n"
             "print(kind(Scaled(torch.zeros(1), input_dim=2)), kind(Packed(torch.zeros(1))),"
             " kind(torch.zeros(1)))\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=root.parent, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["scaled", "packed", "other"]


def test_second_apply_changes_nothing(tmp_path):
    root = _family(tmp_path)
    assert main(["apply", str(root)]) == 1
    first = _texts(root)
    assert main(["apply", str(root)]) == 0
    assert _texts(root) == first


def test_dry_run_shows_the_runtime_module_as_a_new_file(tmp_path, capsys):
    root = _family(tmp_path)
    assert main(["apply", "--dry-run", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"--- /dev/null\n+++ b/{(root / 'params_features.py').as_posix().lstrip('/')}\n" in out \
        or f"--- /dev/null\n+++ b/{(root / 'params_features.py').as_posix()}\n" in out
    assert not (root / "params_features.py").exists()


def test_runtime_module_is_written_before_the_files_importing_it(tmp_path, monkeypatch):
    import codemod.output.writes as writes

    written: list[str] = []
    real = writes.write_files_atomic

    def record(files, read_as=None):
        written.extend(Path(path).name for path, _, _ in files)
        return real(files, read_as)

    monkeypatch.setattr(writes, "write_files_atomic", record)
    root = _family(tmp_path)
    assert main(["apply", str(root)]) == 1
    assert written[0] == "params_features.py"
    assert set(written) == {"params_features.py", "params.py", "scaled.py", "user.py"}


def test_a_file_of_that_name_not_written_by_codemod_refuses_the_family(tmp_path, capsys):
    root = _family(tmp_path)
    mine = "FLAGS = {'fast': True}\n"
    (root / "params_features.py").write_text(mine)
    before = _texts(root)
    assert main(["apply", str(root)]) == 1  # refusals
    err = capsys.readouterr().err
    assert f"{root / 'params_features.py'}:1: already exists and was not written by codemod" in err
    assert _texts(root) == before


@pytest.mark.parametrize("added", [
    "def my_helper():\n    return 'ok'\n",
    "MY_FLAG = 1\n",
    "from os import path as my_path\n",
    "print('loaded')\n",
])
def test_code_added_to_a_written_runtime_module_is_never_dropped(tmp_path, capsys, added):
    """A later run would write the runtime module again, whole: one holding code this
    version did not write (a helper added by hand) fails the run, naming its line, and
    nothing is written (the helper was dropped, and a module importing it broke)."""
    root = _family(tmp_path)
    assert main(["apply", str(root)]) == 1
    runtime = root / "params_features.py"
    line = len(runtime.read_text().splitlines()) + 3  # where ``added`` starts
    runtime.write_text(runtime.read_text() + "\n\n" + added)
    # A class added to the family's file later: its run writes that runtime module again.
    params = root / "params.py"
    params.write_text(params.read_text() + "\n\nclass Scale(Parameter):\n    pass\n")
    before = _texts(root)
    capsys.readouterr()
    assert main(["apply", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"{runtime}:{line}: the runtime module holds code this version of codemod did not write" in err
    assert _texts(root) == before


def test_a_package_of_that_name_refuses_the_family(tmp_path):
    root = _family(tmp_path)
    (root / "params_features").mkdir()
    (root / "params_features" / "__init__.py").write_text("")
    result = api.run([root], Options())
    assert not result.changed()
    assert all("already exists and was not written by codemod" in r.reason for r in result.refusals)


def test_a_run_resumed_after_the_runtime_module_was_written_ends_the_same(tmp_path):
    """A kill after the runtime module (written first) and the subclass's module were
    replaced: the rerun keeps the members the converted module already uses."""
    whole = _family(tmp_path / "a")
    assert main(["apply", str(whole)]) == 1
    partial = _family(tmp_path / "b")
    for name in ("params_features.py", "scaled.py", "user.py"):
        shutil.copy(whole / name, partial / name)
    assert main(["apply", str(partial)]) == 1
    assert _texts(partial) == _texts(whole)


def test_runtime_module_names():
    assert runtime_module_for("vllm.model_executor.parameter", Path("vllm/model_executor/parameter.py")) \
        == ("vllm.model_executor.parameter_features", Path("vllm/model_executor/parameter_features.py"))
    assert runtime_module_for("pkg", Path("pkg/__init__.py")) == ("pkg.param_features",
                                                                  Path("pkg/param_features.py"))
    assert runtime_module_for("params", Path("params.py")) == ("params_features", Path("params_features.py"))
    assert written_members("FLAGS = 1\n") is None


def test_two_families_with_the_same_class_names_get_one_runtime_module_each(tmp_path):
    families = {f"pkg/{x}/params.py": PARAMS for x in ("a", "b")}
    root = write_tree(tmp_path / "src", {
        **families,
        "pkg/both.py": """
            from pkg.a.params import Packed as PackedA
            from pkg.b.params import Packed as PackedB


            def kind(p):
                return isinstance(p, PackedA), isinstance(p, PackedB)
        """,
    }) / "pkg"
    assert main(["apply", str(root)]) == 1
    texts = _texts(root)
    assert sorted(n for n in texts if n.endswith("_features.py")) == ["a/params_features.py",
                                                                       "b/params_features.py"]
    assert 'Packed = "pkg.b.params.Packed"' in texts["b/params_features.py"]
    both = texts["both.py"]
    assert "Features_" not in both
    assert "from pkg.a.params_features import Features, has_param_feature" in both
    assert "from pkg.b import params_features" in both
    assert "params_features.Features.Packed" in both


def _expected_trees() -> list[Path]:
    return sorted(p / "expected" for p in GOLDEN.iterdir() if (p / "expected").is_dir())


def test_golden_trees_have_no_module_suffixed_features_and_no_pasted_runtime():
    for tree in _expected_trees():
        for path in tree.rglob("*.py"):
            text = path.read_text()
            assert not re.search(r"\bFeatures_\w+", text), path
            if not path.name.endswith("_features.py"):
                assert "class BoundParamMethod" not in text, path
                assert not re.search(r"^class Features\b", text, re.MULTILINE), path


# -- import layout: isort's order, checked by ruff when installed and by a small reader --

def _sections(text: str, first_party: str) -> list[list[tuple[int, bool, str]]] | None:
    """The top import block as (section, is-from, module) groups split at blank lines;
    None when the block holds something else (comments, conditional imports)."""
    lines = text.splitlines()
    tree = ast.parse(text)
    body = tree.body[1:] if tree.body and isinstance(tree.body[0], ast.Expr) else tree.body
    block = []
    for stmt in body:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            break
        block.append(stmt)
    if not block:
        return []
    groups: list[list[tuple[int, bool, str]]] = [[]]
    for previous, stmt in zip([None, *block], block):
        if previous is not None and stmt.lineno - previous.end_lineno > 1:
            if any(lines[n].strip() for n in range(previous.end_lineno, stmt.lineno - 1)):
                return None
            groups.append([])
        module = stmt.names[0].name if isinstance(stmt, ast.Import) else \
            "." * stmt.level + (stmt.module or "")
        top = module.split(".")[0]
        section = (0 if top == "__future__" else 4 if not top else 3 if top == first_party
                   else 1 if top in sys.stdlib_module_names else 2)
        groups[-1].append((section, isinstance(stmt, ast.ImportFrom), module.lower()))
    return groups


def _isort_clean(text: str, first_party: str) -> bool:
    """Sections in order, one blank line between sections and none inside one, each
    section ``import`` lines first, then ``from`` lines, each by module name."""
    groups = _sections(text, first_party)
    if groups is None:
        return False
    keys = [key for group in groups for key in group]
    if keys != sorted(keys):
        return False
    return all(len({s for s, _, _ in group}) == 1 for group in groups) and \
        len({group[0][0] for group in groups if group}) == len([g for g in groups if g])


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if (p / "input").is_dir()))
def test_added_imports_keep_an_isort_clean_block_clean(case):
    inputs, expected = GOLDEN / case / "input", GOLDEN / case / "expected"
    for path in sorted(expected.rglob("*.py")):
        rel = path.relative_to(expected)
        first_party = rel.parts[0]
        before = inputs / rel
        was_clean = _isort_clean(before.read_text(), first_party) if before.exists() else True
        if was_clean:
            assert _isort_clean(path.read_text(), first_party), rel


#: ruff from the test extra (next to this interpreter, as in CI's .venv), else from PATH.
_VENV_RUFF = Path(sys.executable).parent / "ruff"
RUFF = str(_VENV_RUFF) if _VENV_RUFF.is_file() else shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if (p / "input").is_dir()))
def test_ruff_isort_passes_after_apply_where_it_passed_before(case, tmp_path):
    def failing(root: Path) -> set[str]:
        done = subprocess.run([RUFF, "check", "--isolated", "--no-cache", "--select", "I",
                               "--output-format", "concise", "."], cwd=root, capture_output=True,
                              text=True)
        return {line.split(":")[0] for line in done.stdout.splitlines() if ".py:" in line}

    work = Path(shutil.copytree(GOLDEN / case / "input", tmp_path / "tree"))
    before = failing(work)
    main(["apply", str(work)])
    assert failing(work) - before == set()


def test_the_bundled_runtime_cites_nothing_outside_the_repository():
    from codemod.runtime.emit import runtime_module_text, RuntimeModule

    text = runtime_module_text(RuntimeModule("pkg.params_features", Path("pkg/params_features.py"),
                                             "pkg.params", Path("pkg/params.py"), {"X": "pkg.params.X"}))
    assert "DESIGN.md" not in text
    compile(text, "params_features.py", "exec")
    assert textwrap.dedent(text).count("class Features:") == 1
