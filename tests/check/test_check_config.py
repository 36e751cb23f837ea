"""``codemod check``: suppression comments, ``[tool.codemod]`` allow-list and excludes,
configuration and input errors (exit 2, naming the file and the key)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod.check.findings import comments_by_line, is_suppressed
from codemod.check.rules import Finding

from .helpers import BASE_TREE, run, write_tree

LAZY = """
    from torch.nn.parameter import UninitializedParameter


    class Lazy(UninitializedParameter):
        cls_to_become = None
"""


@pytest.mark.parametrize(
    ("comment", "code", "suppressed"),
    [
        pytest.param("# codemod: ignore", "CM001", True, id="bare"),
        pytest.param("#codemod:ignore", "CM004", True, id="no-spaces"),
        pytest.param("# noqa: E501  # codemod: ignore[CM001]", "CM001", True, id="after-noqa"),
        pytest.param("# codemod: ignore[CM002, CM001]", "CM001", True, id="list"),
        pytest.param("# codemod: ignore[cm001]", "CM001", True, id="lower-case"),
        pytest.param("# codemod: ignore[CM004]", "CM001", False, id="other-code"),
        pytest.param("# codemod: ignored", "CM001", False, id="not-the-word"),
        pytest.param("# codemod", "CM001", False, id="no-ignore"),
        pytest.param("", "CM001", False, id="none"),
        # Review of 2026-12-06: the word test ran before the case-insensitive regex, a
        # blank before the brackets or a hyphen after the word made a blanket ignore.
        pytest.param("# CODEMOD: IGNORE[CM001]", "CM001", True, id="upper-case"),
        pytest.param("# codemod: ignore [CM004]", "CM001", False, id="blank-before-codes"),
        pytest.param("# codemod: ignore [CM001]", "CM001", True, id="blank-before-own-code"),
        pytest.param("# codemod: ignore-this", "CM001", False, id="hyphenated"),
        # The review of that fix: text after the codes made a blanket ignore again.
        pytest.param("# codemod: ignore[CM006]-until-v2", "CM001", False, id="text-after-codes"),
        pytest.param("# codemod: ignore[CM006]x", "CM001", False, id="letter-after-codes"),
        pytest.param("# codemod: ignore[CM001]-until-v2", "CM001", True, id="own-code-then-text"),
        pytest.param("# codemod: ignore[CM006", "CM001", False, id="unclosed-codes"),
    ],
)
def test_suppression_comment_forms(comment, code, suppressed):
    finding = Finding(code, "m", Path("a.py"), 2, 1, True)
    text = f"x = 1\nclass A(Base):  {comment}\n    pass\n"
    assert is_suppressed(finding, comments_by_line(text)) is suppressed


CLOSING = "x = f('''first\nhe said \"hi''', isinstance(p, B), \"# codemod: ignore\")\n"


@pytest.mark.parametrize(("text", "line", "suppressed"), [
    pytest.param('log = "# codemod: ignore"; ok = isinstance(p, Base)\n', 1, False, id="in-a-string"),
    pytest.param("log = '#'; ok = isinstance(p, Base)  # codemod: ignore\n", 1, True,
                 id="after-a-string"),
    pytest.param('s = """# codemod: ignore"""; ok = 1\n', 1, False, id="in-triple-quotes"),
    pytest.param('s = "a\\"#"; ok = 1  # codemod: ignore\n', 1, True, id="escaped-quote"),
    pytest.param(CLOSING, 2, False, id="closing-a-triple-quoted-string"),
    pytest.param("x = f'{a}'  # codemod: ignore\n", 1, True, id="after-an-f-string"),
    pytest.param("def f(:  # codemod: ignore\n", 1, True, id="does-not-tokenize"),
])
def test_only_a_comment_suppresses(text, line, suppressed):
    finding = Finding("CM002", "m", Path("a.py"), line, 1, True)
    assert is_suppressed(finding, comments_by_line(text)) is suppressed


def test_suppression_in_a_tree(tmp_path, capsys):
    tree = dict(BASE_TREE)
    tree["pkg/params.py"] = BASE_TREE["pkg/params.py"].replace(
        "class Packed(Base):", "class Packed(Base):  # codemod: ignore[CM001]"
    )
    tree["pkg/layers.py"] = BASE_TREE["pkg/layers.py"].replace(
        "isinstance(p, Base),", "isinstance(p, Base),  # codemod: ignore"
    ).replace("type(p) is Base,", "type(p) is Base,  # codemod: ignore[CM001]")
    root = write_tree(tmp_path / "src", tree)
    result = run(capsys, "check", root)
    assert result.rc == 1
    assert ("params.py", 16, "CM001") not in result.findings()
    assert ("layers.py", 8, "CM002") not in result.findings()
    assert ("layers.py", 11, "CM002") in result.findings()  # wrong code: still reported
    assert len(result.findings()) == 6
    assert "2 suppressed" in result.err


