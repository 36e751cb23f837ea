"""``codemod apply --report FILE.json``: the report validates against docs/report.schema.json,
and what it says matches what the run did (the files on disk, the refusals, the checks)."""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codemod import api
from codemod.cli import main
from codemod.output.report import SCHEMA_ID, SCHEMA_VERSION, build_report
from codemod.types import Options, RefusalKind, UseForm

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())
ENGINE = ROOT / "fixtures" / "engine" / "minivllm"
GOLDEN = ROOT / "fixtures" / "golden"


def _validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def _valid(report: dict[str, Any]) -> dict[str, Any]:
    errors = sorted(_validator().iter_errors(report), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])
    return report


def _apply(tmp_path: Path, tree: Path, *flags: str) -> tuple[int, dict[str, Any], Path]:
    """Copy ``tree``, run ``apply [flags] --report`` on the copy; exit code, report, copy."""
    work = tmp_path / tree.name
    shutil.copytree(tree, work)
    out = tmp_path / "report.json"
    code = main(["apply", *flags, "--report", str(out), str(work)])
    return code, json.loads(out.read_text("utf-8")), work


def _texts(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text("utf-8") for p in sorted(root.rglob("*.py"))
            if "__pycache__" not in p.parts}


def _by_path(report: dict[str, Any], work: Path) -> dict[str, dict[str, Any]]:
    return {str(Path(f["path"]).relative_to(work)): f for f in report["files"]}


def _classes(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["qualname"]: c for c in report["classes"]}


def _calls(text: str, name: str) -> int:
    return len(re.findall(rf"(?<![\w.]){name}\(", text))


# -- the fixture engine, converted in place ------------------------------------------------


@pytest.fixture(scope="module")
def engine_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    return _apply(tmp_path_factory.mktemp("engine"), ENGINE)


def test_engine_report_validates(engine_run: tuple[int, dict[str, Any], Path]) -> None:
    code, report, _ = engine_run
    _valid(report)
    assert report["schemaVersion"] == SCHEMA_VERSION and report["$schema"] == SCHEMA_ID
    assert SCHEMA["$id"] == SCHEMA_ID
    assert report["run"]["exitCode"] == code == 1
    assert report["run"]["dryRun"] is False
    assert report["run"]["commandLine"].startswith("codemod apply --report ")
    assert report["verify"] is None


def test_engine_report_files_match_the_tree_on_disk(
        engine_run: tuple[int, dict[str, Any], Path]) -> None:
    _, report, work = engine_run
    before, after = _texts(ENGINE), _texts(work)
    files = _by_path(report, work)
    changed = {name for name in before if before[name] != after[name]}
    added = set(after) - set(before)
    assert {n for n, f in files.items() if f["outcome"] == "changed" and not f["new"]} == changed
    assert {n for n, f in files.items() if f["new"]} == added == {
        "model_executor/parameter_features.py"}
    runtime = files["model_executor/parameter_features.py"]
    assert runtime["runtimeModule"] is True and runtime["rewrites"] == {"runtime-module": 1}
    assert runtime["changes"][0]["classes"] == sorted(c["qualname"] for c in report["classes"])
    totals = report["totals"]
    assert totals["filesChanged"] == len(changed) and totals["filesAdded"] == len(added)
    assert totals["filesWritten"] == len(changed) + len(added)
    assert totals["filesScanned"] == len(before)


def test_engine_report_counts_match_the_diff(engine_run: tuple[int, dict[str, Any], Path]) -> None:
    """Per file: classes that became functions, isinstance and type checks that became
    helper calls, counted in the old and new text on disk; the totals are their sums."""
    _, report, work = engine_run
    before, after = _texts(ENGINE), _texts(work)
    summed: dict[str, int] = {}
    for name, entry in _by_path(report, work).items():
        for kind, n in entry["rewrites"].items():
            summed[kind] = summed.get(kind, 0) + n
        if entry["outcome"] != "changed" or entry["new"]:
            continue
        old, new = before[name], after[name]
        old_classes = {n.name for n in ast.parse(old).body if isinstance(n, ast.ClassDef)}
        new_functions = {n.name for n in ast.parse(new).body if isinstance(n, ast.FunctionDef)}
        assert entry["rewrites"].get("class", 0) == len(old_classes & new_functions), name
        assert entry["rewrites"].get("isinstance", 0) == \
            _calls(new, "has_param_feature") - _calls(old, "has_param_feature"), name
        assert entry["rewrites"].get("type-check", 0) == \
            _calls(new, "param_kind_is") - _calls(old, "param_kind_is"), name
        located = [c["kind"] for c in entry["changes"]]
        assert located.count("isinstance") == entry["rewrites"].get("isinstance", 0), name
        assert located.count("class") == entry["rewrites"].get("class", 0), name
    assert report["totals"]["rewrites"] == dict(sorted(summed.items()))
    assert summed["class"] == report["totals"]["classes"]["converted"] == 11


