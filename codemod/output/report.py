"""``codemod apply --report FILE.json``: the migration report, one JSON document per run.

What it holds
    ``run`` (tool, version, command line, options, time, exit code), ``totals``, one entry
    per Parameter class (converted / shadow / refused; its factory, wrap and generated
    functions; the properties that became attributes; its ``Features`` member and which
    checks became which helper call; for a class that stays a class, the refusal and the
    chain of sites it follows from), one entry per file the run touched (rewrites by kind,
    imports added and removed, located changes), and ``verify`` (null unless a behaviour
    check ran: ``build_report(..., verify=...)`` is the one place it enters).
Where the data comes from
    Only from what ``api.run`` returns: the plan's ``ClassPlan`` values and refusals, and
    each ``FileResult`` (its rewrite counts, its old and new text). Nothing is analysed
    again, apart from reading the import statements and feature checks of the old and new
    text of each changed file with CPython's parser.
The schema
    ``docs/report.schema.json`` (JSON Schema 2020-12), described in ``docs/report.md``;
    ``SCHEMA_VERSION`` changes with it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from codemod.api import RunResult
from codemod.output.text_changes import FeatureOwner, check_changes, imports
from codemod.planning.model import ClassPlan, Plan
from codemod.types import BlockingUse, FileResult, Options, Outcome, Refusal, RefusalKind, UseForm

#: The version of the report's schema (``docs/report.schema.json``): the major number
#: changes when a field is removed or changes meaning, the minor one when one is added.
SCHEMA_VERSION = "1.0"
#: The ``$id`` of the schema the report follows.
SCHEMA_ID = "https://codemod.invalid/schemas/report-1.0.schema.json"


def tool_version() -> str:
    """The installed version of codemod ("0+unknown" in a checkout that is not installed)."""
    try:
        return metadata.version("codemod")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def build_report(result: RunResult, *, command_line: str, options: Mapping[str, Any],
                 directory: str, elapsed_ms: int, exit_code: int, dry_run: bool,
                 written: int, verify: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report of one ``apply`` run, as a JSON-ready dict.

    ``verify``: what a behaviour check of the converted tree found (the document
    ``codemod verify --format json`` prints: ``cases``, ``tensors``, ``exit_code``, per class
    its ``differences``...), or None when none ran; the report's ``verify`` section is that
    document as given.
    """
    plan = result.plan
    classes = [_class_entry(q, plan, result) for q in sorted(plan.classes)] if plan else []
    owner = _feature_owners(plan)
    runtimes = {r.path: module for module, r in plan.runtimes.items()} if plan else {}
    files = [_file_entry(f, result, runtimes.get(f.path), owner) for f in result.files]
    _tally_checks(classes, files)
    return {
        "$schema": SCHEMA_ID,
        "schemaVersion": SCHEMA_VERSION,
        "run": {
            "tool": "codemod",
            "version": tool_version(),
            "commandLine": command_line,
            "options": dict(options),
            "directory": directory,
            "elapsed": elapsed_ms,
            "dryRun": dry_run,
            "exitCode": exit_code,
        },
        "totals": _totals(result, classes, files, written),
        "classes": classes,
        "files": files,
        "failedFiles": [str(f.path) for f in result.failed()],
        "warnings": list(result.warnings),
        "verify": dict(verify) if verify is not None else None,
    }


def report_options(params: Mapping[str, object], options: Options) -> dict[str, object]:
    """The report's ``run.options``: the command's options as given (``params``, click's),
    and the settings they and the configuration gave."""
    given = {key: [str(v) for v in value] if isinstance(value, tuple) else (
        str(value) if isinstance(value, Path) else value) for key, value in params.items()}
    return {
        **given,
        "effective": {
            "excludes": list(options.excludes),
            "extendExcludes": list(options.extend_excludes),
            "allowClasses": list(options.allow_classes),
            "allowValueUses": options.allow_value_uses,
            "featurePrefix": options.feature_prefix,
            "src": [str(p) for p in options.src],
            "jobs": options.jobs,
        },
    }


def write_report(report: Mapping[str, Any], path: Path) -> None:
    """Write ``report`` to ``path`` as indented UTF-8 JSON (raises OSError)."""
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# -- totals -------------------------------------------------------------------------------


def _totals(result: RunResult, classes: list[dict[str, Any]], files: list[dict[str, Any]],
            written: int) -> dict[str, Any]:
    """Per-run counts: files by outcome, classes by status, rewrites by kind (the sum of
    every file's ``rewrites``)."""
    statuses = Counter(c["status"] for c in classes)
    rewrites: Counter[str] = Counter()
    for entry in files:
        rewrites.update(entry["rewrites"])
    return {
        "filesScanned": result.scanned,
        "filesParsed": result.parsed,
        "filesChanged": sum(1 for f in files if f["outcome"] == "changed" and not f["new"]),
        "filesAdded": sum(1 for f in files if f["new"]),
        "filesWritten": written,
        "filesFailed": sum(1 for f in files if f["outcome"] == "failed"),
        "runtimeModules": sum(1 for f in files if f["runtimeModule"]),
        "classes": {status: statuses[status] for status in ("converted", "shadow", "refused")},
        "refusals": sum(1 for c in classes if c["refusal"] is not None),
        "rewrites": dict(sorted(rewrites.items())),
    }


