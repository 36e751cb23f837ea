"""``codemod check`` reporters: text, JSON, GitHub workflow annotations, SARIF 2.1.0.

Each reporter turns a list of findings into the text written to stdout; none of them
prints or decides an exit code. The formats:

``text``
    ``path:line:col: CODE [*] message``, one per line (``[*]``: ``codemod apply`` fixes it).
``json``
    A list of objects ``{code, name, message, path, line, column, fixable}``, sorted by
    place; ``[]`` when clean.
``github``
    ``::error title=codemod (CODE),file=...,line=...,col=...::CODE message`` lines, which a
    GitHub Actions step turns into annotations on the pull request.
``sarif``
    One SARIF 2.1.0 log: one run whose ``tool.driver.rules`` lists every code, one result
    per finding (``ruleId``, ``ruleIndex``, ``level``, ``message``, a physical location with
    a 1-based region); files that could not be checked become tool notifications.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

from codemod.check.rules import RULES, RULES_BY_CODE, Finding, Rule

#: The schema URI written into every SARIF log (SARIF 2.1.0, OASIS standard).
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"


def _version() -> str:
    from importlib import metadata  # only SARIF names the version: ~15 ms of imports

    try:
        return metadata.version("codemod")
    except metadata.PackageNotFoundError:  # run from a checkout that is not installed
        return "0+unknown"


def render(findings: list[Finding], fmt: str, errors: list[str] | None = None) -> str:
    """The findings in format ``fmt`` (``text``, ``json``, ``github`` or ``sarif``).

    ``errors`` (files that could not be checked) go into SARIF's notifications; the
    other formats leave them to stderr.
    """
    if fmt == "text":
        return "".join(f"{f.render()}\n" for f in findings)
    if fmt == "json":
        return json.dumps([_as_json(f) for f in findings], indent=2) + "\n"
    if fmt == "github":
        return "".join(f"{_github(f)}\n" for f in findings)
    if fmt == "sarif":
        return json.dumps(sarif_log(findings, errors or []), indent=2) + "\n"
    raise ValueError(f"unknown format {fmt!r}")


def render_statistics(findings: list[Finding], fmt: str) -> str:
    """Counts per code, most frequent first, like ``ruff check --statistics``.

    ``json`` gives a list of ``{code, name, count, fixable}``; any other format the table
    ``COUNT  CODE  [*] name`` (``[*]``: every finding of that code is fixable by ``apply``,
    ``[-]``: some are).
    """
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fixable)
    order = sorted(counts, key=lambda code: (-counts[code], code))
    if fmt == "json":
        rows = [{"code": c, "name": RULES_BY_CODE[c].name, "count": counts[c],
                 "fixable": fixable[c]} for c in order]
        return json.dumps(rows, indent=2) + "\n"
    if not order:
        return ""
    width = max(len(str(counts[c])) for c in order)
    lines = []
    for code in order:
        mark = "[*]" if fixable[code] == counts[code] else ("[-]" if fixable[code] else "   ")
        lines.append(f"{counts[code]:>{width}}  {code}  {mark} {RULES_BY_CODE[code].name}")
    return "\n".join(lines) + "\n"


# -- json ---------------------------------------------------------------------------------


def _as_json(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.rule.name,
        "message": finding.message,
        "path": str(finding.path),
        "line": finding.line,
        "column": finding.column,
        "fixable": finding.fixable,
    }


# -- github -------------------------------------------------------------------------------


def _escape_data(text: str) -> str:
    """Escape a workflow command's message (``%``, CR and LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """Escape a workflow command's property value (also ``:`` and ``,``)."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(finding: Finding) -> str:
    props = ",".join([
        f"title={_escape_property(f'codemod ({finding.code})')}",
        f"file={_escape_property(str(finding.path))}",
        f"line={finding.line}",
        f"col={finding.column}",
    ])
    mark = "[*] " if finding.fixable else ""
    return f"::error {props}::{_escape_data(f'{finding.code} {mark}{finding.message}')}"


# -- sarif --------------------------------------------------------------------------------


def _uri(path: Path) -> str:
    """A URI reference for ``path``: relative paths stay relative (``/``-separated)."""
    if path.is_absolute():
        return path.as_uri()
    return quote(path.as_posix())


def _rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{rule.summary} {rule.help}"},
        "help": {"text": rule.help},
        "defaultConfiguration": {"level": "error"},
        "properties": {"fixableByApply": rule.fixable},
    }


def sarif_log(findings: list[Finding], errors: list[str]) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run: every rule, one result per finding."""
    index = {rule.code: i for i, rule in enumerate(RULES)}
    results = []
    for f in findings:
        results.append({
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "error",
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.path)},
                    "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
                },
            }],
            "properties": {"fixable": f.fixable},
        })
    invocation: dict[str, Any] = {"executionSuccessful": not errors}
    if errors:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": error}} for error in errors
        ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {
                "driver": {
                    "name": "codemod",
                    "version": _version(),
                    "rules": [_rule(rule) for rule in RULES],
                },
            },
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
