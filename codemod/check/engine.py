"""``codemod check``'s engine: plan the tree as ``apply`` does, collect findings of every
code, sort them, keep those in focus and set the suppressed ones apart (prints nothing)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from codemod import api
from codemod.analysis import roots
from codemod.analysis.names import module_name_for
from codemod.check.converted import FEATURES_CLASS, WRAP_DEF, Target, converted_names, factories_in
from codemod.check.findings import (
    allowed,
    class_finding,
    class_place,
    is_suppressed,
    other_class_only_uses,
    use_findings,
)
from codemod.check.locate import Locator, source_lines
from codemod.check.planned import facts_of, plan_tree
from codemod.check.rules import Finding
from codemod.check.scan import AstFiles
from codemod.check.uses import ClassStyleUses, Resolver
from codemod.discovery import prefilter
from codemod.planning.plan import FEATURES_NAME
from codemod.scope import Scope, scope_of
from codemod.types import Options

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@dataclass
class CheckResult:
    """Everything one check found; the CLI decides what to print and the exit code."""

    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    #: Files that could not be read or parsed (and internal errors), as messages.
    errors: list[str] = field(default_factory=list)
    #: Files skipped without failing the check (undecodable, naming no class), as messages.
    warnings: list[str] = field(default_factory=list)
    scanned: int = 0
    parsed: int = 0
    #: Modules that ``apply`` already converted (their factories are in a ``Features``).
    converted_modules: list[str] = field(default_factory=list)

    @property
    def fixable(self) -> int:
        """How many findings ``codemod apply`` fixes."""
        return sum(f.fixable for f in self.findings)

    @property
    def exit_code(self) -> int:
        """2 on an error, else 1 when there are findings, else 0."""
        if self.errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if self.findings else EXIT_CLEAN


def check_tree(paths: list[Path], options: Options) -> CheckResult:
    """Check the tree under ``paths``: findings, suppressed findings, errors (no output).

    A path inside a package is checked against its whole tree (``scope``), and only the
    findings in the given paths are kept: the same as a full run reports for them.
    Raises ``DiscoveryError`` for a path that does not exist or is not Python.
    """
    scope = scope_of(paths, options.src)
    with roots.using(scope.roots):
        return _check_tree(paths, options, scope)


def _check_tree(paths: list[Path], options: Options, scope: Scope) -> CheckResult:
    run = plan_tree(paths, options, scope)
    asts = AstFiles(run.sources)
    plan = run.plan
    assert plan is not None
    findings: list[Finding] = []
    locator = Locator(asts)

    # CM001: every Parameter class, unless allow-listed.
    for qualname in sorted(plan.classes):
        if not allowed(plan, qualname, options.allow_classes):
            facts = plan.classes[qualname].facts
            findings.append(class_finding(plan, qualname, class_place(run, locator, facts)))

    # Names ``apply`` converts (before) and what it left behind (after).
    targets: dict[str, Target] = {}
    for q, p in plan.classes.items():
        if p.converted or p.shadow:
            targets[q] = Target("class" if p.converted else "kept", p.name, p.facts.module,
                                 p.name)
    converted_modules: list[str] = []
    module_paths: dict[str, Path] = {}

    def defined_in(module: str) -> ast.Module | None:
        """The tree of ``module`` (a file of the run), for a runtime module's members."""
        if not module_paths:
            module_paths.update((module_name_for(p), p) for p in run.sources)
        path = module_paths.get(module)
        return asts.tree(path) if path is not None else None

    for path, source in sorted(run.sources.items()):
        by_features = FEATURES_NAME in source.text and FEATURES_CLASS.search(source.text)
        # The substring test first: a multi-line regex over every file costs ~0.4 s on a
        # 3,600-file tree.
        if by_features or ("def wrap_" in source.text and WRAP_DEF.search(source.text)):
            tree = asts.tree(path)
            module = module_name_for(path)
            left = [] if tree is None else (
                converted_names(tree, defined_in) if by_features else []) or factories_in(tree, module)
            for target in left:
                if target.module not in converted_modules:
                    converted_modules.append(target.module)
                qual = f"{target.module}.{target.name}" if target.module else target.name
                # A shadow is also a Parameter class of the plan: "kept" wins; a runtime
                # module's member names the factory's ``Features`` member exactly.
                if by_features and qual in targets and targets[qual].kind == "factory":
                    targets[qual] = target
                targets.setdefault(qual, target)
    converted_modules.sort()

    # CM002/CM003/CM004: class-style uses, in the files that name a target there.
    names = frozenset(t.name for t in targets.values()) | api.hierarchy_names(
        plan.index, run.facts.values(), [q for q, t in targets.items() if q in plan.classes])
    mentioning = [p for p, s in sorted(run.sources.items()) if prefilter(s.text, names)]
    resolver = Resolver(run, {module_name_for(p): p for p in mentioning}, targets)
    planned = {id(p.facts.node) for p in plan.classes.values()}
    for path in mentioning:
        if asts.class_style(path, names) is False:
            continue
        ff = facts_of(path, run)
        if ff is None:
            continue
        visitor = ClassStyleUses(ff, resolver, targets, planned)
        ff.module.visit(visitor)
        text = run.sources[ff.path].text
        for node, kind, named in visitor.found:
            place = locator.place(ff, text, node, visitor.ordinals.get(id(node)), visitor.counts)
            findings.extend(use_findings(ff, place, kind, named))

    # CM003/CM004 the visitor does not see: other class-only uses of a factory, and
    # checks that reach one through a star import, ``getattr`` or ``globals()``.
    factories = {q: t for q, t in targets.items() if t.kind == "factory"}
    if factories:
        findings.extend(other_class_only_uses(run, factories, findings, mentioning))

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

    result = CheckResult(scanned=run.scanned, parsed=run.parsed,
                         converted_modules=converted_modules)
    result.errors = [f.error or f"{f.path}: failed" for f in run.failed()]
    result.warnings = list(run.warnings)
    lines_cache: dict[Path, list[str]] = {}
    for finding in sorted(set(findings), key=Finding.sort_key):
        if not scope.in_focus(finding.path):
            continue
        if finding.path not in lines_cache:
            found_in = run.sources.get(finding.path)
            lines_cache[finding.path] = source_lines(found_in.text) if found_in is not None else []
        if is_suppressed(finding, lines_cache[finding.path]):
            result.suppressed.append(finding)
        else:
            result.findings.append(finding)
    return result


# -- the command ------------------------------------------------------------------------------