def test_everything_suppressed_exits_0(tmp_path, capsys):
    root = write_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/lazy.py": LAZY.replace(
        "class Lazy(UninitializedParameter):", "class Lazy(UninitializedParameter):  # codemod: ignore")})
    result = run(capsys, "check", root)
    assert (result.rc, result.out) == (0, "")
    assert "All checks passed" in result.err and "1 suppressed" in result.err


def _project(tmp_path: Path, config: str, files: dict[str, str]) -> Path:
    write_tree(tmp_path / "proj", {"pyproject.toml": config, **files})
    return tmp_path / "proj"


@pytest.mark.parametrize("name", ["Lazy", "pkg.lazy.Lazy"])
def test_allow_classes(tmp_path, capsys, name):
    root = _project(tmp_path, f'[tool.codemod]\nallow-classes = ["{name}"]\n',
                    {"pkg/__init__.py": "", "pkg/lazy.py": LAZY})
    result = run(capsys, "check", root / "pkg")
    assert (result.rc, result.out) == (0, "")


def test_allow_classes_is_per_class(tmp_path, capsys):
    # Allowing the root does not allow a new subclass of it.
    root = _project(tmp_path, '[tool.codemod]\nallow-classes = ["Lazy"]\n', {
        "pkg/__init__.py": "",
        "pkg/lazy.py": LAZY + "\n\n    class Lazier(Lazy):\n        pass\n",
    })
    result = run(capsys, "check", root)
    assert result.rc == 1
    assert [(f[0], f[2]) for f in result.findings()] == [("lazy.py", "CM001")]
    assert "`Lazier`" in result.out and "keeps it a class" in result.out and "Lazy" in result.out.split("keeps it a class")[1]


def test_without_allow_list_an_uninitialized_parameter_is_a_finding(tmp_path, capsys):
    root = _project(tmp_path, "", {"pkg/__init__.py": "", "pkg/lazy.py": LAZY})
    result = run(capsys, "check", root)
    assert result.rc == 1
    assert "UninitializedParameter, whose lazy shape a plain Parameter cannot hold" in result.out


@pytest.mark.parametrize(
    "config",
    [
        pytest.param('[tool.codemod]\nextend-exclude = ["legacy"]\n', id="extend-exclude"),
        pytest.param('[tool.codemod]\nexclude = ["legacy/"]\n', id="exclude"),
    ],
)
def test_excluded_paths(tmp_path, capsys, config):
    root = _project(tmp_path, config, {"legacy/__init__.py": "", "legacy/lazy.py": LAZY})
    assert run(capsys, "check", root).rc == 0
    assert run(capsys, "check", "--extend-exclude", "nothing", root).rc == 0
    (root / "pyproject.toml").write_text("")
    assert run(capsys, "check", root).rc == 1


@pytest.mark.parametrize(
    ("config", "names"),
    [
        pytest.param('[tool.codemod]\nallow-class = ["X"]\n', ["allow-class", "allow-classes"],
                     id="unknown-key"),
        pytest.param('[tool.codemod]\nallow-classes = "X"\n', ["allow-classes", "list"],
                     id="wrong-type"),
        pytest.param('[tool.codemod]\nallow-classes = ["not a name"]\n', ["allow-classes"],
                     id="bad-class-name"),
        pytest.param('[tool.codemod]\nextend-exclude = [1]\n', ["extend-exclude"], id="bad-glob"),
        pytest.param("[tool.codemod\n", ["invalid TOML"], id="invalid-toml"),
        pytest.param('[tool]\ncodemod = 3\n', ["[tool.codemod]", "table"], id="not-a-table"),
    ],
)
def test_config_errors_exit_2_naming_file_and_key(tmp_path, capsys, config, names):
    root = _project(tmp_path, config, {"pkg/__init__.py": "", "pkg/lazy.py": LAZY})
    result = run(capsys, "check", root)
    assert result.rc == 2
    assert result.out == ""
    assert str(root / "pyproject.toml") in result.err
    for name in names:
        assert name in result.err


def test_unparsable_file_exits_2_and_names_it(tmp_path, capsys):
    root = write_tree(tmp_path / "src", {**BASE_TREE, "pkg/broken.py": (
        "from pkg.params import Base\n\n\ndef f(p:\n    return isinstance(p, Base)\n")})
    result = run(capsys, "check", root)
    assert result.rc == 2
    assert "broken.py" in result.err and "syntax error" in result.err
    # The other findings are still reported.
    assert ("params.py", 4, "CM001") in result.findings()


def test_a_file_the_prefilter_rules_out_is_never_parsed(tmp_path, capsys):
    root = write_tree(tmp_path / "src", {**BASE_TREE, "pkg/unrelated.py": "def f(:\n"})
    result = run(capsys, "check", root)
    assert result.rc == 1 and "unrelated.py" not in result.err


def test_missing_path_exits_2(tmp_path, capsys):
    result = run(capsys, "check", tmp_path / "nope")
    assert result.rc == 2 and "no such file or directory" in result.err


def test_no_path_is_a_usage_error(capsys):
    assert run(capsys, "check").rc == 2
