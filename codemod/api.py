"""The engine: analyse a tree, plan every class, transform each file; no writes, no printing.

``run(paths, options)`` returns a ``RunResult`` holding one ``FileResult`` per file that
mattered; the CLI decides what to write and print. ``convert_file`` is the pure per-file
step (facts + plan in, new text out).
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.codemod import CodemodContext

from codemod import parallel
from codemod.analysis import python_trees, roots
from codemod.analysis.class_values import ClassValues, prove_class_values
from codemod.analysis.classes import FileFacts, analyse_file
from codemod.analysis.compiles import RUNNING_PYTHON, cpython_rejects, needs_newer_python
from codemod.analysis.import_graph import loaded_while_importing
from codemod.analysis.index import ClassIndex
from codemod.analysis.names import import_targets, module_name_for
from codemod.discovery import (
    defines_or_aliases,
    dotted_chains,
    import_spans,
    inert,
    iter_python_files,
    may_define_root,
    mentioned,
    prefilter,
)
from codemod.fileio import SourceError, SourceFile, UndecodableSource, read_source
from codemod.planning.plan import Plan, build_plan
from codemod.planning.safety_net import Escape, SafetyNet, dotted_mention
from codemod.runtime.emit import runtime_module_text
from codemod.scope import Scope, scope_of
from codemod.transforms import matcher_cache
from codemod.transforms.definitions import DefinitionsTransformer
from codemod.transforms.dict_copies import DictCopyTransformer
from codemod.transforms.dict_copies import added_names as dict_added_names
from codemod.transforms.dict_copies import may_rewrite as may_rewrite_attr_dict
from codemod.transforms.field_screen import fields_untouched
from codemod.transforms.import_edits import add_imports, remove_imports, request_import_removals
from codemod.transforms.import_format import format_imports, group_added_imports
from codemod.transforms.leftover_screen import screen_file
from codemod.transforms.refs import FileRefs
from codemod.transforms.statement_visits import Made, visit_mentioning
from codemod.transforms.use_sites import UseSiteTransformer, unconverted_uses
from codemod.types import FileResult, Options, Outcome, Refusal

matcher_cache.install()

#: Rounds of "a use site cannot be rewritten -> refuse that hierarchy -> plan again".
_MAX_ROUNDS = 8

#: ``progress(stage, done, total)``: called by ``run`` as files are parsed ("parse") and
#: converted ("convert"), so that a front end can show a progress bar.
Progress = Callable[[str, int, int], None]


@dataclass
class FileConversion:
    """The pure result of converting one file under a plan."""

    new_text: str
    counts: Counter[str]
    #: (line, col, class qualname, source) of class-style uses left unhandled.
    leftovers: list[tuple[int, int, str, str]]
    #: The code of the statements generated for ``new_text``; the rest of it is the
    #: file's own text, which LibCST parsed already (None: all of it was generated).
    generated: list[str] | None = None


@dataclass
class RunResult:
    """Everything one run found: per-file results, the plan, errors, counts."""

    files: list[FileResult] = field(default_factory=list)
    plan: Plan | None = None
    sources: dict[Path, SourceFile] = field(default_factory=dict)
    facts: dict[Path, FileFacts] = field(default_factory=dict)
    scanned: int = 0
    parsed: int = 0
    #: Files parsed by conversion workers (not kept in ``facts``).
    parsed_elsewhere: set[Path] = field(default_factory=set)
    #: Which names each file mentions, so that no file is scanned twice for a name.
    mentions: Mentions = field(default_factory=lambda: Mentions())
    #: Files whose bytes do not decode, until the plan says whether they can matter:
    #: path -> (error, text with the bad bytes replaced).
    undecodable: dict[Path, tuple[str, str]] = field(default_factory=dict)
    #: Files skipped without failing the run, as messages.
    warnings: list[str] = field(default_factory=list)
    #: The trees read for the given paths, and those paths when narrower (``scope``).
    scope: Scope | None = None

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
    conversion, _ = _convert(ff, plan, stop_at_leftovers=False)
    assert conversion is not None
    return conversion


Leftovers = list[tuple[int, int, str, str]]


def _convert(ff: FileFacts, plan: Plan, stop_at_leftovers: bool,
             names: frozenset[str] | None = None,
             leftovers_only: bool = False,
             loaded_by: dict[str, frozenset[Path]] | None = None,
             screened: Leftovers | None = None) -> tuple[FileConversion | None, Leftovers]:
    """``convert_file`` and its leftovers; with ``stop_at_leftovers``, no conversion as
    soon as this file, or another of the round (``parallel.stopping()``), is known to
    hold a use no rewrite covers (the plan is then made again: the rest of the work
    would be thrown away). ``screened``: the leftovers ``screen_leftovers`` decided for
    this file and plan, the same list LibCST's scan would give (not scanned again)."""
    package = ff.module_name if ff.is_package else ff.module_name.rpartition(".")[0]
    context = CodemodContext(
        filename=str(ff.path), full_module_name=ff.module_name, full_package_name=package
    )
    refs = FileRefs(ff, plan, context)
    uses = UseSiteTransformer(ff, plan, refs)
    names = names if names is not None else _rewritable_names(plan)
    made = Made()
    tree = visit_mentioning(ff.module, uses, names, ff.statement_codes, descend=True, made=made)
    leftovers = screened if screened is not None else unconverted_uses(ff, plan, uses.handled, names)
    if leftovers_only or (stop_at_leftovers and (leftovers or parallel.stopping())):
        return None, leftovers
    definitions = DefinitionsTransformer(ff, plan, refs, context)
    if definitions.mine or definitions.shadows:
        # Only the module body changes: no need to walk the whole tree again.
        tree = definitions.leave_Module(tree, tree)
    counts = Counter(uses.counts)
    if definitions.count:
        counts["class"] += definitions.count
    if definitions.shadow_count:
        counts["shadow"] += definitions.shadow_count
    source = ff.text or ff.module.code
    # A file that already names the helper (rebinds already, or uses the name for
    # something else) is left as it is: no second call, no shadowed name.
    if plan.runtime_modules and _DICT_COPY.search(source) and \
            "rebind_param_methods" not in source and "param_attr_dict" not in source:
        # The helper comes from a runtime module that does not load this file while it
        # is imported (a top-level import of it would be a cycle); failing that, it is
        # imported inside the function that copies.
        # The runtime of the most classes first (the main hierarchy's defining module).
        served = Counter(p.runtime_module for p in plan.classes.values() if p.converted or p.shadow)
        runtimes = sorted(plan.runtime_modules, key=lambda r: (-served[r], r))
        loaded_by = loaded_by or {}
        free = [r for r in runtimes if ff.path not in loaded_by.get(r, ())]
        copies = DictCopyTransformer(refs, free[0] if free else runtimes[0],
                                     local=not free or refs.is_runtime)
        before = tree
        tree = visit_mentioning(tree, copies, frozenset({"__dict__", "vars"}),
                                [ff.statement_code(before, stmt, made) for stmt in before.body])
        if copies.count:
            counts["dict-copy"] += copies.count
        if copies.reads:
            counts["dict-read"] += copies.reads
    if counts:
        tree = add_imports(tree, context)
        heads = uses.handled_heads | definitions.base_heads
        removable = request_import_removals(ff, heads, context)
        if removable:
            tree = remove_imports(tree, removable, context, ff.code_of(tree, made),
                                  functools.partial(ff.statement_code, made=made))
        tree = group_added_imports(ff.module, format_imports(ff.module, tree, ff.statement_codes,
                                                             ff.source_code()),
                                   ff.statement_codes, ff.module_name.split(".")[0],
                                   frozenset(plan.runtime_modules))
    new_text, generated = ff.code_and_generated(tree, made)
    return FileConversion(new_text, counts, leftovers, generated), leftovers


