"""Stages 5 and 6 for one file, transform and verify: rewrite an analysed file under a plan
(use sites, then definitions, attribute-dict copies, imports) into a ``FileConversion``
with the uses no rewrite covers (``leftovers``), and check that a new text parses and
compiles (``verify_text``); the names a rewrite can start from; which files only use sites
can change."""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import libcst as cst
from libcst.codemod import CodemodContext

from codemod.analysis.classes import FileFacts
from codemod.analysis.compiles import needs_newer_python
from codemod.analysis.type_comparisons import HELPER as TYPE_HELPER
from codemod.analysis.type_comparisons import (
    compares_types,
    may_compare_types,
    module_level_comparisons,
)
from codemod.pipeline.converted import FileConversion, Leftovers
from codemod.pipeline.rewrite_reach import DICT_COPY, may_hold_shapes, param_classes_of, rewritable_names
from codemod.planning.plan import Plan
from codemod.prefilters import prefilter
from codemod.runtime.helpers import PARAM_ATTR_DICT, REBIND_PARAM_METHODS
from codemod.transforms import matcher_cache
from codemod.transforms.def_layout import lay_out_long_defs, lay_out_long_statements, with_relaid
from codemod.transforms.definitions import DefinitionsTransformer, edited_output_error
from codemod.transforms.dict_copies import DictCopyTransformer
from codemod.transforms.dict_copies import added_names as dict_added_names
from codemod.transforms.dict_copies import may_rewrite as may_rewrite_attr_dict
from codemod.transforms.field_screen import fields_untouched
from codemod.transforms.import_edits import add_imports, remove_imports, request_import_removals
from codemod.transforms.import_format import format_imports, group_added_imports
from codemod.transforms.refs import FileRefs
from codemod.transforms.statement_visits import Made, visit_mentioning
from codemod.transforms.type_compares import TypeCompareTransformer
from codemod.transforms.use_scanner import unconverted_uses
from codemod.transforms.use_sites import UseSiteTransformer

matcher_cache.install()


def convert_file(ff: FileFacts, plan: Plan) -> FileConversion:
    """Rewrite one analysed file under ``plan``: use sites first, then definitions."""
    conversion, _ = convert_with_leftovers(ff, plan, stop_at_leftovers=False)
    assert conversion is not None
    return conversion