def test_engine_report_classes(engine_run: tuple[int, dict[str, Any], Path]) -> None:
    _, report, work = engine_run
    classes = _classes(report)
    assert all(c["status"] == "converted" and c["refusal"] is None for c in classes.values())
    column = classes["minivllm.model_executor.parameter._ColumnvLLMParameter"]
    assert column["factory"] == "_ColumnvLLMParameter"
    assert column["wrap"] == "wrap_column_vllm_parameter"
    assert {"property": "output_dim", "backingField": "_output_dim", "noneDeletes": False} \
        in column["attributes"]
    assert column["feature"]["member"] == "Features._ColumnvLLMParameter"
    assert column["feature"]["runtimeModule"] == "minivllm.model_executor.parameter_features"
    # Every generated name is defined in the converted module.
    text = (work / "model_executor" / "parameter.py").read_text()
    for name in [column["factory"], column["wrap"], *column["functions"]["methods"].values()]:
        assert re.search(rf"^def {name}\(", text, re.M), name
    # Each check helper call of the tree names a member of a class that counts it.
    tallied = sum(c["feature"]["checks"]["isinstance"] for c in classes.values())
    assert tallied >= report["totals"]["rewrites"]["isinstance"]


# -- golden cases: a refusal with a chain of sites, and a shadow ----------------------------


def test_refusal_report_names_reason_and_site_chain(tmp_path: Path) -> None:
    case = GOLDEN / "refuse_class_values" / "input"
    code, report, work = _apply(tmp_path, case, "--dry-run")
    _valid(report)
    assert code == report["run"]["exitCode"] == 1 and report["run"]["dryRun"] is True
    assert _texts(work) == _texts(case)  # a dry run writes nothing but the report
    assert report["totals"]["filesWritten"] == 0
    classes = _classes(report)
    checked = classes["eng.params.CheckedKind"]
    assert checked["status"] == "refused" and checked["factory"] is None
    assert checked["feature"] is None
    refusal = checked["refusal"]
    assert refusal["kind"] == "use-site" and refusal["chosen"] is False
    assert "reaches a use no rewrite covers" in refusal["reason"]
    eng = work / "eng"
    # A step into a function links to the function's definition (``def matches`` at
    # checks.py:6, ``def __init__`` at holders.py:9).
    assert [(link["path"], link["line"]) for link in refusal["chain"]] == [
        (str(eng / "params.py"), 6), (str(eng / "tables.py"), 3), (str(eng / "checks.py"), 11),
        (str(eng / "checks.py"), 6), (str(eng / "checks.py"), 7)]
    assert refusal["chain"][3]["message"] == "matches(kind)"
    stored = classes["eng.params.StoredKind"]["refusal"]["chain"]
    assert [(link["path"], link["line"]) for link in stored] == [
        (str(eng / "params.py"), 11), (str(eng / "holders.py"), 9), (str(eng / "holders.py"), 9),
        (str(eng / "holders.py"), 10)]
    assert classes["eng.params.PlainKind"]["status"] == "converted"
    assert report["totals"]["classes"] == {"converted": 1, "shadow": 0, "refused": 3}
    assert report["totals"]["refusals"] == 3


