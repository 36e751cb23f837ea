"""``codemod check``'s engine: plan the tree as ``apply`` does, collect findings of every
code, sort them, keep those in focus and set the suppressed ones apart (prints nothing)."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from codemod.analysis import roots
from codemod.analysis.compiles import cpython_rejects
from codemod.analysis.index import ClassIndex
from codemod.analysis.names import module_name_for
from codemod.analysis.source_lines import char_column
from codemod.check.class_checks import CheckUse
from codemod.check.converted import FEATURES_CLASS, WRAP_DEF, Target, converted_names, factories_in
from codemod.check.findings import (
    allowed,
    class_finding,
    class_place,
    comments_by_line,
    is_suppressed,
    nested_allowed,
    nested_finding,
    other_class_only_uses,
    use_findings,
)
from codemod.check.locate import Locator, source_lines
from codemod.check.planned import facts_of, indexed_tree, settled_plan, unplanned
from codemod.check.result import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, CheckResult
from codemod.check.rules import Finding
from codemod.check.scan import AstFiles
from codemod.check.type_findings import type_compare_findings
from codemod.check.uses import ClassStyleUses, Resolver
from codemod.check.uses_from_ast import AstClassStyleUses, AstResolver, Undecided
from codemod.parallel import Background, fewer_collections
from codemod.pipeline.indexing import file_import_targets, hierarchy_names
from codemod.pipeline.results import RunResult
from codemod.planning.plan import FEATURES_NAME
from codemod.prefilters import aliased, inert
from codemod.scope import Scope, scope_of
from codemod.types import Options

__all__ = ["EXIT_CLEAN", "EXIT_ERROR", "EXIT_FINDINGS", "CheckResult", "check_tree"]


def check_tree(paths: list[Path], options: Options) -> CheckResult:
    """Check the tree under ``paths``: findings, suppressed findings, errors (no output).

    A path inside a package is checked against its whole tree (``scope``), and only the
    findings in the given paths are kept: the same as a full run reports for them.
    Raises ``DiscoveryError`` for a path that does not exist or is not Python.
    """
    scope = scope_of(paths, options.src)
    with fewer_collections(), roots.using(scope.roots):
        return _check_tree(paths, options, scope)


def _check_tree(paths: list[Path], options: Options, scope: Scope) -> CheckResult:
    run, index = indexed_tree(paths, options, scope)
    asts = AstFiles(run.sources)
    converted = _converted_targets(run, asts)
    type_search = _type_compare_search(run, scope, converted, asts, options.jobs)
    if _plan_can_matter(run, index, scope, converted):
        plan = run.plan = settled_plan(run, index, options)
    else:
        plan = run.plan = unplanned(index)
    findings: list[Finding] = []
    locator = Locator(asts)

    # CM001: every Parameter class, unless allow-listed.
    for qualname in sorted(plan.classes):
        if not allowed(plan, qualname, options.allow_classes):
            facts = plan.classes[qualname].facts
            findings.append(class_finding(plan, qualname, class_place(run, locator, facts)))
    # ... and the Parameter classes below a module's top level, which ``apply`` keeps.
    for path, nested in run.nested_classes:
        if not nested_allowed(path, nested, options.allow_classes):
            findings.append(nested_finding(path, nested, run.sources[path].text))

    # Names ``apply`` converts (before) and what it left behind (after).
    targets: dict[str, Target] = {}
    for q, p in plan.classes.items():
        if p.converted or p.shadow:
            targets[q] = Target("class" if p.converted else "kept", p.name, p.facts.module,
                                 p.name)
    converted_modules: list[str] = []
    for qual, target, by_features in converted.targets:
        if target.module not in converted_modules:
            converted_modules.append(target.module)
        # A shadow is also a Parameter class of the plan: "kept" wins; a runtime
        # module's member names the factory's ``Features`` member exactly.
        if by_features and qual in targets and targets[qual].kind == "factory":
            targets[qual] = target
        targets.setdefault(qual, target)
    converted_modules.sort()

    # CM002/CM003/CM004: class-style uses, in the files that name a target there.
    names = frozenset(t.name for t in targets.values()) | hierarchy_names(
        plan.index, run.facts.values(), [q for q, t in targets.items() if q in plan.classes])
    names |= _aliases(run, names)
    # The run's mention cache: the planning asked about most of these names already.
    mentioning = [p for p, s in sorted(run.sources.items()) if run.mentions.any(p, s.text, names)]
    modules = {module_name_for(p): p for p in mentioning}
    resolver = Resolver(run, modules, targets)
    ast_resolver = AstResolver(run.facts, modules, targets, asts,
                               lambda path: facts_of(path, run), lambda path: _failed(run, path))
    planned = {id(p.facts.node) for p in plan.classes.values()}
    # Only the given paths are looked at for uses (a file list, as pre-commit passes,
    # costs the plan of its tree plus those files); re-exports resolve through any file.
    in_focus = [p for p in mentioning if scope.in_focus(p)]
    for path in in_focus:
        style = asts.class_style(path, names)
        if style is False:
            continue
        text = run.sources[path].text
        found = None if style is None else _uses_from_ast(run, path, asts, ast_resolver,
                                                         targets, planned)
        if found is not None:
            lines = source_lines(text)
            for node, kind, label, named in found:
                line, offset = node.lineno, node.col_offset
                # ast columns count UTF-8 bytes; findings count characters, as LibCST does.
                place = line, char_column(lines[line - 1], offset)
                findings.extend(use_findings(path, place, kind, label, named))
            continue
        ff = facts_of(path, run)
        if ff is None:
            continue
        visitor = ClassStyleUses(ff, resolver, targets, planned)
        ff.module.visit(visitor)
        for cst_node, kind, label, named in visitor.found:
            place = locator.place(ff, text, cst_node, visitor.ordinals.get(id(cst_node)),
                                  visitor.counts)
            findings.extend(use_findings(path, place, kind, label, named))

    # CM003/CM004 the visitor does not see: other class-only uses of a factory, and
    # checks that reach one through a star import, ``getattr`` or ``globals()``.
    factories = {q: t for q, t in targets.items() if t.kind == "factory"}
    if factories:
        findings.extend(other_class_only_uses(run, factories, findings, in_focus))

    # CM005: factories next to classes that ``apply`` would still convert.
    remaining = sorted(plan.converted().values(),
                       key=lambda p: (str(p.facts.path), class_place(run, locator, p.facts)))
    if converted_modules and remaining:
        first = remaining[0].facts
        line, col = class_place(run, locator, first)
        findings.append(Finding(
            "CM005",
            f"the tree is partly converted: {len(remaining)} Parameter class(es) that "
            f"`codemod apply` converts remain (first: `{first.name}`), next to factory "
            f"functions it made in {', '.join(f'`{m}`' for m in converted_modules)}",
            first.path, line, col, True,
        ))

    # CM006: comparisons of two objects' types, once the tree holds converted parameters.
    if type_search is not None:
        failed = {f.path for f in run.failed()}
        findings.extend(f for f in type_search.result() if f.path not in failed)

    result = CheckResult(scanned=run.scanned, parsed=run.parsed,
                         converted_modules=converted_modules)
    result.errors = [f.error or f"{f.path}: failed" for f in run.failed()]
    result.warnings = list(run.warnings)
    comments_cache: dict[Path, dict[int, str]] = {}
    for finding in sorted(set(findings), key=Finding.sort_key):
        if not scope.in_focus(finding.path):
            continue
        if finding.path not in comments_cache:
            found_in = run.sources.get(finding.path)
            comments_cache[finding.path] = comments_by_line(found_in.text) if found_in else {}
        if is_suppressed(finding, comments_cache[finding.path]):
            result.suppressed.append(finding)
        else:
            result.findings.append(finding)
    return result


def _type_compare_search(run: RunResult, scope: Scope, converted: _Converted, asts: AstFiles,
                         jobs: int) -> Background | None:
    """CM006 (``type_compare_findings``) of the files in focus, once the tree holds
    converted parameters (an earlier ``apply``'s factories and its runtime module), else
    None. It reads no plan, so a forked process looks for it while this one plans (on
    vLLM 0.34 converted, 0.7 s of the check's 2.5 s had been spent after the plan). Each
    file's findings depend on that file alone: the caller drops those of a file the plan
    found to fail."""
    if not converted.targets or not converted.runtime_files:
        return None
    failed = {f.path for f in run.failed()}
    paths = [p for p in sorted(run.sources)
             if scope.in_focus(p) and p not in failed and p not in converted.runtime_files]
    return Background(functools.partial(type_compare_findings, run, paths,
                                        sorted(set(converted.runtime_files.values())), asts.tree),
                      jobs)


@dataclass
class _Converted:
    """What an earlier ``apply`` left in the tree: each factory (or runtime member) as a
    target, with its qualified name and whether a runtime module named it, in path
    order; and the runtime modules' files."""

    targets: list[tuple[str, Target, bool]] = field(default_factory=list)
    runtime_files: dict[Path, str] = field(default_factory=dict)


def _converted_targets(run: RunResult, asts: AstFiles) -> _Converted:
    """The factories and runtime modules of the tree (``factories_in``,
    ``converted_names``): read from the texts, whatever the plan."""
    found = _Converted()
    module_paths: dict[str, Path] = {}

    def defined_in(module: str) -> ast.Module | None:
        """The tree of ``module`` (a file of the run), for a runtime module's members."""
        if not module_paths:
            module_paths.update((module_name_for(p), p) for p in run.sources)
        path = module_paths.get(module)
        return asts.tree(path) if path is not None else None

    for path, source in sorted(run.sources.items()):
        by_features = bool(FEATURES_NAME in source.text and FEATURES_CLASS.search(source.text))
        # The substring test first: a multi-line regex over every file costs ~0.4 s on a
        # 3,600-file tree.
        if by_features or ("def wrap_" in source.text and WRAP_DEF.search(source.text)):
            tree = asts.tree(path)
            module = module_name_for(path)
            if by_features:
                found.runtime_files[path] = module
            left = [] if tree is None else (
                converted_names(tree, module, defined_in) if by_features else []) or factories_in(tree, module)
            for target in left:
                qual = f"{target.module}.{target.name}" if target.module else target.name
                found.targets.append((qual, target, by_features))
    return found


def _plan_can_matter(run: RunResult, index: ClassIndex, scope: Scope, converted: _Converted) -> bool:
    """Whether the findings in the given paths can depend on the plan. They cannot when
    no given file defines a Parameter class (at its top level or below) or names one (by
    any name the tree binds it to, re-exports included) other than in an import or as
    the callee of a call (``prefilters.inert``: no class-style use), no given file that
    names one is rejected by CPython (whether the run reports it depends on the plan),
    no Parameter class shares its qualified name with a factory, and no file waits for
    the plan's verdict on its encoding. ``check`` then reports for those files what a run
    that plans reports (the findings on factories and on type comparisons do not read the
    plan), and a pre-commit file list that touches no parameter code costs reading the
    tree and the class index. Not the same: the errors of other files that only the
    plan's rounds would have read, and the summary's count of files parsed."""
    if scope.focus is None or run.undecodable:
        return True
    classes = frozenset(index.param_classes)
    if any(qual in classes for qual, _, _ in converted.targets):
        return True
    if any(scope.in_focus(path) for path in {index.classes[q].path for q in classes}) \
            or any(scope.in_focus(path) for path, _ in run.nested_classes):
        return True
    names = hierarchy_names(index, run.facts.values())
    names |= _aliases(run, names)
    for path, source in run.sources.items():
        if scope.in_focus(path) and run.mentions.any(path, source.text, names) and (
                not inert(source.text, names) or cpython_rejects(path, source.text) is not None):
            return True
    return False


def _aliases(run: RunResult, names: frozenset[str]) -> frozenset[str]:
    """The local names imports bind one of ``names`` to under another name, followed
    through re-exports (``from .parameter import ModelWeightParameter as WeightParam``
    in an ``__init__.py``, then ``from pkg import WeightParam`` elsewhere): a file naming
    only the alias uses the target too. After ``apply`` no parsed file holds such an
    import (``hierarchy_names`` reads the parsed ones), so the imports are read here, of
    the files whose text binds a name ``as`` another. A name taken from an unrelated
    module under the same name only makes more files looked at: the resolver decides."""
    found = set(names)
    while True:
        current = frozenset(found)
        for path, source in sorted(run.sources.items()):
            text = source.text
            if not run.mentions.any(path, text, current) or not aliased(text, current):
                continue
            for local, target in file_import_targets(path, text) or ():
                if local not in found and target.rpartition(".")[2] in current:
                    found.add(local)
        if len(found) == len(current):
            return current - names


def _failed(run: RunResult, path: Path) -> bool:
    return any(f.path == path for f in run.failed())


def _uses_from_ast(run: RunResult, path: Path, asts: AstFiles, resolver: AstResolver,
                   targets: dict[str, Target], planned: set[int],
                   ) -> list[CheckUse] | None:
    """The class-style uses in ``path`` read from CPython's tree (``uses_from_ast``), or None
    when LibCST must read the file: CPython's tree leaves a name undecided, or the file
    does not compile (LibCST's reading then reports it, as before)."""
    tree = asts.tree(path)
    assert tree is not None
    ff = run.facts.get(path)
    if ff is None and _failed(run, path):
        return []  # reported already; nothing of it is looked at
    facts = resolver.read(path) if ff is None else ff
    if facts is None:
        return None  # does not compile: LibCST's reading reports it
    planned_here: set[int] = set()
    if ff is not None:
        tops = [stmt for stmt in ff.module.body if isinstance(stmt, cst.ClassDef)]
        chosen = [i for i, stmt in enumerate(tops) if id(stmt) in planned]
        if chosen:
            ast_tops = [stmt for stmt in tree.body if isinstance(stmt, ast.ClassDef)]
            if len(ast_tops) != len(tops):
                return None
            planned_here = {id(ast_tops[i]) for i in chosen}
    visitor = AstClassStyleUses(facts.bindings, facts.module_name, facts.globals,
                                resolver.canonical, targets, planned_here)
    try:
        visitor.run(tree)
    except Undecided:
        return None
    return visitor.found
