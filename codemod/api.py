"""The engine: analyse a tree, plan every class, transform each file; no writes, no printing.

``run(paths, options)`` returns a ``RunResult`` holding one ``FileResult`` per file that
mattered; the CLI decides what to write and print. ``convert_file`` is the pure per-file
step (facts + plan in, new text out).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from codemod.analysis.classes import FileFacts, analyse_file
from codemod.analysis.index import ClassIndex
from codemod.discovery import iter_python_files, prefilter
from codemod.fileio import SourceError, SourceFile, read_source
from codemod.planning.plan import Plan, build_plan
from codemod.transforms.definitions import DefinitionsTransformer
from codemod.transforms.refs import FileRefs
from codemod.transforms.use_sites import UseSiteTransformer, unconverted_uses
from codemod.types import FileResult, Options, Outcome, Refusal

#: Rounds of "a use site cannot be rewritten -> refuse that hierarchy -> plan again".
_MAX_ROUNDS = 8


@dataclass
class FileConversion:
    """The pure result of converting one file under a plan."""

    new_text: str
    counts: Counter[str]
    #: (line, col, class qualname, source) of class-style uses left unhandled.
    leftovers: list[tuple[int, int, str, str]]


@dataclass
class RunResult:
    """Everything one run found: per-file results, the plan, errors, counts."""

    files: list[FileResult] = field(default_factory=list)
    plan: Plan | None = None
    sources: dict[Path, SourceFile] = field(default_factory=dict)
    facts: dict[Path, FileFacts] = field(default_factory=dict)
    scanned: int = 0
    parsed: int = 0

    @property
    def refusals(self) -> list[Refusal]:
        """Refused classes (and unconvertible sites) over the whole tree."""
        return self.plan.refusals() if self.plan is not None else []

    def changed(self) -> list[FileResult]:
        """Files whose text changes."""
        return [f for f in self.files if f.outcome is Outcome.CHANGED]

    def failed(self) -> list[FileResult]:
        """Files that could not be read, parsed or converted."""
        return [f for f in self.files if f.outcome is Outcome.FAILED]

    def counts(self) -> Counter[str]:
        """Rewrites by kind over all files."""
        total: Counter[str] = Counter()
        for f in self.files:
            total.update(dict(f.counts))
        return total


def convert_file(ff: FileFacts, plan: Plan) -> FileConversion:
    """Rewrite one analysed file under ``plan``: use sites first, then definitions."""
    package = ff.module_name if ff.is_package else ff.module_name.rpartition(".")[0]
    context = CodemodContext(
        filename=str(ff.path), full_module_name=ff.module_name, full_package_name=package
    )
    refs = FileRefs(ff, plan, context)
    uses = UseSiteTransformer(ff, plan, refs)
    tree = ff.module.visit(uses)
    definitions = DefinitionsTransformer(ff, plan, refs, context)
    if definitions.mine:
        # Only the module body changes: no need to walk the whole tree again.
        tree = definitions.leave_Module(tree, tree)
    counts = Counter(uses.counts)
    if definitions.count:
        counts["class"] += definitions.count
    if counts:
        tree = AddImportsVisitor(context).transform_module(tree)
        heads = uses.handled_heads | definitions.base_heads
        if _request_import_removals(ff, heads, context):
            tree = RemoveImportsVisitor(context).transform_module(tree)
    return FileConversion(tree.code, counts, unconverted_uses(ff, plan, uses.handled))


#: A class statement whose bases mention Parameter, or an alias of Parameter: the only
#: files that can start a hierarchy. Everything else is reached by class name.
_DEFINES = re.compile(r"\bclass\s+\w+\s*\([^)]*Parameter|\bParameter\s+as\s+\w")


def _parse(path: Path, text: str, result: RunResult) -> FileFacts | None:
    try:
        ff = analyse_file(path, text)
    except cst.ParserSyntaxError as exc:
        result.files.append(FileResult(
            path, Outcome.FAILED,
            error=f"{path}:{exc.raw_line}:{exc.raw_column}: syntax error: {exc.message}",
        ))
        return None
    except (RecursionError, ValueError) as exc:
        result.files.append(FileResult(path, Outcome.FAILED, error=f"{path}: {exc}"))
        return None
    result.facts[path] = ff
    result.parsed += 1
    return ff


def _request_import_removals(ff: FileFacts, heads: set[str], context: CodemodContext) -> bool:
    """Ask ``RemoveImportsVisitor`` to drop imports of names a rewrite consumed.

    It removes one only if nothing uses it any more, so an import the tool did not make
    unused is kept (and so is one that was unused before: it never reaches this list).
    """
    requested = False
    for stmt in ff.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    local = alias.evaluated_alias or alias.evaluated_name
                    if local in heads and local in ff.bindings:
                        module = ff.bindings[local].rpartition(".")[0]
                        RemoveImportsVisitor.remove_unused_import(
                            context, module, obj=alias.evaluated_name, asname=alias.evaluated_alias
                        )
                        requested = True
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    local = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                    if local in heads:
                        RemoveImportsVisitor.remove_unused_import(
                            context, alias.evaluated_name, asname=alias.evaluated_alias
                        )
                        requested = True
    return requested


def _analyse(sources: dict[Path, SourceFile], result: RunResult) -> ClassIndex:
    """Parse only the files that can matter.

    First the files whose class statements mention Parameter; then, until nothing new
    turns up, the files that mention a Parameter class found so far (subclasses in other
    files, re-exports, use sites).
    """
    pending = set(sources)
    batch = sorted(p for p in pending if _DEFINES.search(sources[p].text))
    index = ClassIndex()
    seen_names: frozenset[str] = frozenset()
    while batch:
        for path in batch:
            pending.discard(path)
            _parse(path, sources[path].text, result)
        index = ClassIndex.build(list(result.facts.values()))
        names = frozenset(q.rsplit(".", 1)[-1] for q in index.param_classes)
        new_names = names - seen_names
        seen_names = names
        batch = sorted(p for p in pending if prefilter(sources[p].text, new_names)) \
            if new_names else []
    return index


def run(paths: list[Path], options: Options) -> RunResult:
    """Analyse, plan and convert the tree under ``paths`` (nothing is written)."""
    result = RunResult()
    files = iter_python_files(paths, options.excludes, options.extend_excludes)
    result.scanned = len(files)
    for path in files:
        try:
            result.sources[path] = read_source(path)
        except SourceError as exc:
            result.files.append(FileResult(path, Outcome.FAILED, error=str(exc)))
    index = _analyse(result.sources, result)
    facts = list(result.facts.values())
    forced: dict[str, str] = {}
    for _ in range(_MAX_ROUNDS):
        plan = build_plan(index, options.allow_classes, forced)
        conversions: dict[Path, FileConversion] = {}
        new_forced = dict(forced)
        facts = _candidates(plan, result)
        for ff in facts:
            conversion = convert_file(ff, plan)
            conversions[ff.path] = conversion
            for line, _col, qual, code in conversion.leftovers:
                new_forced.setdefault(
                    qual,
                    f"used as a class at {ff.path}:{line} (`{code}`), a use no rewrite covers; "
                    "converting it would break that line",
                )
        if new_forced == forced:
            break
        forced = new_forced
    result.plan = plan
    for ff in facts:
        conversion = conversions[ff.path]
        source = result.sources[ff.path]
        refusals = tuple(r for r in plan.refusals() if r.path == ff.path)
        if conversion.new_text == source.text:
            outcome = Outcome.REFUSED if refusals else Outcome.UNCHANGED
            result.files.append(FileResult(ff.path, outcome, refusals=refusals))
            continue
        error = _verify(conversion.new_text, ff.path)
        if error is not None:
            result.files.append(FileResult(ff.path, Outcome.FAILED, error=error))
            continue
        result.files.append(FileResult(
            ff.path, Outcome.CHANGED, old_text=source.text, new_text=conversion.new_text,
            refusals=refusals, counts=tuple(sorted(conversion.counts.items())),
        ))
    result.files.sort(key=lambda f: str(f.path))
    return result


def _candidates(plan: Plan, result: RunResult) -> list[FileFacts]:
    """Files a rewrite can touch: they define Parameter classes, or name a converted
    class or a backing field (parsed now if the analysis had no reason to)."""
    converted = plan.converted()
    names = frozenset({p.name for p in converted.values()} | set(plan.fields))
    defining = {p.facts.path for p in plan.classes.values()}
    out = []
    for path, source in sorted(result.sources.items()):
        if path not in defining and not (names and prefilter(source.text, names)):
            continue
        ff = result.facts.get(path)
        if ff is None and not any(f.path == path for f in result.failed()):
            ff = _parse(path, source.text, result)
        if ff is not None:
            out.append(ff)
    return out


def _verify(text: str, path: Path) -> str | None:
    """The new text must parse (LibCST) and compile (CPython) before anything is written."""
    try:
        cst.parse_module(text)
        compile(text, str(path), "exec", dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as exc:
        return f"{path}: internal error: the converted text does not compile ({exc}); file left unchanged"
    return None