def test_use_site_chain_is_read_from_the_refusal_values(tmp_path: Path) -> None:
    """The report's chain of a use no rewrite covers comes from ``Refusal.use`` (the place,
    the code, the steps), not from the reason's wording: reworded, the chain is the same."""
    work = tmp_path / "case"
    shutil.copytree(GOLDEN / "refuse_class_values" / "input", work)
    result = api.run([work], Options())
    assert result.plan is not None
    refused = [cp for cp in result.plan.classes.values()
               if cp.refusal is not None and cp.refusal.kind is RefusalKind.USE_SITE]
    assert refused and all(cp.refusal is not None and cp.refusal.use is not None
                           and cp.refusal.reason == cp.refusal.use.reason for cp in refused)
    assert any(cp.refusal is not None and cp.refusal.use is not None
               and cp.refusal.use.form is UseForm.VALUE and len(cp.refusal.use.chain) > 1
               for cp in refused)

    def chains() -> dict[str, Any]:
        report = build_report(result, command_line="codemod apply", options={}, directory=".",
                              elapsed_ms=0, exit_code=1, dry_run=True, written=0)
        return {c["qualname"]: c["refusal"]["chain"] for c in report["classes"] if c["refusal"]}

    before = chains()
    for cp in refused:
        assert cp.refusal is not None
        cp.refusal = dataclasses.replace(cp.refusal, reason="reworded")
    after = chains()
    assert after == before
    assert all(len(after[cp.facts.qualname]) > 1 for cp in refused)


def test_shadow_report(tmp_path: Path) -> None:
    code, report, work = _apply(tmp_path, GOLDEN / "leaf_refused_shadow" / "input")
    _valid(report)
    classes = _classes(report)
    base, shared = classes["pkg.params.Base"], classes["pkg.params.Shared"]
    assert base["status"] == "shadow" and base["factory"] is None and base["wrap"] == "wrap_base"
    assert base["functions"]["methods"] == {"load": "Base.load", "describe": "Base.describe"}
    assert base["refusal"]["kind"] == "kept" and base["refusal"]["cause"] == "unconvertible"
    assert base["refusal"]["follows"] == "pkg.params.Shared"
    params = str(work / "pkg" / "params.py")
    assert [(link["path"], link["line"]) for link in base["refusal"]["chain"]] == [
        (params, 6), (params, 48)]
    assert "overrides `data`" in base["refusal"]["chain"][1]["message"]
    assert shared["status"] == "refused" and shared["wrap"] is None
    assert shared["refusal"]["kind"] == "unconvertible"
    # The isinstance -> feature map, counted by hand in the expected tree: Base is checked
    # in kernel.py and use.py; Column and Packed once each by isinstance and type(...).
    assert base["feature"]["isinstance"] == \
        "has_param_feature(p, Features.Base) or isinstance(p, (Base,))"
    assert base["feature"]["typeIs"] is None
    assert base["feature"]["checks"] == {"isinstance": 2, "type-check": 0}
    for name in ("Column", "Packed"):
        feature = classes[f"pkg.params.{name}"]["feature"]
        assert feature["member"] == f"Features.{name}"
        assert feature["typeIs"] == f"param_kind_is(p, Features.{name})"
        assert feature["checks"] == {"isinstance": 1, "type-check": 1}, name
    files = _by_path(report, work)
    use = files["pkg/use.py"]
    assert use["rewrites"] == {"backing-field": 1, "import-added": 4, "import-removed": 2,
                               "isinstance": 3, "issubclass": 1, "type-check": 2}
    assert use["importsRemoved"] == ["pkg.params.Column", "pkg.params.Packed"]
    assert use["importsAdded"] == ["pkg.params_features.Features",
                                   "pkg.params_features.has_param_feature",
                                   "pkg.params_features.param_kind_is",
                                   "pkg.params_features.set_param_field"]
    kinds = [(c["lineNumber"], c["kind"], c["classes"]) for c in use["changes"]]
    assert kinds == [(12, "isinstance", ["pkg.params.Base"]),
                     (13, "isinstance", ["pkg.params.Column"]),
                     (14, "isinstance", ["pkg.params.Packed"]),
                     (16, "type-check", ["pkg.params.Column"]),
                     (17, "type-check", ["pkg.params.Packed"])]
    lines = (work / "pkg" / "use.py").read_text().splitlines()
    for line, kind, _ in kinds:  # the lines named hold the helper calls
        assert ("param_kind_is(" if kind == "type-check" else "has_param_feature(") in lines[line - 1]
    assert files["pkg/params.py"]["rewrites"]["shadow"] == 1
    assert files["pkg/params.py"]["refusals"] == ["pkg.params.Base", "pkg.params.Shared"]
    assert [(c["kind"], c["lineNumber"]) for c in files["pkg/params.py"]["changes"]] == [
        ("shadow", 6), ("class", 30), ("class", 44)]