def convert_with_leftovers(ff: FileFacts, plan: Plan, stop_at_leftovers: bool,
                           names: frozenset[str] | None = None,
                           leftovers_only: bool = False,
                           loaded_by: dict[str, frozenset[Path]] | None = None,
                           screened: Leftovers | None = None,
                           ) -> tuple[FileConversion | None, Leftovers]:
    """``convert_file`` and its leftovers; with ``stop_at_leftovers``, no conversion as
    soon as this file is known to hold a use no rewrite covers (the plan is then made
    again: the rest of the work would be thrown away). ``screened``: the leftovers
    ``screen_leftovers`` decided for this file and plan, the same list LibCST's scan
    would give (not scanned again)."""
    package = ff.module_name if ff.is_package else ff.module_name.rpartition(".")[0]
    context = CodemodContext(
        filename=str(ff.path), full_module_name=ff.module_name, full_package_name=package
    )
    refs = FileRefs(ff, plan, context)
    uses = UseSiteTransformer(ff, plan, refs)
    names = names if names is not None else rewritable_names(plan)
    made = Made()
    # A statement naming a name that holds an object's type may be rewritten too
    # (``t = type(p)`` when ``t`` is compared with a converted class).
    tree = visit_mentioning(ff.module, uses, names | uses.held_names, ff.statement_codes,
                            descend=True, made=made)
    leftovers = screened if screened is not None else unconverted_uses(ff, plan, uses.handled, names)
    if leftovers_only or (stop_at_leftovers and leftovers):
        return None, leftovers
    definitions = DefinitionsTransformer(ff, plan, refs, context)
    if definitions.mine or definitions.shadows:
        # Only the module body changes: no need to walk the whole tree again.
        tree = definitions.leave_Module(tree, tree)
    counts = Counter(uses.counts)
    left_alone: list[tuple[int | None, str]] = []
    if definitions.count:
        counts["class"] += definitions.count
    if definitions.shadow_count:
        counts["shadow"] += definitions.shadow_count
    source = ff.text or ff.module.code
    # A file that already names the helper (rebinds already, or uses the name for
    # something else) is left as it is: no second call, no shadowed name.
    if plan.runtime_modules and DICT_COPY.search(source) and \
            REBIND_PARAM_METHODS not in source and PARAM_ATTR_DICT not in source:
        runtime, local = _runtime_for(ff, plan, loaded_by)
        copies = DictCopyTransformer(refs, runtime, local=local or refs.is_runtime)
        before = tree
        tree = visit_mentioning(tree, copies, frozenset({"__dict__", "vars"}),
                                [ff.statement_code(before, stmt, made) for stmt in before.body])
        if copies.count:
            counts["dict-copy"] += copies.count
        if copies.reads:
            counts["dict-read"] += copies.reads
        if copies.skipped:
            left_alone.append((None, f"attribute-dict copies or reads outside every function left as "
                                     f"they are ({copies.skipped})"
                                     f"{_cannot_import(runtime, PARAM_ATTR_DICT, refs.is_runtime)}"))
    # A runtime module an earlier run wrote compares types on purpose (``param_type``);
    # it is written again from this version's text (``outcomes``), never rewritten.
    if plan.runtime_modules and not refs.is_runtime and may_compare_types(source):
        runtime, local = _runtime_for(ff, plan, loaded_by)
        compares = TypeCompareTransformer(refs, runtime, local=local)
        before = tree
        # Into the bodies of classes and functions, as the use sites (a class holding one
        # comparison is not rebuilt whole), unless a function may gain an import of the
        # helper, which a spliced body would not show.
        # A statement naming a name that holds an object's type, or another name of
        # ``Parameter``, is visited too: ``t == nn.Parameter`` names neither ``type`` nor
        # ``__class__``, and ``type(p) == P`` does not spell ``Parameter``.
        held = compares.held_names | compares.parameter_aliases
        tree = visit_mentioning(tree, compares, frozenset({"type", "__class__"}) | held,
                                [ff.statement_code(before, stmt, made) for stmt in before.body],
                                descend=not compares.local, made=made,
                                may_change=functools.partial(_may_compare_types, held=held))
        if compares.count:
            counts["type-compare"] += compares.count
        if compares.counts["held-type"]:
            counts["held-type"] += compares.counts["held-type"]
        left_alone += [(line, f"`{name}` holds an object's type and is compared with another type or "
                              f"Parameter, in a way the rewrite does not cover ({why}): left as it "
                              "is; a converted parameter's type is Parameter there")
                       for line, name, why in sorted(compares.held_left)]
        if compares.skipped:
            why = f"{_cannot_import(runtime, TYPE_HELPER, refs.is_runtime)}; two converted parameters' types are both Parameter there"
            lines = module_level_comparisons(source)
            left_alone += [(line, f"comparison of two objects' types left as it is{why}") for line in lines] \
                or [(None, f"{compares.skipped} comparison(s) of two objects' types left as they are{why}")]
    if counts:
        tree = add_imports(tree, context)
        heads = uses.handled_heads | definitions.base_heads
        removable = request_import_removals(ff, heads, context, plan.imported_elsewhere)
        if removable:
            tree = remove_imports(tree, removable, context, ff.code_of(tree, made),
                                  functools.partial(ff.statement_code, made=made))
        tree = group_added_imports(ff.module, format_imports(ff.module, tree, ff.statement_codes),
                                   ff.statement_codes, ff.module_name.split(".")[0],
                                   frozenset(plan.runtime_modules))
        tree = lay_out_long_defs(ff.module, tree)
    new_text, generated = ff.code_and_generated(tree, made)
    if counts:
        laid_out, statements = lay_out_long_statements(source, new_text)
        if statements:
            # The re-laid statements are generated code too: LibCST parses them, in place
            # of the code they replace.
            new_text = laid_out
            generated = None if generated is None else with_relaid(generated, statements)
    error = edited_output_error(ff.path, definitions.edited) if definitions.edited else None
    return FileConversion(new_text, counts, leftovers, generated, left_alone, error), leftovers