# -- classes ------------------------------------------------------------------------------


def _status(plan: ClassPlan) -> str:
    """``converted``, ``shadow`` (kept as a class, with a wrap for converted subclasses)
    or ``refused`` (kept as a class, nothing generated)."""
    if plan.converted:
        return "converted"
    return "shadow" if plan.shadow else "refused"


def _class_entry(qualname: str, plan: Plan, result: RunResult) -> dict[str, Any]:
    """One class: what it became, the names generated for it, and why it stays a class."""
    cp = plan.classes[qualname]
    status = _status(cp)
    live = status != "refused"
    runtime = cp.runtime_module if live else ""
    member = f"Features.{plan.feature_name(qualname)}" if live and runtime else None
    return {
        "qualname": qualname,
        "name": cp.name,
        "path": str(cp.facts.path),
        "line": cp.facts.line,
        "status": status,
        "mro": [q for q in cp.mro if q in plan.classes],
        "factory": cp.name if status == "converted" else None,
        "wrap": cp.wrap_name if live and cp.writes_wrap else None,
        "wrapChain": [q for q in cp.wrap_chain if plan.classes[q].writes_wrap]
        if status == "converted" else [],
        "functions": {
            "methods": dict(cp.method_funcs) if live else {},
            "staticmethods": dict(cp.static_funcs) if live else {},
            "constants": dict(cp.constants) if live else {},
        },
        "dropped": list(cp.dropped) if live else [],
        "attributes": [
            {"property": prop, "backingField": fld, "noneDeletes": prop in cp.nullable}
            for prop, fld in sorted(cp.properties.items())
        ] if live else [],
        "feature": None if member is None else {
            "member": member,
            "runtimeModule": runtime,
            "isinstance": (f"has_param_feature(p, {member})" if status == "converted"
                           else f"has_param_feature(p, {member}) or isinstance(p, ({cp.name},))"),
            "typeIs": f"param_kind_is(p, {member})" if status == "converted" else None,
            "checks": {"isinstance": 0, "type-check": 0},
        },
        "refusal": _refusal_entry(cp.refusal, plan) if cp.refusal else None,
    }


def _refusal_entry(refusal: Refusal, plan: Plan) -> dict[str, Any]:
    """The refusal's kind and reason, and its chain of sites (``_chain``)."""
    return {
        "kind": refusal.kind.value,
        "cause": refusal.cause.value if refusal.cause else None,
        "chosen": refusal.chosen,
        "reason": refusal.reason,
        "follows": refusal.follows,
        "chain": list(_chain(refusal, plan)),
    }


def _chain(refusal: Refusal, plan: Plan) -> Iterator[dict[str, Any]]:
    """Every site the refusal follows from, from the class to the use that decided it.

    A kept class links to the class its reason names (``Refusal.follows``), and so on to a
    class refused for a reason of its own; that link is the place the reason names (the
    offending member's line), followed, for a use no rewrite covers, by the use and each
    step from it to where the class value ends up (``path:line`` of each)."""
    by_qualname = plan.classes
    seen: set[str] = set()
    current: Refusal | None = refusal
    while current is not None:
        if current.kind is RefusalKind.KEPT:
            named = by_qualname.get(current.follows) if current.follows else None
            yield _link(current.path, current.line,
                        f"{current.subject} is kept as a class because of "
                        f"{named.facts.qualname if named else 'its hierarchy'}")
            if named is None or named.facts.qualname in seen or named.refusal is None:
                return
            seen.add(named.facts.qualname)
            current = named.refusal
            continue
        if current.kind is RefusalKind.USE_SITE:
            yield _link(current.path, current.line,
                        f"{current.subject} is used where no rewrite reaches")
            yield from _use_site_links(current.use)
        else:
            yield _link(current.path, current.line, f"{current.subject}: {current.reason}")
        return


def _link(path: Path | str | None, line: int | None, message: str) -> dict[str, Any]:
    return {"path": str(path) if path is not None else None, "line": line, "message": message}


#: How each form of use is named in the chain's first link.
_USED_AS = {UseForm.VALUE: "as a value ", UseForm.CLASS: "as a class "}