#: ``t.__dict__ = ...``, ``t.__dict__.update(...)``, a ``setattr`` loop over ``.items()``: a
#: copy ``DictCopyTransformer`` follows with a rebinding; ``.get(``, ``[``, ``in``, ``==``:
#: a read it may make old-style (a cheap text test first; the transformer decides).
#: Each alternative starts with its literal and checks the word boundary after it
#: (``in(?<=(?<!\w)in)`` is ``\bin``): the regex engine then skips from one of four
#: first characters to the next instead of trying every alternative at every position.
_DICT_COPY = re.compile(
    r"\.__dict__\s*(?:=|\|=|\.update\s*\(|\.get\s*\(|\[|\.items\s*\(|\.keys\s*\(|\.values\s*\(|!=)"
    r"|in(?<=(?<!\w)in)\s+[\w.]+\.__dict__|vars(?<=(?<!\w)vars)\s*\("
    r"|getattr(?<=(?<!\w)getattr)\s*\([^()]*[\"']__dict__[\"']"
)


def _rewritable_names(plan: Plan) -> frozenset[str]:
    """Every identifier a use-site rewrite can start from: the converted classes, the
    names they are imported under anywhere in the tree, their backing fields."""
    return _class_names(plan) | frozenset(plan.fields)


def _class_names(plan: Plan) -> frozenset[str]:
    """Every identifier a use of a converted (or shadow) class can be spelled with."""
    return hierarchy_names(plan.index, plan.index.files.values(), _rewritten_classes(plan))


