"""``verify_trees(original, converted)``: the whole verification, as a ``VerifyResult``."""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any

from codemod.verify.arguments import Build, build_from_site, synthesized_build
from codemod.verify.cases import ClassCases
from codemod.verify.check_sites import drive, find_check_sites
from codemod.verify.direct_imports import direct_imports
from codemod.verify.families import Families, VerifyUsageError, find_families
from codemod.verify.functions import ParamFunction, find_param_functions
from codemod.verify.importer import TreeImport, forget_compiled_module_names
from codemod.verify.model import ClassResult, ImportProblem, VerifyResult
from codemod.verify.rewritten_functions import RewrittenFunction, find_rewritten_functions
from codemod.verify.sides import Family, Side, SideFunctions
from codemod.verify.sites import TreeSites, harvest
from codemod.verify.stubs import TensorParallel

#: Most constructions per class (distinct harvested argument sets, in order of the tree).
MAX_BUILDS = 4
TP_SIZES = (1, 2, 4)


def _positional_names(cls: Any) -> list[str]:
    """The names a call's positional arguments bind to (``__new__`` first, as Python)."""
    for method in ("__new__", "__init__"):
        for klass in cls.__mro__:
            function = klass.__dict__.get(method)
            if function is None or klass.__module__.startswith("torch"):
                continue
            try:
                parameters = list(inspect.signature(function).parameters.values())[1:]
            except (TypeError, ValueError):
                continue
            return [p.name for p in parameters
                    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return ["data"]


def builds_for(cls: Any, name: str, sites: TreeSites) -> list[Build]:
    """Distinct builds from the tree's construction sites of ``name``, else synthesized."""
    names = _positional_names(cls)
    unique: dict[tuple[Any, ...], Build] = {}
    for site in sites.constructions.get(name, []):
        build = build_from_site(site, names)
        unique.setdefault((build.args, tuple(sorted(build.kwargs, key=lambda kv: kv[0]))), build)
    builds = list(unique.values())[:MAX_BUILDS]
    return builds or [synthesized_build(cls)]


def _side(tree: TreeImport, families: Families) -> Side:
    """The classes (or factories) and runtime modules of one imported copy."""
    classes, runtimes = {}, {}
    for member in families.classes:
        module = tree.module(member.module)
        if module is not None and hasattr(module, member.name):
            classes[member.key] = getattr(module, member.name)
        if member.runtime_module is not None:
            runtime = tree.module(member.runtime_module)
            if runtime is not None:
                runtimes[member.key] = runtime
    return Side(tree, classes, runtimes)


def _import_both(families: Families, position: TensorParallel, extra: list[str]) \
        -> tuple[TreeImport, TreeImport]:
    """Both trees' family and runtime modules; ``extra`` modules are executed for real
    where they can be (a stub otherwise, as a direct import is)."""
    modules = families.modules
    real = set(modules) | set(families.runtime_modules)
    trees = []
    for package_dir in (families.original_package_dir, families.converted_package_dir):
        optional = {name: names for name, names
                    in direct_imports(families.package, package_dir, modules).items()
                    if name not in real}
        for name in extra:
            optional.setdefault(name, set())
        tree = TreeImport(families.package, package_dir, real, optional, position)
        tree.import_modules([*modules, *[m for m in families.runtime_modules
                                         if package_dir == families.converted_package_dir]])
        trees.append(tree)
    return trees[0], trees[1]


def _side_rewritten(result: VerifyResult, rewritten: list[RewrittenFunction],
                    before: TreeImport, after: TreeImport) -> list[SideFunctions]:
    """The rewritten functions whose module really imported in both trees."""
    found = []
    for function in rewritten:
        modules = (before.import_modules([function.module]).get(function.module),
                   after.import_modules([function.module]).get(function.module))
        failed = [tree.fallbacks.get(function.module) or tree.failures.pop(function.module, "")
                  for tree in (before, after) if function.module in tree.fallbacks
                  or function.module in tree.failures]
        original, converted = (getattr(module, function.name, None) for module in modules)
        if failed or not callable(original) or not callable(converted):
            result.rewritten_functions_skipped.append(
                f"{function.where} {function.name}: its module does not import"
                + (f" ({failed[0]})" if failed and failed[0] else ""))
            continue
        result.rewritten_functions.append(f"{function.module}.{function.name}")
        found.append(SideFunctions(ParamFunction(function.module, function.name, "Parameter"),
                                   original, converted, object))
    return found


def verify_trees(original: Path, converted: Path, tp_sizes: tuple[int, ...] = TP_SIZES,
                 only: set[str] | None = None, compile_loaders: bool = False) -> VerifyResult:
    """Compare every converted class of ``converted`` with its original in ``original``
    (only the classes named in ``only``, when given); with ``compile_loaders``, also each
    class's loader compiled with ``torch.compile(fullgraph=True)`` (``compiled``)."""
    started = time.perf_counter()
    result = VerifyResult(str(original), str(converted), tp_sizes=tp_sizes)
    try:
        families = find_families(original, converted)
    except VerifyUsageError as exc:
        result.error = str(exc)
        return result
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: more threads only add overhead
    forget_compiled_module_names()
    position = TensorParallel()
    try:
        rewritten = find_rewritten_functions(families)
        before, after = _import_both(families, position, [f.module for f in rewritten])
        _record_imports(result, before, after)
        sites = harvest(families.original_package_dir, {m.name for m in families.classes})
        family = Family(_side(before, families), _side(after, families), families.classes,
                        position, tp_sizes, sites.method_keywords,
                        _side_functions(families, before, after, torch.nn.Parameter),
                        _driven_sites(result, families, before, after), compile_loaders,
                        _side_rewritten(result, rewritten, before, after))
        result.compiled = compile_loaders
        result.functions = [f"{f.function.module}.{f.function.name}" for f in family.functions]
        for member in families.classes:
            if only is not None and member.name not in only:
                continue
            status = "kept" if member.feature is None else "converted"
            new_cls = family.after.classes.get(member.key)
            if member.feature is not None and isinstance(new_cls, type):
                status = "shadow"
            class_result = ClassResult(member.name, member.module, status)
            result.classes.append(class_result)
            old_cls = family.before.classes.get(member.key)
            if old_cls is None or new_cls is None:
                continue
            builds = builds_for(old_cls, member.name, sites)
            class_result.build_origin = builds[0].origin if builds[0].origin == "synthesized" \
                else "site"
            ClassCases(family, member, class_result).run(builds)
    finally:
        torch.set_num_threads(threads)
    result.seconds = round(time.perf_counter() - started, 2)
    return result


def _side_functions(families: Families, before: TreeImport, after: TreeImport,
                    parameter: type) -> list[SideFunctions]:
    """The family modules' functions taking a parameter, as each tree defines them (the
    converted one None when it lost the function: every call then differs)."""
    found = []
    for function in find_param_functions(families):
        old_module, new_module = before.module(function.module), after.module(function.module)
        original = getattr(old_module, function.name, None)
        if not callable(original):
            continue
        admits = getattr(old_module, function.admits, parameter)
        found.append(SideFunctions(function, original, getattr(new_module, function.name, None),
                                   admits if isinstance(admits, type) else parameter))
    return found


def _driven_sites(result: VerifyResult, families: Families, before: TreeImport,
                  after: TreeImport) -> list[Any]:
    """The tree's rewritten class checks that can be asked of a parameter; the result
    lists them and those left out."""
    sites = find_check_sites(families)
    driven = drive(sites, before, after)
    result.check_sites = [d.site.where for d in driven]
    result.check_sites_skipped = sites.skipped
    return driven


def _record_imports(result: VerifyResult, before: TreeImport, after: TreeImport) -> None:
    """Family modules that failed, and which modules were real or stubbed."""
    for module in sorted(set(before.failures) | set(after.failures)):
        if module in before.failures and module in after.failures:
            result.import_problems.append(ImportProblem(module, "both", after.failures[module]))
        elif module in after.failures:
            result.import_problems.append(ImportProblem(module, "converted", after.failures[module]))
        else:
            result.import_problems.append(ImportProblem(module, "original", before.failures[module]))
    result.real_modules = sorted(set(after.modules) - after.stubbed - set(after.fallbacks))
    result.stubbed_modules = sorted(after.stubbed | set(after.fallbacks))
