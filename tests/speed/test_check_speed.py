"""How ``codemod check`` spends its time, where that is a behaviour: which work runs in
forked processes (``check`` converts nothing, so its screens stay in one process while
the proofs and the escape search are forked), the collector paused during a check, and
the walk of ``uses_from_ast`` visiting what ``ast.iter_child_nodes`` visits."""

from __future__ import annotations

import ast
import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codemod import api, parallel
from codemod.analysis import python_trees
from codemod.check import command
from codemod.check import engine as check_engine
from codemod.check.uses_from_ast import _LEAVES, _inner_children
from codemod.pipeline import plan_rounds
from codemod.transforms import matcher_cache
from codemod.types import Options

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.skipif(not parallel.fork_available(), reason="needs fork")
def test_check_forks_the_proofs_and_escapes_and_screens_in_one_process(monkeypatch):
    """``check`` (no conversion) with 2 jobs: the search for star imports (while this
    process parses), the value proofs, the two tree-wide screens and the escape search
    each run in a forked process (beside the planning), and the
    leftover scan, which converts nothing, runs in this process (``scan_leftovers``: no
    pool, and no LibCST where the screen decides every file, as here). ``apply``
    forks the screens and the candidate search, makes the proofs itself (so that the
    escape search and the conversion pool, forked after, inherit the trees the proofs
    parsed), scans for leftovers in this process as ``check`` does, and converts the
    settled plan in a pool."""
    tree = FIXTURES / "engine"
    backgrounds: list[tuple[str, int]] = []
    pools: list[int] = []
    proofs_here: list[bool] = []
    real_background, real_convert_all = parallel.Background, plan_rounds.convert_all
    real_proofs, real_scan = plan_rounds.class_value_proofs, plan_rounds.scan_leftovers
    scanned: list[bool] = []

    def background(fn, jobs):
        backgrounds.append((getattr(fn, "func", fn).__name__, jobs))
        return real_background(fn, jobs)

    def convert_all(paths, plan, result, jobs, *args, **kwargs):
        pools.append(jobs)
        return real_convert_all(paths, plan, result, jobs, *args, **kwargs)

    def scan_leftovers(paths, *args, **kwargs):
        scanned.append(os.getpid() == parent)
        return real_scan(paths, *args, **kwargs)

    def class_value_proofs(result, index, texts):
        proofs_here.append(os.getpid() == parent)
        return real_proofs(result, index, texts)

    parent = os.getpid()
    monkeypatch.setattr(parallel, "Background", background)
    monkeypatch.setattr(plan_rounds, "convert_all", convert_all)
    monkeypatch.setattr(plan_rounds, "class_value_proofs", class_value_proofs)
    monkeypatch.setattr(plan_rounds, "scan_leftovers", scan_leftovers)
    forked = {False: [("star_importers", 2), ("file_heads", 2), ("class_value_proofs", 2),
                      ("field_target_uses", 2), ("type_member_uses", 2), ("escaped_list", 2),
                      ("looked_up_list", 2)],
              True: [("_unreached_uses", 2), ("_rewrite_targets_and_imports", 2), ("escaped_list", 2),
                     ("looked_up_list", 2)]}
    for convert in (False, True):
        backgrounds.clear()
        pools.clear()
        proofs_here.clear()
        scanned.clear()
        result = api.read_tree([tree], Options(jobs=2))
        index = api.analyse(result.sources, result)
        api.settle_plan(result, index, Options(jobs=2), convert=convert)
        assert backgrounds[:len(forked[convert])] == forked[convert]
        if convert:
            assert pools and set(pools) == {2}
            assert proofs_here == [True] and scanned == [True]
        else:
            assert not pools and scanned and all(scanned)


def test_a_check_runs_with_the_collector_paused_and_restores_it(monkeypatch):
    seen: list[bool] = []
    real = check_engine.check_tree

    def check_tree(paths, options):
        seen.append(gc.isenabled())
        return real(paths, options)

    monkeypatch.setattr(check_engine, "check_tree", check_tree)
    assert gc.isenabled()
    command.checked([FIXTURES / "engine"], Options(jobs=1))
    assert seen == [False]
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    # No collection runs when it is switched back on either (what the run left goes to
    # the oldest generation): one there would walk every object the run made.
    collections: list[int] = []

    def collected(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(collected)
    try:
        command.checked([FIXTURES / "engine"], Options(jobs=1))
    finally:
        gc.callbacks.remove(collected)
    assert collections == []
    gc.disable()
    try:
        command.checked([FIXTURES / "engine"], Options(jobs=1))
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_the_walk_visits_the_nodes_iter_child_nodes_gives_in_order():
    text = (FIXTURES / "engine" / "minivllm" / "model_executor" / "parameter.py").read_text()
    tree = ast.parse(text + "\nx = [i for i in y if not i]\ny = -a + b @ c\nz = f(*a, k=v)\n")
    for node in ast.walk(tree):
        expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, _LEAVES)]
        assert _inner_children(node) == expected


