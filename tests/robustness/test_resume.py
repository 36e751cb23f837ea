"""A killed ``codemod apply`` run again, and two runs at once, end as one uninterrupted run.

``apply`` replaces files one rename at a time (``atomic_writes.write_files_atomic``). A kill
after ``n`` renames leaves the first ``n`` files of its write order converted and the
rest as they were; a second ``apply`` must then recognise what is already converted
(``has_param_feature(p, F.K) or isinstance(p, (K,))`` for a kept base ``K``, a subclass
whose base's module is still a class...) and finish the job, byte for byte as one
uninterrupted run. The kill is replayed exactly: the write order is recorded from an
uninterrupted run (as in ``test_kill``), and the first ``n`` files get its bytes.

Two overlapping runs: run A has read the tree and replaced ``k`` files when run B runs
from start to end; then A goes on with the texts it computed before B. A must not put
its stale texts over B's (it stops, naming the file that changed since it read it), and
the tree ends as one uninterrupted run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import codemod.atomic_writes

from .trees import run_main, snapshot

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "fixtures" / "golden"

#: Trees with a kept base used as a shadow (its refused leaf keeps it a class), a
#: subclass in another module than its base, and the fixture engine.
TREES = {
    "leaf_refused_shadow": GOLDEN / "leaf_refused_shadow" / "input",
    "union_checks": GOLDEN / "union_checks" / "input",
    "cross_file_subclass": GOLDEN / "cross_file_subclass" / "input",
    "dict_copy": GOLDEN / "dict_copy" / "input",
    "attr_dict_reads": GOLDEN / "attr_dict_reads" / "input",
    "property_setter_deleter": GOLDEN / "property_setter_deleter" / "input",
    "namespace_packages": GOLDEN / "namespace_packages" / "input",
    "same_names_two_families": GOLDEN / "same_names_two_families" / "input",
    "use_sites": GOLDEN / "use_sites" / "input",
    "engine": ROOT / "fixtures" / "engine",
}

#: Uses of the kept base ``KeptBase`` of ``union_checks`` in separate modules, so that a
#: kill can fall between them.
SHADOW_USES = {
    f"pkg/use{i}.py": (
        "from pkg.params import KeptBase, Leaf\n\n\n"
        "def check(p, q):\n"
        f"    return isinstance(p, KeptBase), isinstance(q.x, (Leaf, KeptBase)), {i}\n"
    )
    for i in range(3)
}


def _source(name: str, tmp_path: Path) -> Path:
    tree = tmp_path / "source"
    shutil.copytree(TREES[name.removesuffix("+uses")], tree)
    if name.endswith("+uses"):
        for rel, text in SHADOW_USES.items():
            (tree / rel).write_text(text)
    return tree


def _bytes(tree: Path) -> dict[str, bytes]:
    return {rel: entry[0] for rel, entry in snapshot(tree).items()}


def _apply(tree: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code, _out, err = run_main(["apply", "--jobs", "1", tree.name], tree.parent, capsys)
    return code, err


def _uninterrupted(source: Path, work: Path, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], dict[str, bytes]]:
    """The files one uninterrupted run replaces, in its order, and the tree it leaves."""
    tree = work / "tree"
    shutil.copytree(source, tree)
    order: list[str] = []
    real_replace = os.replace

    def replace(src: str, dst: object) -> None:
        order.append(Path(os.fspath(dst)).relative_to(tree.resolve()).as_posix())  # type: ignore[arg-type]
        real_replace(src, dst)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(codemod.atomic_writes.os, "replace", replace)
        assert _apply(tree, capsys)[0] == 1
    return order, _bytes(tree)


@pytest.mark.parametrize("name", [*TREES, "union_checks+uses"])
def test_a_run_killed_after_each_rename_then_run_again(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source(name, tmp_path)
    order, expected = _uninterrupted(source, tmp_path / "full", capsys, monkeypatch)
    assert len(order) >= 2
    for written in range(1, len(order) + 1):
        tree = tmp_path / f"killed{written}" / "tree"
        shutil.copytree(source, tree)
        for rel in order[:written]:
            (tree / rel).write_bytes(expected[rel])
        _apply(tree, capsys)
        now = _bytes(tree)
        wrong = sorted(rel for rel in expected if now.get(rel) != expected[rel])
        assert not wrong, f"killed after {written} of {order}: {wrong} differ"


@pytest.mark.parametrize("name", ["leaf_refused_shadow", "union_checks+uses", "engine"])
def test_two_overlapping_runs(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source(name, tmp_path)
    order, expected = _uninterrupted(source, tmp_path / "full", capsys, monkeypatch)
    for first in range(1, len(order)):
        tree = tmp_path / f"overlap{first}" / "tree"
        shutil.copytree(source, tree)
        real_replace = os.replace
        renames = 0

        def replace(src: str, dst: object) -> None:
            nonlocal renames
            real_replace(src, dst)  # type: ignore[arg-type]
            renames += 1
            if renames == first:  # run A has replaced ``first`` files: run B, whole
                with monkeypatch.context() as inner:
                    inner.setattr(codemod.atomic_writes.os, "replace", real_replace)
                    code_b, _ = _apply(tree, capsys)
                assert code_b == 1

        with monkeypatch.context() as patch:
            patch.setattr(codemod.atomic_writes.os, "replace", replace)
            code_a, err_a = _apply(tree, capsys)
        assert code_a == 2, err_a
        assert "changed on disk since codemod read it" in err_a
        assert _bytes(tree) == expected, f"run B started after {first} of {order}"