def _may_compare_types(code: str, held: frozenset[str]) -> bool:
    """Whether the type-comparison rewrite may change ``code``: a comparison of types
    (``may_compare_types``), or a statement naming one of the ``held`` names."""
    return may_compare_types(code) or (bool(held) and prefilter(code, held))


def _cannot_import(runtime: str, helper: str, own_runtime: bool) -> str:
    """Why a rewrite outside every function of a file could not call ``helper``
    (``own_runtime``: the file is a runtime module)."""
    if own_runtime:
        return f" (a runtime module's own module level may run before {helper} is defined)"
    return (f" (importing {runtime} loads this file, so the file cannot import {helper} "
            "at its top; inside a function it does)")


def _runtime_for(ff: FileFacts, plan: Plan,
                 loaded_by: dict[str, frozenset[Path]] | None) -> tuple[str, bool]:
    """The runtime module a helper of a rewrite not tied to a class (an attribute-dict
    copy or read, a comparison of types) comes from in ``ff``, and whether it must be
    imported inside the function that calls it: one that does not load this file while
    it is imported (a top-level import of it would be a cycle); of those, one whose
    package holds the file, else the one sharing the most leading package names with it
    (another subsystem's package may need what this file's does not), then the runtime
    of the most classes (the main hierarchy's defining module); failing that, the first,
    then imported locally."""
    served = Counter(p.runtime_module for p in plan.classes.values() if p.converted or p.shadow)
    here = ff.module_name.split(".")

    def distance(runtime: str) -> int:
        package = runtime.split(".")[:-1]
        if here[:len(package)] == package:
            return 0
        shared = 0
        while shared < min(len(here), len(package)) and here[shared] == package[shared]:
            shared += 1
        return len(here) - shared

    runtimes = sorted(plan.runtime_modules, key=lambda r: (distance(r), -served[r], r))
    free = [r for r in runtimes if ff.path not in (loaded_by or {}).get(r, ())]
    return (free[0], False) if free else (runtimes[0], True)


def may_rewrite_shapes(text: str, plan: Plan, param_classes: frozenset[str] | None = None) -> bool:
    """Whether a file chosen only for a rewrite not tied to a class name can be changed by
    one: an attribute-dict copy or read ``DictCopyTransformer`` acts on
    (``may_rewrite_attr_dict``, given the names of the Parameter classes the file
    defines when known), or a comparison of two objects' types (``compares_types``)."""
    if DICT_COPY.search(text) and may_rewrite_attr_dict(text, dict_added_names(plan), param_classes):
        return True
    return may_compare_types(text) and compares_types(text)


def only_use_sites(path: Path, text: str, plan: Plan) -> bool:
    """Whether only ``UseSiteTransformer``'s class-name rewrites could change ``path``:
    it defines no Parameter class, names no backing field where a rewrite may act on it
    (``field_screen``), copies no attribute dict and compares no two objects' types
    (the transformers and the field rewrites of ``convert_with_leftovers`` act on nothing else), and
    holds no carriage return alone (LibCST does not give such a text back as it was).
    The shapes are asked of the text first, then of CPython's tree (``may_rewrite_shapes``,
    the screen of the files chosen only for them): a ``type(x) is Cls`` in a file that
    also calls the plan's classes no longer sends the whole file through LibCST."""
    if text.count("\r") != text.count("\r\n"):
        return False
    if any(p.facts.path == path for p in plan.classes.values()):
        return False
    if plan.fields and prefilter(text, frozenset(plan.fields)) and \
            not fields_untouched(text, frozenset(plan.fields)):
        return False
    return not (plan.runtime_modules and may_hold_shapes(text)
                and may_rewrite_shapes(text, plan, param_classes_of(path, plan)))


def verify_text(text: str, path: Path, generated: list[str] | None = None) -> str | None:
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