def test_check_parses_the_mentioning_files_before_forking_the_proofs(monkeypatch):
    """The proofs' process (and the escape search forked after it) inherit CPython's
    trees of every file that mentions a class, made once in this process. ``apply``
    makes the proofs itself: the escape search (and the pool) forked after them inherit
    the same trees."""
    tree = FIXTURES / "engine"
    parsed_at_fork: dict[str, set[str]] = {}
    real_background = parallel.Background

    def background(fn, jobs):
        parsed_at_fork[getattr(fn, "func", fn).__name__] = set(python_trees._TREES)
        return real_background(fn, jobs)

    monkeypatch.setattr(parallel, "Background", background)
    for convert, first in ((False, "class_value_proofs"), (True, "escaped_list")):
        parsed_at_fork.clear()
        python_trees.clear()
        result = api.read_tree([tree], Options(jobs=2))
        index = api.analyse(result.sources, result)
        names = api.hierarchy_names(index, result.facts.values())
        mentioning = {s.text for p, s in result.sources.items() if result.mentions.any(p, s.text, names)}
        api.settle_plan(result, index, Options(jobs=2), convert=convert)
        assert len(mentioning) > 3
        assert mentioning <= parsed_at_fork[first]
        if convert:
            assert not mentioning <= parsed_at_fork["_unreached_uses"]


@pytest.mark.parametrize("engine", ["codemod.check.engine", "codemod.api"])
def test_the_engines_load_without_the_conversion_machinery(engine):
    """``check`` and ``apply`` import the conversion machinery (LibCST's matchers and
    codemods, the transforms: ~0.25 s) only once the round's screens are forked, in time
    this process would otherwise wait or that the forked processes share: neither
    engine imports it, nor does reading, indexing or planning."""
    code = (f"import sys, {engine}, codemod.pipeline.plan_rounds; "
            "print(sorted(m for m in ('codemod.pipeline.conversion', 'codemod.pipeline.workers', "
            "'libcst.codemod', 'libcst.matchers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(FIXTURES.parent)}).stdout
    assert out.strip() == "[]"


def test_settle_plan_imports_the_conversion_machinery_after_forking_the_screens(monkeypatch):
    """``apply`` imports the conversion machinery after every process of the round is
    forked: those processes (the screens, the candidate search) never need it, and the
    convert workers forked after inherit it."""
    events: list[str] = []
    real_background, real_import = parallel.Background, plan_rounds._import_conversion

    def background(fn, jobs):
        events.append(fn.func.__name__)
        return real_background(fn, jobs)

    def imports() -> None:
        events.append("import")
        real_import()

    monkeypatch.setattr(parallel, "Background", background)
    monkeypatch.setattr(plan_rounds, "_import_conversion", imports)
    monkeypatch.setattr(matcher_cache, "warm", lambda: events.append("warm"))
    result = api.read_tree([FIXTURES / "engine"], Options(jobs=2))
    index = api.analyse(result.sources, result)
    api.settle_plan(result, index, Options(jobs=2), convert=True)
    # ``apply`` also searches LibCST's import codemods before the workers fork, however
    # long the forked processes take.
    assert events[:5] == ["_unreached_uses", "_rewrite_targets_and_imports", "import", "warm",
                          "escaped_list"]


_MACHINERY = ("codemod.pipeline.conversion", "codemod.pipeline.workers", "libcst.codemod",
              "libcst.matchers")


def _check_imports(tree: Path) -> tuple[int, list[str]]:
    """``check``'s findings on ``tree`` (their number) and which of ``_MACHINERY`` it
    imported, in a fresh interpreter."""
    code = ("import sys; from pathlib import Path; from codemod.check.engine import check_tree; "
            "from codemod.types import Options; "
            f"r = check_tree([Path({str(tree)!r})], Options(jobs=2)); "
            f"print(len(r.findings), sorted(m for m in {_MACHINERY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(FIXTURES.parent)}).stdout.split(" ", 1)
    return int(out[0]), ast.literal_eval(out[1])


def test_check_imports_no_conversion_machinery_where_the_screen_decides_every_file():
    """Every candidate of the fixture engine (its defining module too: class bases,
    ``X.method(...)``, names the module defines) is decided on CPython's tree, so
    ``check`` never imports LibCST's matchers and codemods (~0.3 s)."""
    found, imported = _check_imports(FIXTURES / "engine")
    assert found > 0
    assert imported == []


def test_check_takes_lib_cst_for_a_file_the_screen_leaves_undecided(tmp_path):
    """A mention the screen does not model (``X | Y`` in an ``isinstance``) sends its file
    to LibCST's path, which ``check`` then imports; its answer (the check is rewritten,
    no leftover) keeps both classes convertible."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(
        "from torch.nn import Parameter\n\n\nclass A(Parameter):\n    pass\n\n\n"
        "class B(Parameter):\n    pass\n")
    (pkg / "use.py").write_text(
        "from pkg.params import A, B\n\n\ndef f(p):\n    return isinstance(p, A | B)\n")
    found, imported = _check_imports(pkg)
    assert "libcst.matchers" in imported
    result = check_engine.check_tree([pkg], Options(jobs=1))
    assert found == len(result.findings)
    assert sorted((f.path.name, f.code, f.fixable) for f in result.findings) == [
        ("params.py", "CM001", True), ("params.py", "CM001", True), ("use.py", "CM002", True)]


def test_the_screens_apart_merge_as_together():
    """``check`` runs the two tree-wide screens in two processes: their findings merge
    as ``_unreached_uses`` merges them (a member read wins for a class that has both)."""

    class Done:
        def __init__(self, found: dict[str, str]) -> None:
            self.found = found

        def result(self) -> dict[str, str]:
            return self.found

    fields, members = {"A": "field", "B": "field"}, {"B": "member", "C": "member"}
    assert plan_rounds._unreached([Done(fields), Done(members)]) == {**fields, **members}  # type: ignore[list-item]
    assert plan_rounds._unreached([Done(fields), Done(members)])["B"] == "member"  # type: ignore[list-item]
