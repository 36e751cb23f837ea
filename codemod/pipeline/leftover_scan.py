"""The leftover scan of a planning round, for ``apply`` and ``check`` alike: each
candidate file's uses of a converted class that no rewrite covers, from CPython's tree
wherever the mention screen decides the file (``leftover_screen.screen_leftovers``),
else from LibCST's conversion path (``workers.convert_all``, which ``apply`` lets
convert the file in the same pass). That path's machinery (LibCST's matchers and
codemods, the transforms: ~0.3 s of imports) is imported only for a file the screen
leaves undecided; on vLLM 0.34 there is none."""

from __future__ import annotations

from pathlib import Path

from codemod.pipeline.converted import Converted
from codemod.pipeline.results import RunResult
from codemod.pipeline.rewrite_reach import class_spellings
from codemod.planning.plan import Plan
from codemod.transforms.leftover_screen import leftovers_without_values, screen_leftovers


def scan_leftovers(paths: list[Path], plan: Plan, result: RunResult,
                   early: dict[Path, Converted] | None = None,
                   convert_undecided: bool = False,
                   loaded_by: dict[str, frozenset[Path]] | None = None) -> dict[Path, Converted]:
    """The leftovers of each of ``paths`` (``Converted`` without a conversion), keyed by
    path in the order given: what ``convert_all(..., convert=False)`` answers, in this
    process. ``paths`` are files that name a class (a file chosen for a backing field or
    a shape rewrite alone cannot hold a leftover). ``early``: the answers
    ``leftovers_before_proofs`` gave for this plan (not asked again).
    ``convert_undecided``: a file the screen leaves undecided is converted too, by the
    same LibCST pass that finds its leftovers (``apply``: if the plan settles, that
    conversion is the one it carries out, not parsed and converted again), with
    ``loaded_by`` as ``convert_all`` takes it."""
    names = class_spellings(plan)
    found: dict[Path, Converted] = dict(early or {})
    undecided: list[Path] = []
    for path in paths:
        if path in found:
            continue
        screened = screen_leftovers(path, result.sources[path].text, plan, names)
        if screened is None:
            undecided.append(path)
        else:
            found[path] = Converted(None, screened)
    if undecided:
        from codemod.pipeline.workers import convert_all

        found.update(convert_all(undecided, plan, result, 1, None, convert=convert_undecided,
                                 loaded_by=loaded_by))
    return {path: found[path] for path in paths}


def leftovers_before_proofs(paths: list[Path], plan: Plan, result: RunResult,
                            shape_only: frozenset[Path] = frozenset()) -> dict[Path, Converted]:
    """The answers of ``scan_leftovers`` that the value proofs cannot change, asked of a
    plan that holds none yet: the files the screen decides without a value use among
    their leftovers (``leftover_screen.leftovers_without_values``). ``check`` asks while
    the proofs are made in another process."""
    names = class_spellings(plan)
    early: dict[Path, Converted] = {}
    for path in paths:
        if path in shape_only:
            continue
        screened = leftovers_without_values(path, result.sources[path].text, plan, names)
        if screened is not None:
            early[path] = Converted(None, screened)
    return early
