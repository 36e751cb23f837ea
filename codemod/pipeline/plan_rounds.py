"""Stages 3 and 4, classify uses and plan: plan every class, then refuse each class used
where no rewrite reaches (a leftover the round's scan finds, or an escape the safety net
finds) and plan again, until nothing changes (``settle_plan``), the same rounds for
``apply`` and ``check``; then, for ``apply``, the one conversion of the settled plan.
Also the value proofs every round shares, the candidate files a rewrite can touch, and
the verdict on undecodable files once the plan is known."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from codemod import parallel
from codemod.analysis import python_trees
from codemod.analysis.class_values import ClassValues, prove_class_values
from codemod.analysis.index import ClassIndex
from codemod.analysis.names import module_name_for
from codemod.pipeline.converted import Converted
from codemod.pipeline.escape_search import by_file, escaped_list, looked_up_list
from codemod.pipeline.imported_names import ImportedNames
from codemod.pipeline.indexing import hierarchy_names
from codemod.pipeline.leftover_scan import leftovers_before_proofs, scan_leftovers
from codemod.pipeline.results import Progress, RunResult
from codemod.pipeline.rewrite_reach import loaded_by_runtime, may_hold_shapes, rewritten_classes
from codemod.pipeline.runtime_cycles import cyclic_runtime_uses
from codemod.planning.field_targets import field_target_uses
from codemod.planning.lookup_gate import Heads, file_heads
from codemod.planning.plan import Plan, build_plan
from codemod.planning.safety_net import SafetyNet
from codemod.planning.type_members import type_member_uses
from codemod.prefilters import inert, may_define_root, prefilter
from codemod.types import BlockingUse, FileResult, Options, Outcome, UseForm

#: Rounds of "a use site cannot be rewritten -> refuse that hierarchy -> plan again",
#: beyond one per class. Each round that does not settle refuses at least one more class
#: (or, once, the name clashes: ``settle_plan``), so the rounds end within the number of
#: classes plus two; a plan is never carried out unsettled.
_SPARE_ROUNDS = 2


def convert_all(*args: Any, **kwargs: Any) -> dict[Path, Converted]:
    """``workers.convert_all``. The conversion machinery (LibCST's matchers and codemods,
    the transforms) is imported once the first round's screens are forked
    (``_import_conversion``), in time the forked processes share; ``check``, which
    converts nothing, imports it only for a file the mention screen cannot decide
    (``leftover_scan``)."""
    from codemod.pipeline.workers import convert_all as convert_each

    return convert_each(*args, **kwargs)


def _import_conversion() -> None:
    """Import what converting a file needs (see ``convert_all``), and search LibCST's
    import codemods for matcher decorators (``matcher_cache.warm``): the convert workers
    forked after inherit the answers instead of each searching on its first file."""
    import codemod.pipeline.workers  # noqa: F401
    from codemod.transforms import matcher_cache

    matcher_cache.warm()


def _judge_undecodable(result: RunResult, plan: Plan) -> None:
    """An undecodable file fails the run when it could matter: it may define a Parameter
    class, or names one of the plan's classes (or an alias) or a backing field. Any
    other is skipped with a warning, like a file with an unrelated syntax error."""
    names = hierarchy_names(plan.index, result.facts.values()) | frozenset(plan.fields)
    for path, (error, lossy) in sorted(result.undecodable.items()):
        if may_define_root(lossy) or (names and prefilter(lossy, names)):
            result.files.append(FileResult(path, Outcome.FAILED, error=error))
        else:
            result.warnings.append(f"{error}; skipped: it names no Parameter class")
    result.undecodable.clear()


def settle_plan(result: RunResult, index: ClassIndex, options: Options,
                progress: Progress | None = None, *, convert: bool = True,
                ) -> tuple[Plan, list[Path], dict[Path, Converted]]:
    """Plan, then refuse every class used as a class where no rewrite reaches, and plan
    again, until nothing changes: the plan ``apply`` carries out and ``check`` reports.

    Returns the plan, the candidate files of the last round and what converting them
    gave (leftovers, and with ``convert`` the conversions; without, only the leftovers
    are computed, which is all ``check`` needs). Uses ``options.jobs`` processes.
    """
    forced: dict[str, BlockingUse] = {}
    texts = {path: source.text for path, source in result.sources.items()}
    net = SafetyNet(texts)
    imported = ImportedNames(texts, lambda name: result.mentions.files_naming(name, texts),
                             hierarchy_names(index, result.facts.values()))
    # The proofs do not depend on the plan; they parse every file that mentions a class.
    # ``apply`` makes them here, while forked processes run the tree-wide screens and
    # look for candidates (text searches): the escape search and the conversion workers,
    # forked after, inherit the proofs' trees instead of parsing those files again (a
    # third of all parsing on vLLM 0.34 was such repeats). ``check`` parses the files the
    # proofs read first, here, then a forked process makes the proofs while this one
    # plans and looks for candidates: the proofs' process, the escape search and the
    # screens share those trees.
    proving = None
    reading_heads: parallel.Background | None = None
    heads: dict[Path, Heads] | None = None
    if not convert:
        # Where star imports are (which the plan asks of names it adds) is read by a
        # forked process while this one parses.
        stars = parallel.Background(imported.star_importers, options.jobs)
        # So is what each text may read modules' members through (the escape search's).
        reading_heads = parallel.Background(functools.partial(file_heads, texts), options.jobs)
        _parse_texts(_texts_to_parse(result, index, []))
        imported.adopt_star_importers(stars.result())
        proving = parallel.Background(functools.partial(class_value_proofs, result, index, texts),
                                      options.jobs)
    values: ClassValues | None = None
    # A name clash (a generated name its module already defines, as in a tree an earlier
    # ``apply`` converted) refuses its classes only once the rounds have found every
    # other reason: refused first, a class would give the clash as its reason, and the use
    # no rewrite covers (the reason it was kept the first time) would never be looked
    # for. A plan whose clashes are not refused is never carried out (the last round
    # refuses them whatever happens).
    check_names = False
    rounds = len(index.param_classes) + _SPARE_ROUNDS
    for attempt in range(rounds):
        check_names = check_names or attempt == rounds - 1
        plan = build_plan(index, options.allow_classes, forced,
                          allow_value_uses=options.allow_value_uses,
                          feature_prefix=options.feature_prefix, check_names=check_names,
                          star_held=imported.star_held)
        # The tree-wide screens read every file: forked processes run them (``_screens``).
        screening = _screens(plan, texts, options.jobs, together=convert)
        if convert:
            # The candidate search also answers which imports other files reach (asked by
            # the import removal of every round, computed once, before the pool forks).
            searching = parallel.Background(
                functools.partial(_rewrite_targets_and_imports, plan, result, imported), options.jobs)
            _import_conversion()
            if values is None:
                values = class_value_proofs(result, index, texts)
            candidates, shape_only, nameless, loaded_by, answers = searching.result()
            imported.adopt(answers)
        else:
            candidates, shape_only, nameless, loaded_by = _rewrite_targets(plan, result, False)
        # Asked before waiting for the screens and the proofs (``check`` has nothing else
        # to do meanwhile).
        cyclic = cyclic_runtime_uses(plan, result, candidates, loaded_by)
        early: dict[Path, Converted] = {}
        if proving is not None and values is None:
            # ``check``'s first round: the leftovers no proof can change, while the proofs
            # are made elsewhere.
            early = leftovers_before_proofs(candidates, plan, result, shape_only)
            _parse_while([proving, *screening], [result.sources[p].text for p in candidates])
            values = proving.result()
        elif convert:
            _parse_while(screening, [result.sources[p].text for p in candidates])
        assert values is not None
        unreached = {qual: use for qual, use in {**_unreached(screening), **cyclic}.items()
                     if qual not in forced}
        if unreached:
            # A field written where no field rewrite reaches, or a member read through
            # ``type(x)``, refuses its classes: plan again before converting (such a
            # rewrite would not compile; the member is not on ``Parameter``).
            forced = {**forced, **unreached}
            continue
        plan.values = values
        plan.imported_elsewhere = imported.kept
        # Asked only if the round finds no leftover; forked processes look for them
        # while this one scans the candidates for leftovers.
        if reading_heads is not None:
            heads, reading_heads = reading_heads.result(), None
        escaping = [parallel.Background(functools.partial(escaped_list, plan, result, net), options.jobs),
                    parallel.Background(functools.partial(looked_up_list, plan, result, net, heads,
                                                          imported.star_importer_paths()),
                                        options.jobs)]
        # The leftovers, for both commands from the same scan (CPython's trees where the
        # mention screen decides a file, LibCST's leftover scan elsewhere) of the same
        # files: a file chosen only for a backing field or a shape rewrite names no
        # class and cannot hold one.
        scanned = scan_leftovers([p for p in candidates if p not in nameless], plan, result,
                                 early=early, convert_undecided=convert, loaded_by=loaded_by)
        new_forced = _with_leftovers(forced, scanned, values)
        if new_forced == forced:
            for path, (line, _col, qual, code, how) in by_file(escaping):
                new_forced.setdefault(qual, BlockingUse(path, line, code, UseForm.ESCAPE, escape=how))
        else:
            for search in escaping:
                search.discard()
        if new_forced == forced:
            if plan.name_clashes:
                check_names = True  # every other reason is known: refuse the clashes
                continue
            if not convert:
                conversions = scanned
                break
            # The plan is settled: the transforms run, once, on every candidate (a file
            # the screen left to LibCST was converted by the scan, under this plan).
            # Their own leftover scan confirms the screen's answer; a use only it finds
            # (never seen on the test trees or the release trees) refuses its class and
            # the plan is made again, as for any leftover.
            done = {p: c for p, c in scanned.items() if c.conversion is not None}
            conversions = {**done, **convert_all([p for p in candidates if p not in done], plan,
                                                 result, options.jobs, progress,
                                                 loaded_by=loaded_by, shape_only=shape_only)}
            candidates = [p for p in candidates if not conversions[p].not_candidate]
            conversions = {p: conversions[p] for p in candidates}
            new_forced = _with_leftovers(forced, conversions, values)
            if new_forced == forced:
                break
        forced = new_forced
    else:
        # Cannot happen (see ``_SPARE_ROUNDS``): converting with leftovers would leave
        # uses of converted classes behind, so stop rather than write such a tree.
        raise RuntimeError(f"the plan did not settle in {rounds} rounds")
    _judge_undecodable(result, plan)
    return plan, candidates, conversions


def _with_leftovers(forced: dict[str, BlockingUse], found: dict[Path, Converted],
                    values: ClassValues) -> dict[str, BlockingUse]:
    """``forced`` and, for each class with a leftover in ``found`` that it does not hold
    yet, the use that refuses it: the first leftover of the class in path, line and
    column order, whichever way (and in which process) its file was scanned; a value
    use with the chain the proof gives it."""
    out = dict(forced)
    for path in sorted(found):
        for line, col, qual, code in sorted(found[path].leftovers):
            chain = values.why_not(path, line, col)
            out.setdefault(qual, BlockingUse(path, line, code, UseForm.VALUE, chain)
                           if chain is not None else BlockingUse(path, line, code, UseForm.CLASS))
    return out


def _rewrite_targets(plan: Plan, result: RunResult, convert: bool,
                     ) -> tuple[list[Path], frozenset[Path], frozenset[Path],
                                dict[str, frozenset[Path]] | None]:
    """The candidate files of a round, those chosen only for a rewrite not tied to a
    class name and those that name no class (``_candidate_files``), and with
    ``convert``, where a runtime's helpers cannot be imported at the top
    (``rewrite_reach.loaded_by_runtime``, when a candidate may hold a shape rewrite;
    else None).

    Leftovers are uses of class names: files that only write a backing field (or copy
    an attribute dict) cannot have any. ``check`` needs only leftovers, so it leaves them
    out; ``apply`` chooses them too, to convert them with the others once the plan is
    settled (the leftover scan passes over them). Whether a file that only copies an
    attribute dict can be changed at all (``may_rewrite_attr_dict``) is asked by the
    worker that converts it."""
    candidates, shape_only, nameless = _candidate_files(plan, result, fields=convert)
    loaded_by = None
    if convert and plan.runtime_modules and any(
            may_hold_shapes(result.sources[p].text) for p in candidates):
        loaded_by = loaded_by_runtime(plan, result)
    return candidates, shape_only, nameless, loaded_by


def _rewrite_targets_and_imports(plan: Plan, result: RunResult, imported: ImportedNames,
                                 ) -> tuple[list[Path], frozenset[Path], frozenset[Path],
                                            dict[str, frozenset[Path]] | None, tuple[object, ...]]:
    """``_rewrite_targets`` for ``apply``, and ``imported``'s answers (``prepared``; in a
    later round the forked process inherits them, already computed): both text searches
    over the tree, in one forked process."""
    return (*_rewrite_targets(plan, result, True), imported.prepared())


def _parse_while(waiting: list[parallel.Background], texts: list[str]) -> None:
    """While any of ``waiting`` is computed elsewhere, make CPython's trees of ``texts``
    (the candidates): the workers forked after inherit them instead of each parsing its
    own."""
    for text in texts:
        if not any(w.pending() for w in waiting):
            return
        _parse_texts([text])


def _parse_texts(texts: list[str]) -> None:
    """CPython's trees of ``texts`` (``python_trees``), made now; a text that does not
    parse is left to whoever reads it."""
    for text in texts:
        try:
            python_trees.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue


def _texts_to_parse(result: RunResult, index: ClassIndex, candidates: list[Path]) -> list[str]:
    """The texts ``check`` parses before forking the proofs: the candidates (the screens
    read them), then the other files that mention a class (the proofs, the escape
    search and the class-style use scan read those)."""
    names = hierarchy_names(index, result.facts.values())
    chosen = set(candidates)
    others = [path for path, source in sorted(result.sources.items())
              if path not in chosen and result.mentions.any(path, source.text, names)]
    return [result.sources[path].text for path in [*candidates, *others]]


def class_value_proofs(result: RunResult, index: ClassIndex, texts: dict[Path, str]) -> ClassValues:
    """Which mentions of the tree's Parameter classes are value uses proven harmless
    (``class_values``), for every planning round (the proof does not depend on the plan)."""
    failed = {f.path for f in result.failed()}
    readable = {path: text for path, text in texts.items() if path not in failed}
    modules = {path: module_name_for(path) for path in readable}
    names = hierarchy_names(index, result.facts.values())
    seeds = [path for path, text in sorted(readable.items()) if result.mentions.any(path, text, names)]
    return prove_class_values(readable, modules, names, seeds)


def _unreached_uses(plan: Plan, texts: dict[Path, str]) -> dict[str, BlockingUse]:
    """The classes whose backing fields are written, or members read through ``type(x)``,
    where no rewrite reaches (the tree-wide screens; a member read wins for a class that
    has both)."""
    return {**field_target_uses(plan, texts), **type_member_uses(plan, texts)}


def _screens(plan: Plan, texts: dict[Path, str], jobs: int,
             together: bool) -> list[parallel.Background]:
    """The tree-wide screens of a round, computed elsewhere: in one forked process
    (``together``: ``apply``, whose other processes keep both cores busy), or the field
    and the member screen each in its own (``check``, which waits for them: this
    process would sit idle while one process ran both)."""
    if together:
        return [parallel.Background(functools.partial(_unreached_uses, plan, texts), jobs)]
    return [parallel.Background(functools.partial(screen, plan, texts), jobs)
            for screen in (field_target_uses, type_member_uses)]


def _unreached(screening: list[parallel.Background]) -> dict[str, BlockingUse]:
    """What ``_screens`` found, merged in ``_unreached_uses``' order."""
    found: dict[str, BlockingUse] = {}
    for screen in screening:
        found.update(screen.result())
    return found


