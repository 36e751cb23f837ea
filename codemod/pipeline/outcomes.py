"""Stage 7, result: turn the last planning round's conversions into one ``FileResult`` per
candidate file (changed, unchanged, refused or failed; a conversion stopped at a leftover
is completed, a changed text not yet verified is verified), and add a result for each
family's runtime module."""

from __future__ import annotations

from pathlib import Path

from codemod.pipeline.converted import Converted
from codemod.pipeline.reading import parse_facts
from codemod.pipeline.results import RunResult
from codemod.planning.plan import Plan
from codemod.runtime.emit import foreign_statements, runtime_module_text
from codemod.types import FileResult, Outcome


def record_outcomes(result: RunResult, plan: Plan, candidates: list[Path],
                    conversions: dict[Path, Converted]) -> None:
    """A ``FileResult`` in ``result`` for each candidate file and runtime module of
    ``plan``, in path order."""
    # Imported by the rounds before (``plan_rounds._import_conversion``), not with this module.
    from codemod.pipeline.conversion import convert_file, verify_text

    for path in candidates:
        done = conversions[path]
        source = result.sources[path]
        if done.parse_error is not None:  # reported by convert_all
            continue
        if done.conversion is None:  # stopped at a leftover in what became the last round
            ff = result.facts.get(path) or parse_facts(path, source.text)[0]
            assert ff is not None
            done = Converted(convert_file(ff, plan), done.leftovers)
        conversion = done.conversion
        assert conversion is not None
        result.warnings += [f"{path}:{line}: {why}" if line is not None else f"{path}: {why}"
                            for line, why in conversion.left_alone]
        refusals = tuple(r for r in plan.refusals() if r.path == path)
        if conversion.error is not None:
            result.files.append(FileResult(path, Outcome.FAILED, error=conversion.error))
            continue
        if conversion.new_text == source.text:
            outcome = Outcome.REFUSED if refusals else Outcome.UNCHANGED
            result.files.append(FileResult(path, outcome, refusals=refusals))
            continue
        error = done.error if done.verified else verify_text(conversion.new_text, path,
                                                             conversion.generated)
        if error is not None:
            result.files.append(FileResult(path, Outcome.FAILED, error=error))
            continue
        result.files.append(FileResult(
            path, Outcome.CHANGED, old_text=source.text, new_text=conversion.new_text,
            refusals=refusals, counts=tuple(sorted(conversion.counts.items())),
        ))
    _add_runtime_modules(result, plan)
    result.files.sort(key=lambda f: str(f.path))


def _add_runtime_modules(result: RunResult, plan: Plan) -> None:
    """A result for each runtime module of the plan (``codemod.runtime.emit``): a new file,
    an earlier output of ``apply`` brought up to date, or one that already says it all."""
    converted = {p.runtime_module for p in plan.classes.values() if p.converted}
    for module, runtime in sorted(plan.runtimes.items()):
        if module not in converted:
            continue
        text = runtime_module_text(runtime)
        source = result.sources.get(runtime.path)
        old = source.text if source is not None else ""
        if old == text:
            result.files.append(FileResult(runtime.path, Outcome.UNCHANGED))
        elif old and (foreign := foreign_statements(old, text)):
            line, what = foreign[0]
            result.files.append(FileResult(runtime.path, Outcome.FAILED, error=(
                f"{runtime.path}:{line}: the runtime module holds code this version of codemod "
                f"did not write ({what}); writing it again would drop that code: move it to "
                "another module, then run again")))
        else:
            result.files.append(FileResult(runtime.path, Outcome.CHANGED, old_text=old,
                                           new_text=text))