def _rewritten_classes(plan: Plan) -> list[str]:
    """Classes whose uses a rewrite changes: the converted ones and the kept shadows
    (``isinstance(p, Shadow)`` must also answer for converted parameters)."""
    return [q for q, p in plan.classes.items() if p.converted or p.shadow]


def hierarchy_names(index: ClassIndex, facts: Iterable[FileFacts],
                    classes: Iterable[str] | None = None) -> frozenset[str]:
    """Every identifier under which a file can refer to one of ``classes``.

    ``classes`` defaults to all Parameter classes of ``index``. The names are the class
    names plus the local names that parsed files bind to them under another name (``from
    .parameter import BasevLLMParameter as Base``, also as a re-export in an
    ``__init__.py``): a file naming only ``Base`` uses the class too.
    """
    wanted = set(index.param_classes if classes is None else classes)
    names = {qualname.rsplit(".", 1)[-1] for qualname in wanted}
    for ff in facts:
        for local, target in ff.bindings.items():
            if local not in names and index.canonical(target) in wanted:
                names.add(local)
    return frozenset(names)


def parse_file(path: Path, text: str, result: RunResult) -> FileFacts | None:
    """Parse and analyse one file into ``result`` (None, and a FAILED result, if it does not parse)."""
    ff, error = _analyse_file(path, text)
    if error is not None:
        result.files.append(FileResult(path, Outcome.FAILED, error=error))
        return None
    assert ff is not None
    result.facts[path] = ff
    result.parsed += 1
    return ff


def _analyse_file(path: Path, text: str) -> tuple[FileFacts | None, str | None]:
    """``analyse_file``, or the message naming why the file does not parse.

    CPython compiles the text first: its compiler is much faster than LibCST's parser,
    names the exact line, and rejects what LibCST accepts but no interpreter runs (200+
    nested brackets, a 1,000-term ``a + b + ...`` chain, ``return`` outside a function,
    a late ``__future__`` import), on which LibCST can take minutes or overflow its stack
    and a conversion would only fail at the final compile check.
    """
    error = _cpython_rejects(path, text)
    newer = needs_newer_python(text) if error is not None else None
    if error is not None and newer is None:
        return None, error
    try:
        return analyse_file(path, text), None  # newer syntax: LibCST reads it
    except cst.ParserSyntaxError as exc:
        if newer is not None:
            return None, (f"{error} (Python {newer} syntax, which this Python {RUNNING_PYTHON} "
                          "cannot compile; LibCST rejects it too)")
        return None, f"{path}:{exc.raw_line}:{exc.raw_column}: syntax error: {exc.message}"
    except (RecursionError, ValueError) as exc:
        return None, f"{path}: {exc}"


def _cpython_rejects(path: Path, text: str) -> str | None:
    """``cpython_rejects(path, text)``, compiling the tree the run's other readers share
    (``python_trees``) instead of parsing the text again; the text itself only when it
    does not parse or its tree does not compile, so that the message is CPython's own."""
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return cpython_rejects(path, text)
    return None if cpython_rejects(path, tree) is None else cpython_rejects(path, text)


class Mentions:
    """Which of the names asked about so far each file mentions (``discovery.mentioned``).

    The analysis rounds and the candidate search of every planning round ask about
    overlapping sets of names; each file is scanned for a name once.
    """

    def __init__(self) -> None:
        self._asked: dict[Path, set[str]] = {}
        self._found: dict[Path, set[str]] = {}

    def any(self, path: Path, text: str, names: frozenset[str]) -> bool:
        """Whether ``text`` (the contents of ``path``) mentions one of ``names``."""
        asked = self._asked.setdefault(path, set())
        found = self._found.setdefault(path, set())
        new = names - asked
        if new:
            found |= mentioned(text, frozenset(new))
            asked |= new
        return not found.isdisjoint(names)


def _parse_all(paths: list[Path], result: RunResult, progress: Progress | None) -> None:
    for done, path in enumerate(paths, 1):
        parse_file(path, result.sources[path].text, result)
        if progress is not None:
            progress("parse", result.parsed, result.parsed + len(paths) - done)


def analyse(sources: dict[Path, SourceFile], result: RunResult,
            progress: Progress | None = None) -> ClassIndex:
    """Parse only the files that can matter, and index their classes (see ``_index``)."""
    with parallel.fewer_collections():
        return _index(sources, result, progress)