def rewrite_candidates(plan: Plan, result: RunResult, progress: Progress | None = None,
                       fields: bool = True) -> list[Path]:
    """Files a rewrite can touch (``_candidate_files``, each chosen only for a rewrite not
    tied to a class name screened)."""
    from codemod.pipeline.conversion import may_rewrite_shapes

    chosen, shape_only, _ = _candidate_files(plan, result, fields)
    return [path for path in chosen
            if path not in shape_only or may_rewrite_shapes(result.sources[path].text, plan)]


def _candidate_files(plan: Plan, result: RunResult, fields: bool = True,
                     ) -> tuple[list[Path], frozenset[Path], frozenset[Path]]:
    """Files a rewrite can touch: they define Parameter classes, or name a converted
    class (or an alias of one) or, with ``fields``, a backing field, in a way that is
    not ``inert``, or (also with ``fields``: never a leftover) copy or read an attribute
    dict, or compare two objects' types. Those the analysis did not parse are parsed where
    they are converted. Returns them in path order; those chosen only for a rewrite
    not tied to a class name, which ``may_rewrite_shapes`` has yet to screen (the caller
    does); and those chosen without naming a class (those, and the files chosen for a
    backing field alone), which hold no leftover: the others are the files chosen
    without ``fields``."""
    names = hierarchy_names(plan.index, result.facts.values(), rewritten_classes(plan))
    backing = frozenset(plan.fields) if fields else frozenset()
    either = names | backing
    defining = {p.facts.path for p in plan.classes.values()}
    failed = {f.path for f in result.failed()}
    chosen: list[Path] = []
    shape_only: set[Path] = set()
    field_only: set[Path] = set()
    for path, source in sorted(result.sources.items()):
        if path in failed:
            continue
        if path in defining or (result.mentions.any(path, source.text, either)
                                and not inert(source.text, names, backing)):
            chosen.append(path)
            # ``inert`` with fields implies ``inert`` without: the files chosen without
            # ``fields`` are these, less those chosen for a backing field alone.
            if backing and path not in defining and not (
                    result.mentions.any(path, source.text, names) and not inert(source.text, names)):
                field_only.add(path)
        elif fields and plan.runtime_modules and may_hold_shapes(source.text):
            chosen.append(path)
            shape_only.add(path)
    return chosen, frozenset(shape_only), frozenset(shape_only | field_only)
