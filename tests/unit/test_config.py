"""Unit tests for codemod.config: pyproject lookup and [tool.codemod] validation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codemod.config import Config, ConfigError, find_pyproject, load_config


def write_pyproject(directory: Path, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pyproject.toml"
    path.write_text(body)
    return path


@pytest.mark.parametrize(
    ("pyprojects", "start", "expected"),
    [
        pytest.param(["."], "pkg/sub/m.py", ".", id="walk-up-from-file"),
        pytest.param(["."], "pkg/sub", ".", id="walk-up-from-dir"),
        pytest.param([".", "pkg"], "pkg/sub/m.py", "pkg", id="nearest-wins"),
        pytest.param(["."], "pkg/sub/missing.py", ".", id="start-need-not-exist"),
        pytest.param([".", "pkg/sub"], "pkg/sub", "pkg/sub", id="start-dir-itself"),
        pytest.param([".", "pkg"], "other/m.py", ".", id="sibling-not-used"),
        pytest.param([], "pkg/sub/m.py", None, id="none"),
    ],
)
def test_find_pyproject(
    tmp_path: Path, pyprojects: list[str], start: str, expected: str | None
) -> None:
    root = tmp_path / "project"
    for name in ("pkg/sub/m.py", "other/m.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    for directory in pyprojects:
        write_pyproject(root / directory, "")
    if expected is None and find_pyproject(tmp_path) is not None:
        pytest.skip("a pyproject.toml above the temp directory")
    found = find_pyproject(root / start)
    assert found == (None if expected is None else root / expected / "pyproject.toml")


def test_find_pyproject_relative_start_with_dotdot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_pyproject(tmp_path / "b", "")
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    assert find_pyproject(Path("../b")) == tmp_path / "b" / "pyproject.toml"


def test_nearest_pyproject_without_table_gives_defaults(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.codemod]\njobs = 4\n")
    inner = write_pyproject(tmp_path / "pkg", "[project]\nname = 'x'\n")
    assert load_config(tmp_path / "pkg") == Config(source=inner)


def test_no_pyproject_gives_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("codemod.config.find_pyproject", lambda start: None)
    assert load_config(tmp_path) == Config()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("", {}, id="empty-table"),
        pytest.param(
            'exclude = ["gen", "*/fixtures"]', {"exclude": ("gen", "*/fixtures")}, id="exclude"
        ),
        pytest.param("exclude = []", {"exclude": ()}, id="exclude-empty-means-nothing-excluded"),
        pytest.param('extend-exclude = ["x"]', {"extend_exclude": ("x",)}, id="extend-exclude"),
        pytest.param(
            'allow-classes = ["ModelWeightParameter", "vllm.parameter.BasevLLMParameter"]',
            {
                "allow_classes": (
                    "ModelWeightParameter",
                    "vllm.parameter.BasevLLMParameter",
                )
            },
            id="allow-classes",
        ),
        pytest.param("jobs = 8", {"jobs": 8}, id="jobs"),
        pytest.param('feature-prefix = "Vllm"', {"feature_prefix": "Vllm"}, id="feature-prefix"),
        pytest.param('feature-prefix = ""', {"feature_prefix": ""}, id="feature-prefix-empty"),
        pytest.param(
            'jobs = 2\nexclude = ["a"]\nextend-exclude = ["b"]\n'
            'allow-classes = ["C"]\nfeature-prefix = "P_"',
            {
                "jobs": 2,
                "exclude": ("a",),
                "extend_exclude": ("b",),
                "allow_classes": ("C",),
                "feature_prefix": "P_",
            },
            id="all-keys",
        ),
    ],
)
def test_each_key(tmp_path: Path, body: str, expected: dict[str, object]) -> None:
    path = write_pyproject(tmp_path, f"[project]\nname = 'x'\n\n[tool.codemod]\n{body}\n")
    assert load_config(tmp_path / "m.py") == Config(source=path, **expected)  # type: ignore[arg-type]


def test_inline_table_form(tmp_path: Path) -> None:
    path = write_pyproject(tmp_path, "[tool]\ncodemod = { jobs = 3 }\n")
    assert load_config(tmp_path) == Config(jobs=3, source=path)


ERROR_CASES = [
    pytest.param(
        "[tool.codemod]\njobs = 'x'",
        "[tool.codemod] jobs: expected a positive integer, got 'x'",
        id="jobs-str",
    ),
    pytest.param(
        "[tool.codemod]\njobs = 0", "jobs: expected a positive integer, got 0", id="jobs-zero"
    ),
    pytest.param(
        "[tool.codemod]\njobs = -1", "jobs: expected a positive integer, got -1", id="jobs-negative"
    ),
    pytest.param(
        "[tool.codemod]\njobs = true", "jobs: expected a positive integer, got True", id="jobs-bool"
    ),
    pytest.param(
        "[tool.codemod]\njobs = 1.5", "jobs: expected a positive integer, got 1.5", id="jobs-float"
    ),
    pytest.param(
        '[tool.codemod]\nexclude = "build"',
        "exclude: expected a list of non-empty strings, got 'build'",
        id="exclude-str",
    ),
    pytest.param(
        "[tool.codemod]\nexclude = [1]",
        "exclude: expected a list of non-empty strings, got [1]",
        id="exclude-int-item",
    ),
    pytest.param(
        '[tool.codemod]\nextend-exclude = [""]',
        "extend-exclude: expected a list of non-empty strings",
        id="extend-exclude-empty-item",
    ),
    pytest.param(
        '[tool.codemod]\nallow-classes = "A"',
        "allow-classes: expected a list of non-empty strings",
        id="allow-classes-str",
    ),
    pytest.param(
        '[tool.codemod]\nallow-classes = ["a.b-c"]',
        "allow-classes: expected class names like",
        id="allow-classes-bad-name",
    ),
    pytest.param(
        '[tool.codemod]\nallow-classes = ["a..B"]',
        "allow-classes: expected class names like",
        id="allow-classes-empty-part",
    ),
    pytest.param(
        "[tool.codemod]\nfeature-prefix = 1",
        "feature-prefix: expected an identifier prefix",
        id="feature-prefix-int",
    ),
    pytest.param(
        '[tool.codemod]\nfeature-prefix = "1x"',
        "feature-prefix: expected an identifier prefix",
        id="feature-prefix-digit",
    ),
    pytest.param(
        '[tool.codemod]\nfeature-prefix = "a-b"',
        "feature-prefix: expected an identifier prefix",
        id="feature-prefix-dash",
    ),
    pytest.param(
        "[tool.codemod]\njobz = 2",
        "[tool.codemod] unknown key 'jobz' (did you mean 'jobs'?)",
        id="unknown-key-typo",
    ),
    pytest.param(
        "[tool.codemod]\nallow_classes = []",
        "unknown key 'allow_classes' (did you mean 'allow-classes'?)",
        id="unknown-key-snake-case",
    ),
    pytest.param(
        "[tool.codemod]\nzzz = 1",
        "unknown key 'zzz'; known keys: exclude, extend-exclude",
        id="unknown-key-no-suggestion",
    ),
    pytest.param(
        "[tool]\ncodemod = 3", "[tool.codemod]: expected a table, got 3", id="table-not-a-table"
    ),
    pytest.param("[tool.codemod\njobs = 2", "invalid TOML: ", id="invalid-toml"),
    pytest.param("[tool.codemod]\njobs = 2\njobs = 3", "invalid TOML: ", id="duplicate-key"),
]


@pytest.mark.parametrize(("body", "message"), ERROR_CASES)
def test_errors_name_file_and_key(tmp_path: Path, body: str, message: str) -> None:
    path = write_pyproject(tmp_path, body + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    text = str(info.value)
    assert text.startswith(f"{path}: "), text
    assert message in text, text


def test_invalid_toml_names_line(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[project]\nname = 'x'\n[tool.codemod]\njobs = = 2\n")
    with pytest.raises(ConfigError, match=re.escape("(at line 4, column")):
        load_config(tmp_path)


def test_non_utf8_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b"# \xff\n")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        load_config(tmp_path)


def test_unreadable_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_pyproject(tmp_path, "")

    def deny(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", deny)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: cannot read: Permission denied")):
        load_config(tmp_path)