def _index(sources: dict[Path, SourceFile], result: RunResult,
           progress: Progress | None = None) -> ClassIndex:
    """Parse only the files the class index needs, and index their classes.

    First the files that may start a hierarchy (``may_define_root``). Then, until nothing
    new turns up, among the files that mention a name of a Parameter class found so far
    (or an alias of one) in a way some rewrite or refusal depends on (``inert`` files,
    whose every mention is an import or a construction call, never matter): those whose
    class statements name one in their bases (subclasses), those that import one under
    another name (aliases), and the modules any of them imports those names through
    (re-exports), so that every name resolves as if the whole tree had been parsed.

    The other mentioning files are plain use sites: the index needs nothing from them
    but the modules they import through (read from their import statements with
    CPython's parser). They are parsed where they are converted, by ``run``'s workers.
    """
    pending = set(sources)
    batch = sorted(p for p in pending if may_define_root(sources[p].text))
    index = ClassIndex()
    seen_names: frozenset[str] = frozenset()
    mentioning: set[Path] = set()  # unparsed files that mention a name
    hubs = _ModuleFiles(sources)
    targets_of: dict[Path, list[tuple[str, str]] | None] = {}
    while batch:
        pending.difference_update(batch)
        _parse_all(batch, result, progress)
        index = ClassIndex.build(list(result.facts.values()))
        names = hierarchy_names(index, result.facts.values())
        new_names = names - seen_names
        seen_names = names
        if new_names:
            found = {p for p in pending if result.mentions.any(p, sources[p].text, new_names)}
            mentioning |= found
            pending -= found
        uses = {p for p in mentioning if not inert(sources[p].text, names)}
        wanted = {p for p in uses if defines_or_aliases(sources[p].text, names)}
        through = hubs.imported_through(result.facts.values(), names)
        for path in sorted(uses - wanted):
            if path not in targets_of:
                targets_of[path] = file_import_targets(path, sources[path].text)
            targets = targets_of[path]
            if targets is None:  # CPython cannot read it either: parse it here, report it
                wanted.add(path)
            else:
                through |= hubs.reached(targets, sources[path].text, names)
        wanted |= through & mentioning
        mentioning -= wanted
        batch = sorted(wanted)
    return index


def file_import_targets(path: Path, text: str) -> list[tuple[str, str]] | None:
    """(local name, qualified name) of every import in ``text``; None if it does not parse.

    Read from the import statements alone when ``discovery.import_spans`` finds them all
    (as many spans as ``import`` keywords), else from the whole file: CPython's parser,
    an order of magnitude faster than LibCST's. Relative imports resolve against the
    module name, as ``analysis.names.import_bindings`` does.
    """
    spans = import_spans(text)
    try:
        if len(spans) == len(_IMPORT_KEYWORD.findall(text)):
            trees = [ast.parse(span.strip()) for span in spans]
        else:
            trees = [python_trees.parse(text)]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    module_name = module_name_for(path)
    is_package = path.name == "__init__.py"
    return [pair for tree in trees for pair in import_targets(tree, module_name, is_package)]


_IMPORT_KEYWORD = re.compile(r"(?<![\w.])import(?!\w)")


class _ModuleFiles:
    """Which file of the tree holds a module, for following imports to re-exports."""

    def __init__(self, sources: dict[Path, SourceFile]) -> None:
        self.sources = sources
        self._by_module: dict[str, Path] | None = None

    def locate(self, module: str) -> Path | None:
        """The file of the longest prefix of ``module`` that is a file of the tree."""
        if self._by_module is None:
            self._by_module = roots.module_files(sorted(self.sources))
        parts = module.split(".")
        while parts:
            path = self._by_module.get(".".join(parts))
            if path is not None:
                return path
            parts.pop()
        return None

    def imported_through(self, facts: Iterable[FileFacts], names: frozenset[str]) -> set[Path]:
        """Files that ``facts`` reach one of ``names`` through: ``from M import X``,
        ``M.X``, ``pkg.M.X`` (where ``pkg`` is imported), for every such module ``M``."""
        out: set[Path] = set()
        for ff in facts:
            out |= self.reached(list(ff.bindings.items()), self.sources[ff.path].text, names)
        return out

    def reached(self, bindings: list[tuple[str, str]], text: str,
                names: frozenset[str]) -> set[Path]:
        """Files of the modules that ``bindings`` (local name, qualified name; a local
        name may come more than once) and the dotted mentions in ``text`` reach one of
        ``names`` through."""
        modules = [
            target.rpartition(".")[0] for local, target in bindings
            if local in names or target.rpartition(".")[2] in names
        ]
        heads: dict[str, list[str]] = {}
        for local, target in bindings:
            heads.setdefault(local, []).append(target)
        for chain in dotted_chains(text, names):
            head, _, rest = chain.partition(".")
            for target in heads.get(head, ()):
                modules.append(f"{target}.{rest}" if rest else target)
        out: set[Path] = set()
        for module in modules:
            path = self.locate(module) if module else None
            if path is not None:
                out.add(path)
        return out


