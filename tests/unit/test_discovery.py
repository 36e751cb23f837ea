"""Unit tests for codemod.discovery: walking, excludes, symlinks, prefilter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codemod.discovery import DiscoveryError, iter_python_files
from codemod.prefilters import prefilter
from codemod.types import DEFAULT_EXCLUDES


def make_tree(root: Path, files: list[str]) -> None:
    """Create empty files (and their directories) under ``root``."""
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


def rel(root: Path, found: list[Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in found]


TREE = [
    "a.py",
    "b.txt",
    "stub.pyi",
    "pkg/__init__.py",
    "pkg/sub/deep/mod.py",
    "pkg/generated/gen.py",
    "pkg/test_x.py",
    ".git/hooks/hook.py",
    ".venv/lib/site.py",
    "__pycache__/a.py",
    "build/lib/a.py",
    "x.egg-info/setup.py",
    "tests/fixtures/f.py",
    "other/fixtures/f.py",
]

EXCLUDE_CASES = [
    pytest.param(
        DEFAULT_EXCLUDES,
        (),
        [
            "a.py",
            "other/fixtures/f.py",
            "pkg/__init__.py",
            "pkg/generated/gen.py",
            "pkg/sub/deep/mod.py",
            "pkg/test_x.py",
            "tests/fixtures/f.py",
        ],
        id="defaults",
    ),
    pytest.param(
        (),
        (),
        sorted(p for p in TREE if p.endswith(".py")),
        id="no-excludes",
    ),
    pytest.param(
        DEFAULT_EXCLUDES,
        ("generated", "test_*.py"),
        [
            "a.py",
            "other/fixtures/f.py",
            "pkg/__init__.py",
            "pkg/sub/deep/mod.py",
            "tests/fixtures/f.py",
        ],
        id="extend-by-name",
    ),
    pytest.param(
        DEFAULT_EXCLUDES,
        ("tests/fixtures",),
        [
            "a.py",
            "other/fixtures/f.py",
            "pkg/__init__.py",
            "pkg/generated/gen.py",
            "pkg/sub/deep/mod.py",
            "pkg/test_x.py",
        ],
        id="relative-path-pattern-only-at-that-path",
    ),
    pytest.param(
        DEFAULT_EXCLUDES,
        ("./pkg/sub/", "*/fixtures/f.py"),
        ["a.py", "pkg/__init__.py", "pkg/generated/gen.py", "pkg/test_x.py"],
        id="path-patterns-dot-slash-trailing-slash-and-glob",
    ),
    pytest.param(
        ("pkg",),
        (),
        sorted(p for p in TREE if p.endswith(".py") and not p.startswith("pkg/")),
        id="exclude-replaces-defaults",
    ),
]


@pytest.mark.parametrize(("excludes", "extend", "expected"), EXCLUDE_CASES)
def test_excludes(
    tmp_path: Path, excludes: tuple[str, ...], extend: tuple[str, ...], expected: list[str]
) -> None:
    make_tree(tmp_path, TREE)
    assert rel(tmp_path, iter_python_files([tmp_path], excludes, extend)) == expected


def test_paths_are_joined_onto_the_given_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, ["src/m.py"])
    monkeypatch.chdir(tmp_path)
    assert iter_python_files([Path("src")], DEFAULT_EXCLUDES) == [Path("src/m.py")]
    assert iter_python_files([Path(".")], DEFAULT_EXCLUDES) == [Path("src/m.py")]


def test_sorted_and_deduplicated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, ["z.py", "b/y.py", "a/x.py"])
    monkeypatch.chdir(tmp_path)
    found = iter_python_files(
        [Path("b"), Path("."), Path("a/x.py"), Path("./z.py"), Path("a")], DEFAULT_EXCLUDES
    )
    assert found == [Path("a/x.py"), Path("b/y.py"), Path("z.py")]


@pytest.mark.parametrize(
    "name",
    ["build/keep.py", ".venv/keep.py", "pkg/test_skip.py"],
    ids=["in-excluded-dir", "in-hidden-excluded-dir", "matches-extend-exclude"],
)
def test_explicit_file_is_taken_even_if_excluded(tmp_path: Path, name: str) -> None:
    make_tree(tmp_path, [name])
    assert iter_python_files([tmp_path / name], DEFAULT_EXCLUDES, ("test_*",)) == [tmp_path / name]


def test_explicit_excluded_directory_is_walked(tmp_path: Path) -> None:
    make_tree(tmp_path, ["build/keep.py"])
    assert iter_python_files([tmp_path / "build"], DEFAULT_EXCLUDES) == [tmp_path / "build/keep.py"]


@pytest.mark.parametrize(
    ("name", "create", "message"),
    [
        pytest.param("missing.py", False, "no such file or directory", id="nonexistent"),
        pytest.param("missing_dir", False, "no such file or directory", id="nonexistent-dir"),
        pytest.param("notes.txt", True, "not a Python file", id="explicit-non-python"),
        pytest.param("stub.pyi", True, "not a Python file", id="explicit-stub"),
    ],
)
def test_bad_explicit_paths(tmp_path: Path, name: str, create: bool, message: str) -> None:
    if create:
        (tmp_path / name).write_text("")
    with pytest.raises(DiscoveryError, match=message) as info:
        iter_python_files([tmp_path / name], DEFAULT_EXCLUDES)
    assert str(info.value).startswith(f"{tmp_path / name}: ")


def test_broken_explicit_symlink_is_nonexistent(tmp_path: Path) -> None:
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    with pytest.raises(
        DiscoveryError,
        match=f"dangling.py: no such file or directory \\(broken symbolic link to {tmp_path}/gone.py\\)",
    ):
        iter_python_files([tmp_path / "dangling.py"], DEFAULT_EXCLUDES)


@pytest.mark.parametrize("name", ["loop.py", "loopdir"])
def test_explicit_symlink_loop(tmp_path: Path, name: str) -> None:
    (tmp_path / name).symlink_to(name)
    with pytest.raises(DiscoveryError, match=rf"{name}: symbolic link loop"):
        iter_python_files([tmp_path / name], DEFAULT_EXCLUDES)


def test_explicit_path_below_a_loop(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(DiscoveryError, match=r"loop/m.py: symbolic link loop"):
        iter_python_files([tmp_path / "loop" / "m.py"], DEFAULT_EXCLUDES)


def test_explicit_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    with pytest.raises(DiscoveryError, match=r"pipe.py: not a regular file"):
        iter_python_files([tmp_path / "pipe.py"], DEFAULT_EXCLUDES)


def test_fifo_in_tree_is_skipped(tmp_path: Path) -> None:
    make_tree(tmp_path, ["m.py"])
    os.mkfifo(tmp_path / "pipe.py")
    assert rel(tmp_path, iter_python_files([tmp_path], DEFAULT_EXCLUDES)) == ["m.py"]


def test_same_tree_under_two_spellings_is_walked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, ["pkg/a.py", "pkg/sub/b.py"])
    (tmp_path / "alias").symlink_to("pkg", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    found = iter_python_files(
        [Path("pkg"), tmp_path / "pkg", Path("alias"), Path("pkg/sub"), Path("pkg/a.py")],
        DEFAULT_EXCLUDES,
    )
    assert found == [Path("pkg/a.py"), Path("pkg/sub/b.py")]


def test_first_spelling_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, ["pkg/a.py"])
    monkeypatch.chdir(tmp_path)
    assert iter_python_files([tmp_path / "pkg", Path("pkg")], DEFAULT_EXCLUDES) == [
        tmp_path / "pkg/a.py"
    ]


def test_symlink_loop_is_not_followed(tmp_path: Path) -> None:
    make_tree(tmp_path, ["pkg/m.py"])
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "pkg" / "self").symlink_to(".", target_is_directory=True)
    assert rel(tmp_path, iter_python_files([tmp_path], DEFAULT_EXCLUDES)) == ["pkg/m.py"]


@pytest.mark.parametrize(
    ("link", "target", "kept"),
    [
        # The target is found directly: the file is kept once, under its own name.
        pytest.param("pkg/inside.py", "../real/r.py", False, id="file-link-inside-tree"),
        # The target is excluded (build/): the link is the only way the file is reached.
        pytest.param("pkg/tobuild.py", "../build/b.py", True, id="file-link-into-excluded-dir"),
        pytest.param("pkg/loop.py", "loop.py", False, id="file-link-loop"),
        pytest.param("pkg/ping.py", "pong.py", False, id="file-link-loop-of-two"),
        pytest.param("pkg/outside.py", "{outside}/o.py", False, id="file-link-leaving-tree"),
        pytest.param("pkg/broken.py", "../real/gone.py", False, id="broken-link"),
        pytest.param("pkg/dir.py", "../real", False, id="link-named-py-to-directory"),
        pytest.param("pkg/outdir", "{outside}", False, id="dir-link-leaving-tree"),
        # Entered, but its files are found directly too: kept under their own names.
        pytest.param("pkg/indir", "../real", False, id="dir-link-inside-tree-found-directly"),
    ],
)
def test_symlinks(tmp_path: Path, link: str, target: str, kept: bool) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    make_tree(root, ["pkg/m.py", "real/r.py", "build/b.py"])
    make_tree(outside, ["o.py"])
    (root / link).symlink_to(target.format(outside=outside))
    if link == "pkg/ping.py":
        (root / "pkg/pong.py").symlink_to("ping.py")
    expected = ["pkg/m.py", "real/r.py", *([link] if kept else [])]
    assert rel(root, iter_python_files([root], DEFAULT_EXCLUDES)) == sorted(expected)


def test_symlinked_subpackage_is_entered_once(tmp_path: Path) -> None:
    """A symlinked directory whose target is only reached through links (here: an
    excluded ``build/``) is walked once, under the first link's path; links back to
    an ancestor are loops and never entered."""
    make_tree(tmp_path, ["pkg/m.py", "build/ops/k.py"])
    (tmp_path / "pkg/ops").symlink_to("../build/ops", target_is_directory=True)
    (tmp_path / "pkg/ops2").symlink_to("../build/ops", target_is_directory=True)
    (tmp_path / "build/ops/up").symlink_to("../..", target_is_directory=True)
    assert rel(tmp_path, iter_python_files([tmp_path], DEFAULT_EXCLUDES)) == [
        "pkg/m.py", "pkg/ops/k.py"]


def test_symlinked_directory_leaving_the_project_is_reported(tmp_path: Path) -> None:
    make_tree(tmp_path / "root", ["pkg/m.py"])
    make_tree(tmp_path / "outside/py", ["o.py"])
    make_tree(tmp_path / "outside/data", ["weights.bin"])
    (tmp_path / "root/pkg/py").symlink_to(tmp_path / "outside/py", target_is_directory=True)
    (tmp_path / "root/pkg/data").symlink_to(tmp_path / "outside/data", target_is_directory=True)
    links_out: list[str] = []
    found = iter_python_files([tmp_path / "root"], DEFAULT_EXCLUDES, links_out=links_out)
    assert rel(tmp_path / "root", found) == ["pkg/m.py"]
    # Only a link to a directory holding Python files is reported.
    assert links_out == [str(tmp_path / "root/pkg/py")]


def test_symlinked_root_directory_is_walked(tmp_path: Path) -> None:
    make_tree(tmp_path / "real", ["m.py"])
    (tmp_path / "real" / "link.py").symlink_to("m.py")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "real" / "sub").mkdir()
    (tmp_path / "real" / "sub" / "n.py").write_text("")
    found = iter_python_files([tmp_path / "alias"], DEFAULT_EXCLUDES)
    # link.py points at m.py: one file, kept under its own name.
    assert found == [tmp_path / "alias/m.py", tmp_path / "alias/sub/n.py"]


def test_unlistable_directory_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, ["locked/m.py"])
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if path.endswith("locked"):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr("codemod.discovery.os.scandir", scandir)
    with pytest.raises(DiscoveryError, match="locked: cannot list directory: Permission denied"):
        iter_python_files([tmp_path], DEFAULT_EXCLUDES)


def test_walks_3000_files(tmp_path: Path) -> None:
    # Speed is measured by bench/, not asserted here (a timed unit test is flaky on a
    # busy 2-core machine); this checks the walk over a large tree is complete.
    files = [f"pkg{i // 300}/sub{i // 30 % 10}/m{i}.py" for i in range(3000)]
    make_tree(tmp_path, [*files, "pkg0/__pycache__/x.py", "pkg0/data.json"])
    found = iter_python_files([tmp_path], DEFAULT_EXCLUDES)
    assert len(found) == 3000
    assert all(p.suffix == ".py" and "__pycache__" not in p.parts for p in found)


PREFILTER_CASES = [
    pytest.param("class A(BasevLLMParameter): pass", {"BasevLLMParameter"}, True, id="mentions"),
    pytest.param("import os\n", {"BasevLLMParameter"}, False, id="absent"),
    pytest.param("x = MyParameterX", {"Parameter"}, False, id="whole-identifier-only"),
    pytest.param("x = nn.Parameter(t)", {"Parameter"}, True, id="attribute-tail"),
    pytest.param("x = a.b", {"a.b"}, True, id="literal-dot"),
    pytest.param("x = axb", {"a.b"}, False, id="dot-is-not-a-wildcard"),
    pytest.param("x = (Foo|Bar)", {"(Foo|Bar)"}, True, id="regex-metacharacters-escaped"),
    pytest.param("x = Foo", {"(Foo|Bar)"}, False, id="metacharacters-not-regex"),
    pytest.param("y = Two", {"One", "Two", "Three"}, True, id="any-of-many"),
    pytest.param("anything", set(), False, id="empty-names"),
    pytest.param("", {"A"}, False, id="empty-text"),
]


@pytest.mark.parametrize(("text", "names", "expected"), PREFILTER_CASES)
def test_prefilter(text: str, names: set[str], expected: bool) -> None:
    assert prefilter(text, frozenset(names)) is expected


def test_prefilter_caches_the_regex() -> None:
    from codemod.prefilters import _names_regex

    names = frozenset({"CachedName"})
    prefilter("x", names)
    assert _names_regex(names) is _names_regex(frozenset({"CachedName"}))


@pytest.mark.parametrize("source", [
    "isinstance(p, Packed | Base)",
    "isinstance(p, (Packed | torch.Tensor, int))",
    "issubclass(k, Base | None)",
    "PAIR = Packed | Base",
])
def test_a_union_of_classes_is_never_inert(source: str) -> None:
    """A union is rewritten (in ``isinstance``/``issubclass``) or refuses the class (a
    value ``A | B`` needs a class): a file holding one must reach the engine."""
    from codemod.prefilters import inert

    text = f"from pkg.params import Base, Packed\n\n{source}\n"
    assert not inert(text, frozenset({"Base", "Packed"}))


# The scans find gate words with substring searches and widen them to identifiers; each
# must give what the regex that defines it gives (names that are prefixes of each other,
# non-ASCII identifiers, dotted chains, mentions inside and outside import statements).
SCAN_TEXTS = [
    "from .p import Param, ParamX as PX\nx = Param(1)\ny = ParamX\nisinstance(a, Param)\n",
    "from pkg import (\n    Param,  # comment\n    Other,\n)\nv = Param(2)\nw = Param (3)\n",
    "a.Param.c.Param q.Param (x).a.Param ..a.Param a..b.Param x.Paramy.Param é.Param 1.Param",
    "éParam = Paramé + _Param + Param_ + Param\nclass K(mod.Param, Other): pass\n",
    "import Param\nParam\nimport x\n",
    "Param\tas P\nParamX  as\n Y",
]
SCAN_NAMES = [{"Param"}, {"Param", "ParamX"}, {"Param", "Other", "_Param"}, {"ParamX"},
              {"a.Param"}, {"x", "Param"}]


@pytest.mark.parametrize("text", SCAN_TEXTS)
@pytest.mark.parametrize("names", SCAN_NAMES)
def test_fast_scans_agree_with_their_regexes(text: str, names: set[str]) -> None:
    import re

    from codemod import prefilters
    from codemod.analysis.text_search import alternation

    chosen = frozenset(names)
    pattern = re.compile(rf"(?<![\w])(?:{alternation(chosen)})(?![\w])")
    spans = [m.span() for m in pattern.finditer(text)]
    assert prefilters.whole_word_spans(text, chosen) == spans
    assert prefilters.mentioned(text, chosen) == frozenset(text[s:e] for s, e in spans)
    assert prefilters.prefilter(text, chosen) is bool(spans)
    dotted = re.compile(rf"(?<![\w.])(\w+(?:\.\w+)*)\.(?:{alternation(chosen)})(?!\w)")
    assert prefilters.dotted_chains(text, chosen) == [m.group(1) for m in dotted.finditer(text)]
    aliased = re.compile(rf"(?<![\w])(?:{alternation(chosen)})\s+as\s+\w")
    loose = [m.start() for m in re.finditer(
        rf"(?<![\w])(?:{alternation(chosen)})(?![\w])(?![ \t]*\()", text)]
    imports = [m.span() for m in prefilters._IMPORT_SPAN.finditer(text)]
    in_imports = all(any(s <= at < e for s, e in imports) for at in loose)
    bases = "class" in text and any(
        prefilters.prefilter(b, chosen) for b in prefilters._class_bases(text))
    assert prefilters.inert(text, chosen) is (not aliased.search(text) and not bases and in_imports)
