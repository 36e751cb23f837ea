"""``codemod check``'s result cache: a hit answers exactly what a fresh run does, without
running the engine; any change to what the check reads makes it run again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import codemod.check.engine as engine
from codemod.check.cache import CACHE_DIR_NAME, NO_CACHE_ENV

from .helpers import BASE_TREE, run, write_tree

FORMATS = ("text", "json", "github", "sarif")


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """BASE_TREE under ``tmp_path/src`` with a ``pyproject.toml`` (the project root, where
    the cache goes by default); the working directory is ``tmp_path``; caching on."""
    write_tree(tmp_path / "src", BASE_TREE)
    (tmp_path / "pyproject.toml").write_text("[tool.codemod]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(NO_CACHE_ENV, raising=False)
    monkeypatch.delenv("CODEMOD_CACHE_DIR", raising=False)
    return Path("src")


@pytest.fixture
def engine_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[Path]]:
    """The paths of each engine run (a cache hit adds none)."""
    runs: list[list[Path]] = []
    original = engine.check_tree

    def counting(paths, options):
        runs.append(list(paths))
        return original(paths, options)

    monkeypatch.setattr(engine, "check_tree", counting)
    return runs


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_hit_prints_exactly_what_the_run_that_stored_it_printed(tree, capsys, engine_runs, fmt):
    first = run(capsys, "check", "--format", fmt, tree)
    second = run(capsys, "check", "--format", fmt, tree)
    assert len(engine_runs) == 1  # the second answer came from the cache
    assert (second.rc, second.out, second.err) == (first.rc, first.out, first.err)
    assert first.rc == 1 and first.out
    assert (tree.parent / CACHE_DIR_NAME).is_dir()


def test_a_hit_answers_as_a_run_without_the_cache(tree, capsys, engine_runs):
    cached = [run(capsys, "check", tree) for _ in range(2)]
    fresh = run(capsys, "check", "--no-cache", tree)
    assert len(engine_runs) == 2
    assert (cached[1].rc, cached[1].out, cached[1].err) == (fresh.rc, fresh.out, fresh.err)


def test_statistics_and_suppressions_from_a_hit(tree, capsys, engine_runs):
    layers = tree / "pkg" / "layers.py"
    layers.write_text(layers.read_text().replace(
        "isinstance(p, Base),", "isinstance(p, Base),  # codemod: ignore[CM002]"))
    first = run(capsys, "check", "--statistics", tree)
    second = run(capsys, "check", "--statistics", tree)
    assert len(engine_runs) == 1
    assert (second.rc, second.out, second.err) == (first.rc, first.out, first.err)
    assert "1 suppressed" in second.err


def test_a_changed_file_runs_the_check_again(tree, capsys, engine_runs):
    first = run(capsys, "check", tree)
    layers = tree / "pkg" / "layers.py"
    text = layers.read_text()
    layers.write_text(text.replace("type(p) is Base,", "type(p) is not None,"))
    second = run(capsys, "check", tree)
    assert len(engine_runs) == 2
    assert len(second.findings()) == len(first.findings()) - 1
    layers.write_text(text)  # back as it was: the stored entry is for the changed text
    third = run(capsys, "check", tree)
    assert len(engine_runs) == 3
    assert third.out == first.out


def test_same_size_and_time_but_other_bytes_runs_again(tree, capsys, engine_runs):
    """The contents decide, not only ``stat``: a file rewritten with the same size and
    modification time (within the racy window, or with its time set back) is hashed."""
    run(capsys, "check", tree)
    layers = tree / "pkg" / "layers.py"
    stat = layers.stat()
    text = layers.read_text()
    layers.write_text(text.replace("type(p) is Base", "type(p) is Bass"))
    os.utime(layers, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = run(capsys, "check", tree)
    assert len(engine_runs) == 2
    assert "layers.py:11" not in second.out


def test_a_new_or_removed_file_runs_the_check_again(tree, capsys, engine_runs):
    run(capsys, "check", tree)
    extra = tree / "pkg" / "extra.py"
    extra.write_text("from pkg.params import Base\n\nclass Mine(Base):\n    pass\n")
    second = run(capsys, "check", tree)
    assert len(engine_runs) == 2
    assert "extra.py:3:1: CM001" in second.out
    extra.unlink()
    run(capsys, "check", tree)
    assert len(engine_runs) == 3


def test_other_options_or_paths_do_not_share_an_entry(tree, capsys, engine_runs):
    run(capsys, "check", tree)
    allowed = run(capsys, "check", "--extend-exclude", "layers.py", tree)
    assert len(engine_runs) == 2
    assert "layers.py" not in allowed.out
    run(capsys, "check", tree / "pkg" / "params.py")
    assert len(engine_runs) == 3
    again = run(capsys, "check", "--extend-exclude", "layers.py", tree)
    assert len(engine_runs) == 3 and again.out == allowed.out


def test_a_changed_configuration_runs_the_check_again(tree, capsys, engine_runs):
    first = run(capsys, "check", tree)
    (tree.parent / "pyproject.toml").write_text('[tool.codemod]\nallow-classes = ["Packed"]\n')
    second = run(capsys, "check", tree)
    assert len(engine_runs) == 2
    assert len(second.findings()) < len(first.findings())


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong shape", "empty"])
def test_a_corrupt_entry_is_ignored_and_replaced(tree, capsys, engine_runs, damage):
    first = run(capsys, "check", "--format", "json", tree)
    [entry] = (tree.parent / CACHE_DIR_NAME).glob("check-*.json")
    text = entry.read_text()
    entry.write_text({
        "garbage": "\x00not json{",
        "truncated": text[: len(text) // 2],
        "wrong shape": json.dumps({**json.loads(text), "result": {"findings": [{"code": 1}]}}),
        "empty": "",
    }[damage])
    second = run(capsys, "check", "--format", "json", tree)
    assert len(engine_runs) == 2
    assert (second.rc, second.out, second.err) == (first.rc, first.out, first.err)
    third = run(capsys, "check", "--format", "json", tree)
    assert len(engine_runs) == 2  # the entry was written again
    assert third.out == first.out


def test_an_entry_with_forged_contents_is_not_trusted(tree, capsys, engine_runs):
    """An entry whose stored file list differs from the tree's is another tree's."""
    run(capsys, "check", tree)
    [entry] = (tree.parent / CACHE_DIR_NAME).glob("check-*.json")
    data = json.loads(entry.read_text())
    data["files"][0][2] = "0" * 40
    data["files"][0][1] = None  # no stat to trust: the hash is compared
    entry.write_text(json.dumps(data))
    run(capsys, "check", tree)
    assert len(engine_runs) == 2


def test_no_cache_neither_reads_nor_writes(tree, capsys, engine_runs, monkeypatch):
    run(capsys, "check", "--no-cache", tree)
    run(capsys, "check", "--no-cache", tree)
    assert len(engine_runs) == 2
    assert not (tree.parent / CACHE_DIR_NAME).exists()
    monkeypatch.setenv(NO_CACHE_ENV, "1")
    run(capsys, "check", tree)
    assert not (tree.parent / CACHE_DIR_NAME).exists()


def test_cache_dir_option_and_environment(tree, capsys, engine_runs, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    run(capsys, "check", "--cache-dir", elsewhere, tree)
    run(capsys, "check", "--cache-dir", elsewhere, tree)
    assert len(engine_runs) == 1
    assert list(elsewhere.glob("check-*.json")) and (elsewhere / ".gitignore").is_file()
    assert not (tree.parent / CACHE_DIR_NAME).exists()
    monkeypatch.setenv("CODEMOD_CACHE_DIR", str(elsewhere))
    run(capsys, "check", tree)
    assert len(engine_runs) == 1


def test_a_cache_that_cannot_be_written_is_skipped(tree, capsys, engine_runs, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    first = run(capsys, "check", "--cache-dir", blocker / "cache", tree)
    second = run(capsys, "check", "--cache-dir", blocker / "cache", tree)
    assert len(engine_runs) == 2
    assert first.rc == second.rc == 1 and first.out == second.out


def test_errors_are_answered_from_the_cache_too(tree, capsys, engine_runs):
    (tree / "pkg" / "broken.py").write_text("from pkg.params import Base\nisinstance(x, Base\n")
    first = run(capsys, "check", tree)
    second = run(capsys, "check", tree)
    assert first.rc == 2 and "broken.py" in first.err
    assert len(engine_runs) == 1
    assert (second.rc, second.out, second.err) == (first.rc, first.out, first.err)


def test_a_hit_does_not_import_libcst(tree):
    """What makes a hit cheap: the engine and LibCST are never imported."""
    env = {k: v for k, v in os.environ.items() if k != NO_CACHE_ENV}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    script = ("import sys; from codemod.cli import main; code = main(sys.argv[1:]); "
              "print('libcst' in sys.modules, 'codemod.check.engine' in sys.modules, file=sys.stderr); "
              "sys.exit(code)")
    runs = [subprocess.run([sys.executable, "-c", script, "check", str(tree)], env=env,
                           capture_output=True, text=True, check=False) for _ in range(2)]
    assert [r.returncode for r in runs] == [1, 1]
    assert runs[0].stderr.splitlines()[-1] == "True True"
    assert runs[1].stderr.splitlines()[-1] == "False False"
    assert runs[0].stdout == runs[1].stdout


@pytest.mark.parametrize("marker", ["setup.cfg", ".git", "pyproject.toml"])
def test_a_project_marker_added_or_removed_runs_the_check_again(tree, capsys, engine_runs,
                                                                 marker):
    """A project marker (``setup.cfg``, ``.git``, ``pyproject.toml``) bounds the packages
    above it, so it changes module names and findings: an entry stored before it was
    added, or removed, answers no more (an adversarial review found the stale answer,
    exit code included)."""
    def cached_and_fresh():
        cached = run(capsys, "check", tree)
        fresh = run(capsys, "check", "--no-cache", tree)
        assert (cached.rc, cached.out) == (fresh.rc, fresh.out)
        return fresh

    before = cached_and_fresh()
    where = tree / "pkg" / marker
    where.mkdir() if marker == ".git" else where.write_text("")
    cached_and_fresh()
    where.rmdir() if marker == ".git" else where.unlink()
    assert cached_and_fresh().out == before.out
    assert len(engine_runs) == 3 * 2  # every cached run ran the engine: a changed tree each time


def test_a_second_name_added_by_a_link_runs_the_check_again(tree, capsys, engine_runs):
    """A symlink inside the tree gives a module a second name (the files found stay the
    same: the link's target is read once); an import through it refuses the class it
    defines, so an answer stored before the link no longer holds."""
    (tree / "pkg" / "old_use.py").write_text("from pkg.legacy import Base\n\n\n"
                                             "def f(p):\n    return isinstance(p, Base)\n")
    before = run(capsys, "check", tree)
    (tree / "pkg" / "legacy.py").symlink_to("params.py")
    cached = run(capsys, "check", tree)
    fresh = run(capsys, "check", "--no-cache", tree)
    assert len(engine_runs) == 3  # the cached run ran the engine again
    assert (cached.rc, cached.out) == (fresh.rc, fresh.out)
    assert cached.out != before.out
