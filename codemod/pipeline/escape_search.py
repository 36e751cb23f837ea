"""The escape searches of a planning round: every use of a class the plan converts that
no rewrite reaches, found by the safety net and the rules beside it, file by file.

``escaped_list`` reads the files that mention a converted class's name (the safety net,
names bound otherwise, misnamed and unbound imports, spellings CPython normalises);
``looked_up_list`` reads every file for a module's members read by a computed name or
all at once (``planning/computed_lookups.py``). Each runs in a forked process while the
round scans or converts its candidates; ``by_file`` merges what they found in path
order, so the first escape of a class is the same whichever search found it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from codemod import parallel
from codemod.analysis.names import module_name_for
from codemod.pipeline.indexing import file_import_targets, hierarchy_names
from codemod.pipeline.results import RunResult
from codemod.planning.computed_lookups import ModuleLookups
from codemod.planning.lookup_gate import Heads
from codemod.planning.misnamed_imports import TreeModules, misnamed_imports
from codemod.planning.plan import Plan
from codemod.planning.rebound_names import rebound_class_names
from codemod.planning.safety_net import Escape, SafetyNet, dotted_mention
from codemod.planning.unbound_imports import unbound_imports


def escaped_list(plan: Plan, result: RunResult, net: SafetyNet) -> list[tuple[Path, Escape]]:
    """``_escaped_uses``, as a list (a forked process sends it back)."""
    return list(_escaped_uses(plan, result, net))


def looked_up_list(plan: Plan, result: RunResult, net: SafetyNet, heads: dict[Path, Heads] | None = None,
                   star_importers: frozenset[Path] | None = None) -> list[tuple[Path, Escape]]:
    """The reads of a module's members by a computed name or all at once that refuse a
    converted class (``planning/computed_lookups.py``; a search of every text, made
    beside the other escapes'; ``heads``: what it reads of each text, and
    ``star_importers``: the files that import ``*`` from a module of the tree, if known)."""
    converted = [q for q, p in plan.classes.items() if p.converted]
    if not converted:
        return []
    names = hierarchy_names(plan.index, plan.index.files.values(), converted)
    failed = {f.path for f in result.failed()}
    texts = {path: source.text for path, source in sorted(result.sources.items()) if path not in failed}
    lookups = ModuleLookups(plan, net, texts, lambda path, text: result.mentions.any(path, text, names),
                            heads, star_importers)
    return [(path, escape) for path in texts for escape in lookups.escapes(path)]


def by_file(searches: list[parallel.Background]) -> list[tuple[Path, Escape]]:
    """The escapes ``searches`` found, file by file in path order (each search's own
    order within a file, the searches in turn)."""
    found = [(path, turn, index, escape) for turn, search in enumerate(searches)
             for index, (path, escape) in enumerate(search.result())]
    return [(path, escape) for path, _turn, _index, escape in sorted(found, key=lambda f: f[:3])]


def _escaped_uses(plan: Plan, result: RunResult, net: SafetyNet) -> Iterator[tuple[Path, Escape]]:
    """Every use of a class ``plan`` converts that no rewrite reaches (``SafetyNet``), in
    the files that mention one of its names."""
    converted = [q for q, p in plan.classes.items() if p.converted]
    if not converted:
        return
    names = hierarchy_names(plan.index, plan.index.files.values(), converted)
    failed = {f.path for f in result.failed()}
    dotted = dotted_mention(names)
    classes_named: dict[str, list[str]] = {}
    for qualname in converted:
        classes_named.setdefault(plan.classes[qualname].name, []).append(qualname)
    modules: TreeModules | None = None

    def converted_class(qualname: str) -> str | None:
        found = plan.index.canonical(qualname)
        return found if plan.is_converted(found) else None

    for path, source in sorted(result.sources.items()):
        if path in failed:
            continue
        for escape in net.respelled_uses(path, plan, names):
            yield path, escape
        if not result.mentions.any(path, source.text, names):
            continue
        tree = net.tree(path)
        for escape in rebound_class_names(tree, path, source.text, names, converted_class) \
                if tree is not None else ():
            yield path, escape
        if tree is not None:
            modules = modules or TreeModules((module_name_for(p) for p in result.sources),
                                             result.module_aliases)
            for escape in misnamed_imports(tree, path, source.text, classes_named, modules):
                yield path, escape
            for escape in unbound_imports(tree, path, source.text, classes_named, net):
                yield path, escape
        targets = file_import_targets(path, source.text) or []
        if not net.own_escape(path, names):
            # Without a star import, getattr, globals() or a case pattern of its own, a
            # use escapes only through a module it imports a name from (or names as
            # ``m.X``) that re-exports it with a star import.
            if not net.any_star() or not (dotted.search(source.text) or any(
                    (local in names or target.rpartition(".")[2] in names)
                    and plan.index.canonical(target) not in plan.classes
                    for local, target in targets)):
                continue
        # A class imported under another name (``from pkg import Col as C``, ``pkg``
        # star-importing it) is used under that name.
        aliases = frozenset(local for local, target in targets
                            if local not in names and target.rpartition(".")[2] in names)
        for escape in net.escaped_uses(path, plan, names | aliases):
            yield path, escape
