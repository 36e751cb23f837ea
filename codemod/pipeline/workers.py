"""Converting every candidate file of a planning round, in forked workers when ``jobs`` >
1, results in input order: per file the conversion (or only its leftovers, once the
round has some), the verification of a changed text, and whether the file was parsed
there."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from codemod import parallel
from codemod.analysis.classes import FileFacts
from codemod.fileio import SourceFile
from codemod.pipeline.conversion import (
    convert_with_leftovers,
    may_rewrite_shapes,
    only_use_sites,
    verify_text,
)
from codemod.pipeline.converted import Converted, FileConversion, Leftovers
from codemod.pipeline.reading import parse_facts
from codemod.pipeline.results import Progress, RunResult
from codemod.pipeline.rewrite_reach import class_spellings, param_classes_of, rewritable_names
from codemod.planning.plan import Plan
from codemod.transforms.leftover_screen import screen_file
from codemod.transforms.skeleton import MARKER, skeleton_text
from codemod.types import FileResult, Outcome


def _convert_one(state: tuple[dict[Path, FileFacts], Plan, dict[Path, SourceFile],
                              frozenset[str], frozenset[str], bool, dict[str, frozenset[Path]],
                              frozenset[Path]],
                 path: Path) -> Converted:
    """Convert one file (in a worker process or not) and verify a changed text.

    A file with leftovers is not converted (the plan, settled on the leftover scan's
    answers, expected none: ``plan_rounds.settle_plan`` plans again); its leftovers
    are always computed.

    The leftovers come from ``screen_leftovers`` (CPython's parser) when it decides the
    file exactly; LibCST then runs only to convert, and not at all when the round
    converts nothing (``check``) or already has leftovers.
    """
    facts, plan, sources, names, class_names, convert, loaded_by, shape_only = state
    text = sources[path].text
    if path in shape_only and not may_rewrite_shapes(text, plan, param_classes_of(path, plan)):
        return Converted(None, [], not_candidate=True)
    screened, untouched = screen_file(path, text, plan, class_names)
    if screened is not None and (screened or not convert):
        return Converted(None, screened)  # all that is needed, from CPython's parser
    if untouched and only_use_sites(path, text, plan):
        # Parsed (by CPython's parser) and proven unchanged: LibCST would rebuild the
        # same text.
        return Converted(FileConversion(text, Counter(), []), [], verified=True,
                         parsed_here=path not in facts)
    ff = facts.get(path)
    if ff is not None:
        return _converted(ff, text, plan, names, convert, loaded_by, screened, parsed_here=False)
    # A plain use site: parsed where it is converted, as a skeleton where it can be.
    skeleton = _skeleton_facts(path, text, names)
    if skeleton is not None:
        done = _converted(skeleton, text, plan, names, convert, loaded_by, screened,
                          parsed_here=True)
        if done.conversion is None or MARKER not in done.conversion.new_text:
            return done
    ff, error = parse_facts(path, text)
    if ff is None:
        return Converted(None, [], parsed_here=True, parse_error=error)
    return _converted(ff, text, plan, names, convert, loaded_by, screened, parsed_here=True)


def _skeleton_facts(path: Path, text: str, names: frozenset[str]) -> FileFacts | None:
    """The facts of ``path`` from LibCST's parse of its ``skeleton_text`` (the bodies
    that name none of ``names`` replaced), where one is made, parses, and gives
    statement codes cut from the real text; else None (parse the whole text)."""
    skeleton = skeleton_text(text, names)
    if skeleton is None:
        return None
    ff, _ = parse_facts(path, text, skeleton)
    return ff if ff is not None and ff.codes_cut_from_text else None


def _converted(ff: FileFacts, text: str, plan: Plan, names: frozenset[str], convert: bool,
               loaded_by: dict[str, frozenset[Path]], screened: Leftovers | None,
               parsed_here: bool) -> Converted:
    """The conversion of a parsed file, its leftovers, and the check of a changed text."""
    conversion, leftovers = convert_with_leftovers(ff, plan, stop_at_leftovers=True,
                                                   names=names, leftovers_only=not convert,
                                                   loaded_by=loaded_by, screened=screened)
    if conversion is None:
        return Converted(None, leftovers, parsed_here=parsed_here)
    if conversion.new_text == text:
        return Converted(conversion, leftovers, verified=True, parsed_here=parsed_here)
    return Converted(conversion, leftovers, True,
                     verify_text(conversion.new_text, ff.path, conversion.generated),
                     parsed_here=parsed_here)


def convert_all(paths: list[Path], plan: Plan, result: RunResult, jobs: int,
                progress: Progress | None, convert: bool = True,
                loaded_by: dict[str, frozenset[Path]] | None = None,
                shape_only: frozenset[Path] = frozenset()) -> dict[Path, Converted]:
    """Convert every candidate file, in parallel when ``jobs`` > 1; keyed by path.
    ``shape_only``: files chosen only for a rewrite not tied to a class name (an
    attribute-dict copy or read, a comparison of types), each screened by
    ``may_rewrite_shapes`` first (``Converted.not_candidate`` when no rewrite can act).

    Files the analysis did not parse are parsed by the worker that converts them
    (counted once in ``result.parsed``, however many rounds convert them)."""
    sources = result.sources

    def report(done: int) -> None:
        if progress is not None:
            progress("convert", done, len(paths))

    converted = parallel.pmap(
        _convert_one, (result.facts, plan, sources, rewritable_names(plan), class_spellings(plan),
                       convert, loaded_by or {}, shape_only), paths, jobs,
        weight=lambda path: len(sources[path].text), progress=report,
    )
    failed = {f.path for f in result.failed()}
    for path, done in zip(paths, converted):
        if done.parse_error is not None and path not in failed:
            result.files.append(FileResult(path, Outcome.FAILED, error=done.parse_error))
        elif done.parsed_here and path not in result.parsed_elsewhere:
            result.parsed_elsewhere.add(path)
            result.parsed += 1
    return dict(zip(paths, converted))
