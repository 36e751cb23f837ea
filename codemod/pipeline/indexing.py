"""Stage 2, index: parse only the files the class index needs (those that may start a
hierarchy, subclass, alias or re-export a Parameter class), found by text prefilters and
import statements, and index their classes (``ClassIndex``); also the names under which
files refer to a hierarchy (``hierarchy_names``) and a file's import targets read with
CPython's parser (``file_import_targets``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from codemod import parallel
from codemod.analysis import python_trees, roots
from codemod.analysis.classes import FileFacts
from codemod.analysis.index import ClassIndex
from codemod.analysis.names import dotted, import_targets, module_name_for
from codemod.analysis.text_search import unjoined
from codemod.analysis.unsure_bases import ROOT_NAMES, star_sources
from codemod.fileio import SourceFile
from codemod.pipeline.nested_parameters import nested_parameter_classes_of
from codemod.pipeline.reading import parse_file
from codemod.pipeline.results import Progress, RunResult
from codemod.prefilters import defines_or_aliases, dotted_chains, import_spans, inert, may_define_root
from codemod.types import PARAMETER_QUALNAMES, FileResult, Outcome


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


def _parse_all(paths: list[Path], result: RunResult, progress: Progress | None) -> None:
    for done, path in enumerate(paths, 1):
        parse_file(path, result.sources[path].text, result)
        if progress is not None:
            progress("parse", result.parsed, result.parsed + len(paths) - done)


def analyse(sources: dict[Path, SourceFile], result: RunResult,
            progress: Progress | None = None) -> ClassIndex:
    """Parse only the files that can matter, and index their classes (see ``_index``);
    the Parameter classes below a module's top level, which the index does not hold, go
    to ``result.nested_classes``."""
    with parallel.fewer_collections():
        index = _index(sources, result, progress)
    result.nested_classes = nested_parameter_classes_of(result, index)
    result.files.extend(same_module_names(result, index))
    return index


def same_module_names(result: RunResult, index: ClassIndex) -> list[FileResult]:
    """A FAILED result for each file of the run that Python knows by the same dotted name
    as another (two loose ``tool.py`` given together, two projects' ``app`` packages run
    from their parent), when a Parameter class is defined in that module or below it.

    The index, the plan and the rewrites name classes and modules by their dotted names:
    such files would share their classes' names, and a rewrite would import a runtime
    module that only one of them gets. The run stops instead (nothing written), naming
    both; each can be run on its own. A shared name without Parameter classes
    (``conftest.py`` in two test directories) and a namespace package spread over several
    roots (``src = ["libs/core", "libs/plugins"]``, each holding ``company/...``: other
    names below it) change nothing. Only the outermost shared name is reported.
    """
    named: dict[str, list[Path]] = {}
    for path in sorted(result.sources):
        named.setdefault(module_name_for(path), []).append(path)
    defining = {qualname.rpartition(".")[0] for qualname in index.param_classes}
    failed: list[FileResult] = []
    reported: list[str] = []
    for module, paths in sorted(named.items()):
        if len(paths) < 2 or any(module.startswith(f"{r}.") for r in reported):
            continue
        if not any(d == module or d.startswith(f"{module}.") for d in defining):
            continue
        reported.append(module)
        first, *others = paths
        failed.extend(FileResult(other, Outcome.FAILED, error=(
            f"{other} and {first} are both `{module}` to Python, which defines a Parameter "
            "class: codemod names classes and modules by their dotted names; run it on each "
            "of them separately")) for other in others)
    return failed


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
    followed: set[Path] = set()  # modules parsed to follow a base to torch's Parameter
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
        hubs_of_roots = _root_hubs(index, hubs) - followed - set(result.facts)
        followed |= hubs_of_roots
        batch = sorted(wanted | hubs_of_roots)
    return index


def _root_hubs(index: ClassIndex, hubs: _ModuleFiles) -> set[Path]:
    """The files of the tree's modules through which a class's base may name torch's
    Parameter (``from .linear import Parameter``, or ``from .linear import *``, then
    ``class Scale(Parameter)``): parsed, so that the index follows the re-export as it
    follows one of a Parameter class."""
    out: set[Path] = set()
    for qualname, facts in index.classes.items():
        if qualname in index.param_classes:
            continue
        for base, expr in zip(index.base_qualnames(qualname), facts.base_exprs):
            if base is None:
                # ``from .compat import *``, then ``class Scale(Parameter)``: the modules
                # star-imported may bind it.
                spelled = dotted(expr) or ""
                ff = facts.file
                if spelled.rpartition(".")[2] in ROOT_NAMES and ff is not None and ff.text:
                    out.update(path for source in star_sources(
                        ff.text, ff.module_name, ff.path.name == "__init__.py")
                        if (path := hubs.locate(source)) is not None)
                continue
            if base in PARAMETER_QUALNAMES:
                continue
            module, _, name = base.rpartition(".")
            path = hubs.locate(module) if module and name in ROOT_NAMES else None
            if path is not None:
                out.add(path)
    return out


def file_import_targets(path: Path, text: str) -> list[tuple[str, str]] | None:
    """(local name, qualified name) of every import in ``text``; None if it does not parse.

    Read from the import statements alone when ``prefilters.import_spans`` finds them all
    (as many spans as ``import`` keywords), else from the whole file: CPython's parser,
    an order of magnitude faster than LibCST's. Relative imports resolve against the
    module name, as ``analysis.names.import_bindings`` does.
    """
    spans = import_spans(text)
    try:
        if len(spans) == sum(1 for _ in unjoined(text, _IMPORT_KEYWORD, ".")):
            trees = [ast.parse(span.strip()) for span in spans]
        else:
            trees = [python_trees.parse(text)]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    module_name = module_name_for(path)
    is_package = path.name == "__init__.py"
    return [pair for tree in trees for pair in import_targets(tree, module_name, is_package)]


#: The keyword ``import`` (``unjoined``: starting no longer name nor attribute).
_IMPORT_KEYWORD = re.compile(r"import(?!\w)")


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
