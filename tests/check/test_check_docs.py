"""The code reference (docs/checks.md), the README section and the pre-commit hook manifest."""

from __future__ import annotations

import re
import tomllib

import pytest

from codemod.check.rules import RULES

from .helpers import run, write_tree


@pytest.fixture(scope="module")
def checks_md(repo_root) -> str:
    return (repo_root / "docs" / "checks.md").read_text()


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_code_is_documented(checks_md, rule):
    heading = f"## {rule.code} `{rule.name}`"
    assert heading in checks_md
    section = checks_md.split(heading, 1)[1].split("\n## ", 1)[0]
    for part in ("**What it finds.**", "**Why it matters.**", "**What to write instead.**",
                 "**How `apply` fixes it.**"):
        assert part in section, f"{rule.code}: missing {part}"
    assert re.search(rf"\| \[{rule.code}\]\(#{rule.code.lower()}-{rule.name}\) \|", checks_md)


def test_readme_links_the_reference(repo_root):
    readme = (repo_root / "README.md").read_text()
    assert "## Check" in readme and "(docs/checks.md)" in readme


def test_pre_commit_hook_manifest(repo_root):
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((repo_root / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "codemod-check"
    assert hook["entry"] == "codemod check" and hook["language"] == "python"
    assert hook["pass_filenames"] is False and hook["args"]
    scripts = tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["codemod"] == "codemod.cli:main_entry"


def test_hook_invocation_runs_from_a_repository_root(tmp_path, capsys, monkeypatch):
    # What pre-commit runs: `codemod check .` in the other repository's root.
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": "x = 1\n"})
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "check", ".").rc == 0