def _use_site_links(use: BlockingUse | None) -> Iterator[dict[str, Any]]:
    """The use a USE_SITE refusal names (``Refusal.use``), then each step of its value
    chain at the place the step records (the reason is only their rendering). The chain's
    first step is the use itself, linked already."""
    if use is None:
        return
    yield _link(use.path, use.line, f"used {_USED_AS.get(use.form, '')}(`{use.code}`)")
    for index, step in enumerate(use.chain):
        if index == 0 and (step.path, step.line) == (use.path, use.line):
            continue
        yield _link(step.path, step.line, step.text)


# -- files --------------------------------------------------------------------------------


def _file_entry(file: FileResult, result: RunResult, runtime: str | None,
                owner: FeatureOwner) -> dict[str, Any]:
    """One file: outcome, rewrites by kind, imports added and removed, located changes.
    ``runtime``: the runtime module the file is, if it is one; ``owner``: whose feature a
    ``Features`` member is (``_feature_owners``)."""
    rewrites = dict(file.counts)
    changes: list[dict[str, Any]] = []
    added: list[str] = []
    removed: list[str] = []
    if file.outcome is Outcome.CHANGED and file.new_text is not None:
        old = file.old_text or ""
        if runtime is not None and result.plan is not None:
            rewrites["runtime-module"] = 1
            served = result.plan.runtimes[runtime].members
            changes.append({"lineNumber": 1, "diffSide": "right", "kind": "runtime-module",
                            "description": f"runtime module {runtime} "
                                           f"{'written' if not old else 'brought up to date'} "
                                           f"with {len(served)} Features member(s)",
                            "classes": sorted(served.values())})
        else:
            changes += _definition_changes(file.path, result)
            old_imports, new_imports = imports(old), imports(file.new_text)
            added = sorted((new_imports - old_imports).elements())
            removed = sorted((old_imports - new_imports).elements())
            if added:
                rewrites["import-added"] = len(added)
            if removed:
                rewrites["import-removed"] = len(removed)
            changes += check_changes(old, file.new_text, owner)
    return {
        "path": str(file.path),
        "outcome": file.outcome.value,
        "new": file.outcome is Outcome.CHANGED and file.path not in result.sources,
        "runtimeModule": runtime is not None,
        "rewrites": dict(sorted(rewrites.items())) if file.outcome is Outcome.CHANGED else {},
        "importsAdded": added,
        "importsRemoved": removed,
        "changes": changes,
        "refusals": [_qualname_of(r, result) for r in file.refusals],
        "error": file.error,
    }


def _qualname_of(refusal: Refusal, result: RunResult) -> str:
    """The qualified name of the class a refusal is about (its bare name if none is found)."""
    plan = result.plan
    for qualname, cp in (plan.classes.items() if plan else ()):
        if cp.refusal is refusal:
            return qualname
    return refusal.subject


def _definition_changes(path: Path, result: RunResult) -> list[dict[str, Any]]:
    """The class statements of ``path`` that became factories, or gained a wrap."""
    plan = result.plan
    out: list[dict[str, Any]] = []
    if plan is None:
        return out
    for cp in sorted(plan.classes.values(), key=lambda c: c.facts.line):
        if cp.facts.path != path or not (cp.converted or cp.shadow):
            continue
        if cp.converted:
            what = (f"class {cp.name} became the factory {cp.name}() and {cp.wrap_name}()"
                    if cp.writes_wrap else f"class {cp.name} became the factory {cp.name}()")
        else:
            what = f"class {cp.name} stays a class and gains {cp.wrap_name}() for converted subclasses"
        out.append({"lineNumber": cp.facts.line, "diffSide": "left",
                    "kind": "class" if cp.converted else "shadow", "description": what,
                    "classes": [cp.facts.qualname]})
    return out


def _feature_owners(plan: Plan | None) -> FeatureOwner:
    """``owner(member, runtime module)``: the qualified name of the class whose feature
    ``Features.<member>`` is (in that runtime module; any, when it is the only one)."""
    by_runtime: dict[tuple[str, str], str] = {}
    by_member: dict[str, set[str]] = {}
    if plan is not None:
        for module, runtime in plan.runtimes.items():
            for member, qualname in runtime.members.items():
                by_runtime[(module, member)] = qualname
                by_member.setdefault(member, set()).add(qualname)

    def owner(member: str, runtime: str | None) -> str | None:
        if runtime is not None and (runtime, member) in by_runtime:
            return by_runtime[(runtime, member)]
        candidates = by_member.get(member, set())
        return next(iter(candidates)) if len(candidates) == 1 else None

    return owner


def _tally_checks(classes: list[dict[str, Any]], files: list[dict[str, Any]]) -> None:
    """Count, per class, the checks of each kind that now name its ``Features`` member."""
    by_qualname = {c["qualname"]: c for c in classes}
    for entry in files:
        for change in entry["changes"]:
            if change["kind"] not in ("isinstance", "type-check"):
                continue
            for qualname in change.get("classes", ()):
                feature = by_qualname.get(qualname, {}).get("feature")
                if feature is not None:
                    feature["checks"][change["kind"]] += 1
