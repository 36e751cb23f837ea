"""``codemod check`` output: text, json, github, sarif, --statistics, --output-file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from codemod.check.rules import RULES, Finding
from codemod.output.reporters import render, render_statistics

from .helpers import BASE_TREE, TEXT_LINE, run, write_tree
from .sarif_schema import SARIF_SUBSET_SCHEMA

#: The findings of BASE_TREE: 2 CM001 in params.py, 6 CM002 in layers.py.
EXPECTED = sorted([
    ("src/pkg/layers.py", line, "CM002") for line in range(8, 14)
] + [("src/pkg/params.py", 4, "CM001"), ("src/pkg/params.py", 16, "CM001")])


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """BASE_TREE under ``tmp_path/src``; the working directory is ``tmp_path``."""
    write_tree(tmp_path / "src", BASE_TREE)
    monkeypatch.chdir(tmp_path)
    return Path("src")


def test_text(tree, capsys):
    result = run(capsys, "check", tree)
    assert result.rc == 1
    lines = result.out.splitlines()
    parsed = [TEXT_LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [(m["path"], int(m["line"]), m["code"]) for m in parsed] == EXPECTED  # type: ignore[index]
    assert all(m["fix"] for m in parsed)  # type: ignore[index]
    # The summary goes to stderr, never to stdout.
    assert "Found 8 finding(s)" in result.err and "Found" not in result.out


def test_json(tree, capsys):
    result = run(capsys, "check", "--format", "json", tree)
    assert result.rc == 1
    data = json.loads(result.out)
    assert isinstance(data, list)
    assert [(d["path"], d["line"], d["code"]) for d in data] == EXPECTED
    for item in data:
        assert set(item) == {"code", "name", "message", "path", "line", "column", "fixable"}
        assert item["fixable"] is True
        assert isinstance(item["column"], int) and item["column"] >= 1
        assert item["name"] == {"CM001": "parameter-subclass", "CM002": "class-check"}[item["code"]]
    first = next(d for d in data if d["code"] == "CM002")
    assert first["column"] == 9 and "`isinstance` check against Parameter class `Base`" in first["message"]


def test_json_clean_is_an_empty_list(tmp_path, capsys):
    write_tree(tmp_path, {"m.py": "x = 1\n"})
    result = run(capsys, "check", "--format", "json", tmp_path)
    assert (result.rc, json.loads(result.out)) == (0, [])


GITHUB = re.compile(
    r"^::error title=codemod \((?P<code>CM\d{3})\),file=(?P<file>[^,]+),line=(?P<line>\d+),"
    r"col=(?P<col>\d+)::(?P=code) (\[\*\] )?\S.*$"
)


def test_github(tree, capsys):
    result = run(capsys, "check", "--format", "github", tree)
    assert result.rc == 1
    matches = [GITHUB.match(line) for line in result.out.splitlines()]
    assert all(matches), result.out
    assert [(m["file"], int(m["line"]), m["code"]) for m in matches] == EXPECTED  # type: ignore[index]


def test_github_escapes_properties_and_message():
    finding = Finding("CM004", "100% wrong,\nreally: yes", Path("a,b:c.py"), 3, 4, False)
    line = render([finding], "github")
    assert line == (
        "::error title=codemod (CM004),file=a%2Cb%3Ac.py,line=3,col=4::"
        "CM004 100%25 wrong,%0Areally: yes\n"
    )


def _sarif(capsys, *argv) -> dict:
    result = run(capsys, "check", "--format", "sarif", *argv)
    return {"rc": result.rc, "log": json.loads(result.out)}


def test_sarif_structure(tree, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    got = _sarif(capsys, tree)
    assert got["rc"] == 1
    log = got["log"]
    jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA).validate(log)
    assert log["version"] == "2.1.0"
    (run_,) = log["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in RULES]
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
    places = []
    for res in run_["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] == "error" and res["message"]["text"]
        (loc,) = res["locations"]
        phys = loc["physicalLocation"]
        places.append((phys["artifactLocation"]["uri"], phys["region"]["startLine"], res["ruleId"]))
        assert phys["region"]["startColumn"] >= 1
    assert places == EXPECTED  # relative paths stay relative URIs
    assert run_["invocations"] == [{"executionSuccessful": True}]


def test_sarif_absolute_paths_are_file_uris_and_clean_runs_are_valid(tmp_path, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    write_tree(tmp_path / "my dir", BASE_TREE)
    log = _sarif(capsys, tmp_path / "my dir")["log"]
    jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA).validate(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}
    assert all(u.startswith("file:///") and "my%20dir" in u for u in uris), uris
    write_tree(tmp_path / "clean", {"m.py": "x = 1\n"})
    got = _sarif(capsys, tmp_path / "clean")
    assert got["rc"] == 0 and got["log"]["runs"][0]["results"] == []
    jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA).validate(got["log"])


def test_sarif_reports_unreadable_files_as_notifications():
    log = json.loads(render([], "sarif", errors=["x.py:1:1: syntax error: bad"]))
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["message"]["text"].startswith("x.py:1:1")


@pytest.mark.skipif(not os.environ.get("SARIF_SCHEMA"),
                    reason="set SARIF_SCHEMA to a local copy of sarif-schema-2.1.0.json")
def test_sarif_validates_against_the_official_schema(tree, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(Path(os.environ["SARIF_SCHEMA"]).read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(_sarif(capsys, tree)["log"])


def test_statistics_text(tree, capsys):
    result = run(capsys, "check", "--statistics", tree)
    assert result.rc == 1
    assert result.out.splitlines() == ["6  CM002  [*] class-check", "2  CM001  [*] parameter-subclass"]


def test_statistics_json(tree, capsys):
    result = run(capsys, "check", "--statistics", "--format", "json", tree)
    assert json.loads(result.out) == [
        {"code": "CM002", "name": "class-check", "count": 6, "fixable": 6},
        {"code": "CM001", "name": "parameter-subclass", "count": 2, "fixable": 2},
    ]


def test_statistics_marks_partly_fixable_codes():
    findings = [Finding("CM001", "m", Path("a.py"), 1, 1, True),
                Finding("CM001", "m", Path("a.py"), 2, 1, False),
                Finding("CM004", "m", Path("a.py"), 3, 1, False)]
    assert render_statistics(findings, "text") == "2  CM001  [-] parameter-subclass\n1  CM004      factory-class-check\n"


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_statistics_needs_text_or_json(tree, capsys, fmt):
    result = run(capsys, "check", "--statistics", "--format", fmt, tree)
    assert result.rc == 2 and "--statistics works with --format text or json" in result.err


def test_unknown_format_is_a_usage_error(tree, capsys):
    result = run(capsys, "check", "--format", "xml", tree)
    assert result.rc == 2 and "xml" in result.err


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_output_file(tree, capsys, tmp_path, fmt):
    target = tmp_path / f"report.{fmt}"
    result = run(capsys, "check", "--format", fmt, "--output-file", target, tree)
    assert result.rc == 1 and result.out == ""
    assert "Found 8 finding(s)" in result.err
    expected = run(capsys, "check", "--format", fmt, tree).out
    assert target.read_text() == expected


def test_output_file_that_cannot_be_written(tree, capsys, tmp_path):
    result = run(capsys, "check", "--output-file", tmp_path / "missing" / "r.txt", tree)
    assert result.rc == 2 and "no such directory for the output" in result.err