# -- the schema has teeth, and the verify section's hook ------------------------------------


@pytest.mark.parametrize("mutate", [
    lambda r: r["classes"][0].update(status="half-converted"),
    lambda r: r["classes"][0].pop("wrap"),
    lambda r: r["files"][0]["rewrites"].update({"rename": 1}),
    lambda r: r["totals"]["classes"].update(converted=-1),
    lambda r: r.update(verify={"cases": 3, "tensors": 1, "classes": []}),
    lambda r: r["run"].update(exitCode=3),
    lambda r: r.update(extra=1),
], ids=["status", "missing-wrap", "unknown-rewrite", "negative", "verify-incomplete",
        "exit-code", "unknown-field"])
def test_schema_rejects_wrong_reports(engine_run: tuple[int, dict[str, Any], Path],
                                      mutate: Any) -> None:
    wrong = copy.deepcopy(engine_run[1])
    mutate(wrong)
    assert list(_validator().iter_errors(wrong))


def test_refusal_without_chain_is_rejected(tmp_path: Path) -> None:
    _, report, _ = _apply(tmp_path, GOLDEN / "refuse_leaf" / "input", "--dry-run")
    _valid(report)
    refused = [c for c in report["classes"] if c["refusal"]]
    assert refused
    refused[0]["refusal"]["chain"] = []
    assert list(_validator().iter_errors(report))


def test_verify_section_hook(engine_run: tuple[int, dict[str, Any], Path]) -> None:
    """``build_report(verify=...)`` puts a behaviour check's summary in ``verify`` as given."""
    from codemod import api
    from codemod.output.report import build_report
    from codemod.types import Options

    _, _, work = engine_run
    summary = {"original": "/a", "converted": "/b", "cases": 12, "tensors": 40,
               "difference_count": 1, "exit_code": 1, "seconds": 1.5,
               "classes": [{"name": "Y", "module": "x", "status": "converted", "builds": 2,
                            "cases": 12, "tensors": 40, "raised": 0, "documented": [],
                            "differences": [{"cls": "Y", "case": "load tp 2 #1",
                                             "detail": "tensor differs"}]}],
               "import_problems": [{"module": "x.z", "side": "both", "error": "boom"}]}
    result = api.run([work], Options(jobs=1))
    report = build_report(result, command_line="codemod apply --verify x", options={
        "effective": {"excludes": [], "extendExcludes": [], "allowClasses": [],
                      "allowValueUses": False, "featurePrefix": "", "src": [], "jobs": 1}},
        directory=str(work), elapsed_ms=0, exit_code=0, dry_run=True, written=0, verify=summary)
    assert _valid(report)["verify"] == summary
    for wrong in ({**summary, "exit_code": 3}, {k: v for k, v in summary.items() if k != "cases"},
                  {**summary, "classes": [{"name": "Y", "status": "converted", "cases": 1,
                                           "tensors": 1, "differences": 2}]}):
        report["verify"] = wrong
        assert list(_validator().iter_errors(report))