def run(paths: list[Path], options: Options, progress: Progress | None = None) -> RunResult:
    """Analyse, plan and convert the tree under ``paths`` (nothing is written).

    A path inside a package stands for its whole tree (``scope``): the tree is planned
    and converted, and ``RunResult.scope`` says which files the given paths cover.
    With ``options.jobs`` > 1 the candidate files are converted by that many forked
    processes; the result is the same as with one.
    """
    scope = scope_of(paths, options.src)
    try:
        with parallel.fewer_collections(), roots.using(scope.roots):
            return _run(paths, options, progress, scope)
    finally:
        python_trees.clear()


def read_tree(paths: list[Path], options: Options, scope: Scope | None = None) -> RunResult:
    """A ``RunResult`` holding the sources of every Python file of the trees under
    ``paths`` (``scope``; a FAILED result for each file that cannot be read, and for
    each symlinked directory that leaves the tree with Python files in it); nothing
    parsed yet. Module names follow the import roots in effect (``roots.using``)."""
    scope = scope or scope_of(paths, options.src)
    python_trees.clear()  # trees of an earlier run's texts
    result = RunResult(scope=scope)
    links_out: list[str] = []
    found = iter_python_files(list(scope.walk), options.excludes, options.extend_excludes,
                              links_out)
    files = sorted(scope.spelled(path) for path in found)
    for link in links_out:
        result.files.append(FileResult(Path(link), Outcome.FAILED, error=(
            f"{scope.spelled(Path(link))}: symbolic link to a directory outside the tree "
            f"({os.path.realpath(link)}): its Python files would be left unconverted; "
            "run on a directory that holds its target, or exclude the link")))
    result.scanned = len(files)
    for path in files:
        try:
            result.sources[path] = read_source(path)
        except UndecodableSource as exc:
            result.undecodable[path] = (str(exc), exc.lossy)  # judged by settle_plan
        except SourceError as exc:
            result.files.append(FileResult(path, Outcome.FAILED, error=str(exc)))
    return result


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