def test_unwritable_report_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "tree"
    shutil.copytree(GOLDEN / "refuse_leaf" / "input", work)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "r.json").mkdir()  # a directory where the report would go
    try:
        code = main(["apply", "--dry-run", "--report", str(tmp_path / "taken" / "r.json"), str(work)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 2
    assert "is a directory" in capsys.readouterr().err


def test_a_report_without_its_directory_is_refused_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``apply --report missing/r.json`` used to rewrite the tree, then exit 2 for the
    report (an adversarial review): now nothing is written."""
    work = tmp_path / "tree"
    shutil.copytree(GOLDEN / "refuse_leaf" / "input", work)
    before = {p: p.read_bytes() for p in sorted(work.rglob("*.py"))}
    try:
        code = main(["apply", "--report", str(tmp_path / "missing" / "r.json"), str(work)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 2
    assert "no such directory for the report" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in sorted(work.rglob("*.py"))} == before


def test_rewrite_kinds_are_documented() -> None:
    """Every kind a transform counts is in the schema, and docs/report.md describes exactly
    the schema's kinds: a new counter fails here until both name it."""
    enum = set(SCHEMA["$defs"]["rewrites"]["propertyNames"]["enum"])
    counted = {kind for path in (ROOT / "codemod").rglob("*.py")
               for kind in re.findall(r'counts\["([\w-]+)"\]', path.read_text())}
    assert counted and counted <= enum, counted - enum
    doc = (ROOT / "docs" / "report.md").read_text()
    table = doc.split("### Rewrite kinds", 1)[1].split("\n## ", 1)[0]
    documented = {kind for row in re.findall(r"^\| (`.+?) \|", table, re.M)
                  for kind in re.findall(r"`([\w-]+)`", row)}
    assert documented == enum


def test_report_of_a_run_that_fails(tmp_path: Path) -> None:
    """A file that does not parse: nothing is written, the report still is, and says so."""
    work = tmp_path / "bad"
    shutil.copytree(GOLDEN / "basic_hierarchy" / "input", work)
    (work / "pkg" / "broken.py").write_text(
        "from pkg.params import BaseParam\ndef f(:\n    return isinstance(x, BaseParam)\n")
    out = tmp_path / "report.json"
    assert main(["apply", "--report", str(out), str(work)]) == 2
    report = _valid(json.loads(out.read_text()))
    assert report["run"]["exitCode"] == 2
    assert report["failedFiles"] == [str(work / "pkg" / "broken.py")]
    assert report["totals"]["filesFailed"] == 1 and report["totals"]["filesWritten"] == 0
    failed = _by_path(report, work)["pkg/broken.py"]
    assert failed["outcome"] == "failed" and "syntax error" in failed["error"]


def test_allow_listed_class_and_the_class_kept_for_it(tmp_path: Path) -> None:
    work = tmp_path / "proj"
    shutil.copytree(GOLDEN / "basic_hierarchy" / "input", work / "tree")
    (work / "pyproject.toml").write_text('[tool.codemod]\nallow-classes = ["SplitParam"]\n')
    out = tmp_path / "report.json"
    code = main(["apply", "--dry-run", "--report", str(out), str(work / "tree")])
    report = _valid(json.loads(out.read_text()))
    assert code == report["run"]["exitCode"] == 0  # a chosen refusal is no finding
    assert report["run"]["options"]["effective"]["allowClasses"] == ["SplitParam"]
    classes = _classes(report)
    split, base = classes["pkg.params.SplitParam"], classes["pkg.params.BaseParam"]
    assert split["refusal"]["kind"] == "allowed" and split["refusal"]["chosen"] is True
    assert base["status"] == "refused" and base["refusal"]["kind"] == "kept"
    assert base["refusal"]["cause"] == "allowed" and base["refusal"]["chosen"] is True
    assert base["refusal"]["follows"] == "pkg.params.SplitParam"
    params = str(work / "tree" / "pkg" / "params.py")
    assert [(link["path"], link["line"]) for link in base["refusal"]["chain"]] == [
        (params, base["line"]), (params, split["line"])]
    assert report["totals"]["rewrites"] == {} and report["totals"]["filesChanged"] == 0


def test_documented_examples() -> None:
    """docs/report.md's example validates against the schema; README's abridged one
    parses and uses only the schema's field names."""
    doc = (ROOT / "docs" / "report.md").read_text()
    example = json.loads(doc.split("## Example", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    _valid(example)
    readme = (ROOT / "README.md").read_text()
    short = json.loads(readme.split("## Migration report", 1)[1].split("```json\n", 1)[1]
                       .split("```", 1)[0])
    names = json.dumps(SCHEMA)
    for key in _keys(short) - {"..."}:
        assert f'"{key}"' in names, key


def _keys(value: Any) -> set[str]:
    """Every key of every object nested in ``value``."""
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()