def _run(paths: list[Path], options: Options, progress: Progress | None,
         scope: Scope | None = None) -> RunResult:
    result = read_tree(paths, options, scope)
    index = analyse(result.sources, result, progress)
    plan, candidates, conversions = settle_plan(result, index, options, progress)
    result.plan = plan
    for path in candidates:
        done = conversions[path]
        source = result.sources[path]
        if done.parse_error is not None:  # reported by _convert_all
            continue
        if done.conversion is None:  # stopped at a leftover in what became the last round
            ff = result.facts.get(path) or _analyse_file(path, source.text)[0]
            assert ff is not None
            done = _Converted(convert_file(ff, plan), done.leftovers)
        conversion = done.conversion
        assert conversion is not None
        refusals = tuple(r for r in plan.refusals() if r.path == path)
        if conversion.new_text == source.text:
            outcome = Outcome.REFUSED if refusals else Outcome.UNCHANGED
            result.files.append(FileResult(path, outcome, refusals=refusals))
            continue
        error = done.error if done.verified else _verify(conversion.new_text, path,
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
    return result


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
        else:
            result.files.append(FileResult(runtime.path, Outcome.CHANGED, old_text=old,
                                           new_text=text))


def settle_plan(result: RunResult, index: ClassIndex, options: Options,
                progress: Progress | None = None, *, convert: bool = True,
                ) -> tuple[Plan, list[Path], dict[Path, _Converted]]:
    """Plan, then refuse every class used as a class where no rewrite reaches, and plan
    again, until nothing changes: the plan ``apply`` carries out and ``check`` reports.

    Returns the plan, the candidate files of the last round and what converting them
    gave (leftovers, and with ``convert`` the conversions; without, only the leftovers
    are computed, which is all ``check`` needs). Uses ``options.jobs`` processes.
    """
    forced: dict[str, str] = {}
    texts = {path: source.text for path, source in result.sources.items()}
    net = SafetyNet(texts)
    # The proofs do not depend on the plan: for ``apply`` a forked process makes them
    # while this one plans and looks for candidates (``check``, whose screens read the
    # same CPython trees the proofs make and convert nothing, keeps them in one process).
    beside = options.jobs if convert else 1
    proving = parallel.Background(functools.partial(_class_values, result, index, texts), beside)
    values: ClassValues | None = None
    for _ in range(_MAX_ROUNDS):
        plan = build_plan(index, options.allow_classes, forced,
                          allow_value_uses=options.allow_value_uses,
                          feature_prefix=options.feature_prefix)
        # Leftovers are uses of class names: files that only write a backing field (or
        # copy an attribute dict) cannot have any. ``check`` needs only leftovers, so it
        # leaves them out; ``apply`` converts them in the round too, since a round
        # rarely changes the plan (the value proofs are made before it): all files are
        # then converted in one parallel map, and again only if the plan changes.
        # Whether a file that only copies an attribute dict can be changed at all
        # (``may_rewrite_attr_dict``) is asked by the worker that converts it.
        candidates, dict_only = _candidate_files(plan, result, fields=convert)
        loaded_by = None
        if convert and plan.runtime_modules and any(
                _DICT_COPY.search(result.sources[p].text) for p in candidates):
            loaded_by = _loaded_by_runtime(plan, result)
        if values is None:
            _parse_while(proving, [result.sources[p].text for p in candidates])
            values = proving.result()
        plan.values = values
        # Asked only if the round finds no leftover; a forked process looks for them
        # while the candidates are converted.
        escaping = parallel.Background(functools.partial(_escaped_list, plan, result, net), beside)
        conversions = _convert_all(candidates, plan, result, options.jobs, progress,
                                   convert=convert, loaded_by=loaded_by, dict_only=dict_only)
        candidates = [p for p in candidates if not conversions[p].not_candidate]
        conversions = {p: conversions[p] for p in candidates}
        new_forced = dict(forced)
        for path in candidates:
            # The first leftover of a class in path, line and column order names it,
            # whichever way (and in which worker) the file was scanned.
            for line, col, qual, code in sorted(conversions[path].leftovers):
                chain = values.why_not(path, line, col)
                new_forced.setdefault(qual, (
                    f"used as a value at {path}:{line} (`{code}`) that reaches a use no "
                    f"rewrite covers: {chain}; converting it would break that use"
                ) if chain is not None else (
                    f"used as a class at {path}:{line} (`{code}`), a use no rewrite covers; "
                    "converting it would break that line"))
        if new_forced == forced:
            for path, (line, _col, qual, code, how) in escaping.result():
                new_forced.setdefault(
                    qual, f"used at {path}:{line} (`{code}`), {how}; converting it would break that line")
        else:
            escaping.discard()
        if new_forced == forced:
            break
        forced = new_forced
    _judge_undecodable(result, plan)
    return plan, candidates, conversions


def _parse_while(waiting: parallel.Background, texts: list[str]) -> None:
    """While ``waiting`` is computed elsewhere, search LibCST's import codemods for
    matcher decorators (``matcher_cache.warm``), then make CPython's trees of ``texts``
    (the candidates, which the screens of the conversion read): the workers forked
    after inherit both instead of each doing its own."""
    if waiting.pending():
        matcher_cache.warm()
    for text in texts:
        if not waiting.pending():
            return
        try:
            python_trees.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue


def _class_values(result: RunResult, index: ClassIndex, texts: dict[Path, str]) -> ClassValues:
    """Which mentions of the tree's Parameter classes are value uses proven harmless
    (``class_values``), for every planning round (the proof does not depend on the plan)."""
    failed = {f.path for f in result.failed()}
    readable = {path: text for path, text in texts.items() if path not in failed}
    modules = {path: module_name_for(path) for path in readable}
    names = hierarchy_names(index, result.facts.values())
    seeds = [path for path, text in sorted(readable.items()) if result.mentions.any(path, text, names)]
    return prove_class_values(readable, modules, names, seeds)


def _escaped_list(plan: Plan, result: RunResult, net: SafetyNet) -> list[tuple[Path, Escape]]:
    return list(_escaped_uses(plan, result, net))


def _escaped_uses(plan: Plan, result: RunResult, net: SafetyNet) -> Iterator[tuple[Path, Escape]]:
    """Every use of a class ``plan`` converts that no rewrite reaches (``SafetyNet``), in
    the files that mention one of its names."""
    converted = [q for q, p in plan.classes.items() if p.converted]
    if not converted:
        return
    names = hierarchy_names(plan.index, plan.index.files.values(), converted)
    failed = {f.path for f in result.failed()}
    dotted = dotted_mention(names)
    for path, source in sorted(result.sources.items()):
        if path in failed or not result.mentions.any(path, source.text, names):
            continue
        if not net.own_escape(path, names):
            # Without a star import, getattr, globals() or a case pattern of its own, a
            # use escapes only through a module it imports a name from (or names as
            # ``m.X``) that re-exports it with a star import.
            if not net.any_star() or not (dotted.search(source.text) or any(
                    (local in names or target.rpartition(".")[2] in names)
                    and plan.index.canonical(target) not in plan.classes
                    for local, target in file_import_targets(path, source.text) or ())):
                continue
        for escape in net.escaped_uses(path, plan, names):
            yield path, escape


@dataclass
class _Converted:
    """A worker's answer for one file: the conversion (None: stopped at a leftover), and
    the verification of its new text if done."""

    conversion: FileConversion | None
    leftovers: Leftovers
    verified: bool = False
    error: str | None = None
    #: The file was parsed here (not in the parent), or could not be: why.
    parsed_here: bool = False
    parse_error: str | None = None
    #: A file chosen only for copying an attribute dict, which no rewrite can change
    #: (``may_rewrite_attr_dict``): not a candidate after all.
    not_candidate: bool = False


def _convert_one(state: tuple[dict[Path, FileFacts], Plan, dict[Path, SourceFile],
                              frozenset[str], frozenset[str], bool, dict[str, frozenset[Path]],
                              frozenset[Path]],
                 path: Path) -> _Converted:
    """Convert one file (in a worker process or not) and verify a changed text.

    A file with leftovers starts another planning round: its conversion stops there,
    and once any file of the round had some (``parallel.stopping()``), the files that
    follow only look for theirs: the round's conversions will be thrown away. The
    leftovers themselves are always computed, so the next plan never depends on timing.
    The parent completes and verifies whatever reaches the result unfinished.

    The leftovers come from ``screen_leftovers`` (CPython's parser) when it decides the
    file exactly; LibCST then runs only to convert, and not at all when the round
    converts nothing (``check``) or already has leftovers.
    """
    facts, plan, sources, names, class_names, convert, loaded_by, dict_only = state
    text = sources[path].text
    if path in dict_only and not may_rewrite_attr_dict(text, dict_added_names(plan),
                                                      _param_classes_of(path, plan)):
        return _Converted(None, [], not_candidate=True)
    screened, untouched = screen_file(path, text, plan, class_names)
    if screened is not None and (screened or not convert or parallel.stopping()):
        return _Converted(None, screened)  # all that is needed, from CPython's parser
    if untouched and _only_use_sites(path, text, plan):
        # Parsed (by CPython's parser) and proven unchanged: LibCST would rebuild the
        # same text.
        return _Converted(FileConversion(text, Counter(), []), [], verified=True,
                          parsed_here=path not in facts)
    ff = facts.get(path)
    parsed_here = ff is None
    if ff is None:  # a plain use site: parsed where it is converted
        ff, error = _analyse_file(path, sources[path].text)
        if ff is None:
            return _Converted(None, [], parsed_here=True, parse_error=error)
    conversion, leftovers = _convert(ff, plan, stop_at_leftovers=True, names=names,
                                     leftovers_only=not convert,
                                     loaded_by=loaded_by, screened=screened)
    if conversion is None:
        return _Converted(None, leftovers, parsed_here=parsed_here)
    if conversion.new_text == sources[path].text:
        return _Converted(conversion, leftovers, verified=True, parsed_here=parsed_here)
    return _Converted(conversion, leftovers, True,
                      _verify(conversion.new_text, path, conversion.generated),
                      parsed_here=parsed_here)


def _param_classes_of(path: Path, plan: Plan) -> frozenset[str]:
    """Names of the plan's classes defined in the module of ``path`` (as
    ``DictCopyTransformer`` tells a Parameter class's methods from an ordinary one's)."""
    module = module_name_for(path)
    return frozenset(p.name for p in plan.classes.values() if p.facts.module == module)


def _only_use_sites(path: Path, text: str, plan: Plan) -> bool:
    """Whether only ``UseSiteTransformer``'s class-name rewrites could change ``path``:
    it defines no Parameter class, names no backing field where a rewrite may act on it
    (``field_screen``), and copies no attribute dict
    (the transformers and the field rewrites of ``_convert`` act on nothing else), and
    holds no carriage return alone (LibCST does not give such a text back as it was)."""
    if text.count("\r") != text.count("\r\n"):
        return False
    if any(p.facts.path == path for p in plan.classes.values()):
        return False
    if plan.fields and prefilter(text, frozenset(plan.fields)) and \
            not fields_untouched(text, frozenset(plan.fields)):
        return False
    return not (plan.runtime_modules and _DICT_COPY.search(text))


def _convert_all(paths: list[Path], plan: Plan, result: RunResult, jobs: int,
                 progress: Progress | None, convert: bool = True,
                 loaded_by: dict[str, frozenset[Path]] | None = None,
                 dict_only: frozenset[Path] = frozenset()) -> dict[Path, _Converted]:
    """Convert every candidate file, in parallel when ``jobs`` > 1; keyed by path.
    ``dict_only``: files chosen only for copying an attribute dict, each screened by
    ``may_rewrite_attr_dict`` first (``_Converted.not_candidate`` when no rewrite can act).

    Files the analysis did not parse are parsed by the worker that converts them
    (counted once in ``result.parsed``, however many rounds convert them)."""
    sources = result.sources

    def report(done: int) -> None:
        if progress is not None:
            progress("convert", done, len(paths))

    converted = parallel.pmap(
        _convert_one, (result.facts, plan, sources, _rewritable_names(plan), _class_names(plan),
                       convert, loaded_by or {}, dict_only), paths, jobs,
        weight=lambda path: len(sources[path].text), progress=report,
        stop_when=lambda done: bool(done.leftovers),
    )
    failed = {f.path for f in result.failed()}
    for path, done in zip(paths, converted):
        if done.parse_error is not None and path not in failed:
            result.files.append(FileResult(path, Outcome.FAILED, error=done.parse_error))
        elif done.parsed_here and path not in result.parsed_elsewhere:
            result.parsed_elsewhere.add(path)
            result.parsed += 1
    return dict(zip(paths, converted))


def _loaded_by_runtime(plan: Plan, result: RunResult) -> dict[str, frozenset[Path]]:
    """Per runtime module, the files importing it runs (``import_graph``): a rewrite
    must not import that runtime at the top of one of them."""
    texts = {path: source.text for path, source in result.sources.items()}
    return {
        ff.module_name: frozenset(loaded_while_importing(ff.path, ff.module_name, texts))
        for ff in plan.index.files.values() if ff.module_name in plan.runtime_modules
    }


def _candidates(plan: Plan, result: RunResult, progress: Progress | None = None,
                fields: bool = True) -> list[Path]:
    """Files a rewrite can touch (``_candidate_files``, each attribute-dict copy screened)."""
    chosen, dict_only = _candidate_files(plan, result, fields)
    keys = dict_added_names(plan)
    return [path for path in chosen
            if path not in dict_only or may_rewrite_attr_dict(result.sources[path].text, keys)]


def _candidate_files(plan: Plan, result: RunResult,
                     fields: bool = True) -> tuple[list[Path], frozenset[Path]]:
    """Files a rewrite can touch: they define Parameter classes, or name a converted
    class (or an alias of one) or, with ``fields``, a backing field, in a way that is
    not ``inert``, or (also with ``fields``: never a leftover) copy an attribute dict.
    Those the analysis did not parse are parsed where they are converted. Returns them
    in path order, and those chosen only for an attribute-dict copy that
    ``may_rewrite_attr_dict`` has yet to screen (the caller does)."""
    names = hierarchy_names(plan.index, result.facts.values(), _rewritten_classes(plan))
    backing = frozenset(plan.fields) if fields else frozenset()
    either = names | backing
    defining = {p.facts.path for p in plan.classes.values()}
    failed = {f.path for f in result.failed()}
    chosen: list[Path] = []
    dict_only: set[Path] = set()
    for path, source in sorted(result.sources.items()):
        if path in failed:
            continue
        if path in defining or (result.mentions.any(path, source.text, either)
                                and not inert(source.text, names, backing)):
            chosen.append(path)
        elif fields and plan.runtime_modules and \
                ("__dict__" in source.text or "vars" in source.text) and \
                _DICT_COPY.search(source.text) is not None:
            chosen.append(path)
            dict_only.add(path)
    return chosen, frozenset(dict_only)


def _verify(text: str, path: Path, generated: list[str] | None = None) -> str | None:
    """The new text must parse (LibCST) and compile (CPython) before anything is written.

    ``generated``: the code of the statements generated for ``text``; its other
    statements are the file's own text, cut at statement boundaries, which LibCST parsed
    when the file was read, so only these are parsed again (one module of them: each is
    a top-level statement). CPython compiles the whole text; where it cannot (syntax of
    a newer Python), LibCST parses the whole text instead.
    """
    try:
        cst.parse_module(text if generated is None else "".join(generated))
        try:
            compile(text, str(path), "exec", dont_inherit=True)
        except SyntaxError:
            if needs_newer_python(text) is None or generated is None:
                raise
            cst.parse_module(text)  # LibCST's parse is the check
    except SyntaxError as exc:
        if needs_newer_python(text) is None:  # else LibCST's parse is the check
            return f"{path}: internal error: the converted text does not compile ({exc}); file left unchanged"
    except (cst.ParserSyntaxError, ValueError) as exc:
        return f"{path}: internal error: the converted text does not compile ({exc}); file left unchanged"
    return None
