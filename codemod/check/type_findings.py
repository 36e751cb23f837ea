"""CM006: a comparison of two objects' types in a tree ``apply`` converted.

A converted parameter is a plain ``torch.nn.Parameter``: ``type(a) is type(b)`` holds for
two parameters of different former classes, and ``type(p) is nn.Parameter`` holds for
every converted parameter where it held for no former class. ``apply`` rewrites every
such comparison it finds to ``param_type(a) is param_type(b)`` / ``param_type(p) is
nn.Parameter`` (``transforms/type_compares.py``); this finds those written afterwards, with
the same rule (``analysis/type_comparisons.py``; ``Parameter`` resolved, as ``apply``
resolves it, through the module's imports to torch's). Also a name holding an object's
type that is compared so (``t = type(p)``, then ``t is nn.Parameter``; ``apply`` binds it
to ``param_type(p)``: ``analysis/held_types.py``, ``Parameter`` read by its spelling).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.bound_names import bound_at_module_level, bound_in_some_function
from codemod.analysis.held_types import HeldType, held_types, parameter_aliases
from codemod.analysis.names import module_name_for
from codemod.analysis.source_lines import char_column
from codemod.analysis.type_comparisons import (
    HELPER,
    compared_operands,
    compares_with_parameter,
    may_compare_types,
    type_comparisons,
)
from codemod.check.locate import source_lines
from codemod.check.rules import Finding
from codemod.check.uses_from_ast import AstFacts, Undecided, resolve
from codemod.pipeline.results import RunResult
from codemod.types import PARAMETER_QUALNAMES


def type_compare_findings(run: RunResult, paths: Iterable[Path], runtime_modules: list[str],
                          tree_of: Callable[[Path], ast.Module | None]) -> list[Finding]:
    """CM006 for each comparison of two objects' types in ``paths`` (``tree_of`` gives a
    file's CPython tree, None where it does not compile). A file that binds ``type``
    anywhere is passed over: which comparisons call the builtin is not decided here."""
    helper_from = " or ".join(f"`{module}`" for module in runtime_modules)
    out: list[Finding] = []
    for path in paths:
        text = run.sources[path].text
        if not may_compare_types(text) or bound_at_module_level(text, ["type"]) \
                or bound_in_some_function(text, ["type"]):
            continue
        tree = tree_of(path)
        if tree is None:
            continue
        lines = source_lines(text)
        for node in type_comparisons(tree):
            column = char_column(lines[node.lineno - 1], node.col_offset)
            out.append(Finding(
                "CM006",
                "compares two objects' types: a converted parameter's type is "
                "torch.nn.Parameter, so parameters of different former classes compare "
                f"equal; compare `{HELPER}(a) is {HELPER}(b)` ({HELPER} from {helper_from})",
                path, node.lineno, column, False))
        for held in held_type_comparisons(tree):
            binding = held.binding
            column = char_column(lines[binding.lineno - 1], binding.col_offset)
            out.append(Finding(
                "CM006",
                f"`{held.name}` holds an object's type and is compared with another type or "
                "torch.nn.Parameter: a converted parameter's type is torch.nn.Parameter, so "
                "parameters of different former classes compare equal; bind "
                f"`{held.name} = {HELPER}(...)` ({HELPER} from {helper_from})",
                path, binding.lineno, column, False))
        if "Parameter" not in text:
            continue
        facts = AstFacts.of(path, module_name_for(path), tree)
        aliases = parameter_aliases(tree)
        for found in python_trees.nodes(tree):
            if compares_with_parameter(found, aliases) and any(
                    _names_torch_parameter(operand, facts) or (isinstance(operand, ast.Name) and operand.id in aliases)
                    for operand in compared_operands(found)):
                column = char_column(lines[found.lineno - 1], found.col_offset)
                out.append(Finding(
                    "CM006",
                    "compares an object's type with torch.nn.Parameter: a converted "
                    "parameter's type is torch.nn.Parameter, so this holds for it where it "
                    f"held for no former class; compare `{HELPER}(p)` ({HELPER} from "
                    f"{helper_from})", path, found.lineno, column, False))
    return out


def held_type_comparisons(tree: ast.Module) -> list[HeldType]:
    """The names of ``tree`` that hold an object's type (``t = type(p)``) and are compared
    with another object's type or ``Parameter`` (``analysis/held_types.py``), in order:
    what ``apply`` binds to ``param_type(p)``, and those it cannot that are compared with
    ``Parameter`` (``apply`` warns about them). One it cannot bind that is compared only
    with other types is not reported (code that never sees a parameter compares types so:
    vLLM's ``encoder_cls``), as ``apply`` leaves it without a word."""
    found = [held for names in held_types(tree).values() for held in names.values()
             if (held.convertible and held.compares_types) or held.compares_parameter]
    return sorted(found, key=lambda held: (held.binding.lineno, held.binding.col_offset))


def _names_torch_parameter(operand: ast.expr, facts: AstFacts) -> bool:
    """Whether ``operand`` (``nn.Parameter``, ``torch.nn.Parameter``, ``Parameter``)
    resolves to torch's ``Parameter`` through the file's imports, as ``apply`` resolves
    it (``FileFacts.resolve``); a name bound to more than one place does not."""
    try:
        return resolve(operand, facts.bindings, facts.module_name, facts.globals) in PARAMETER_QUALNAMES
    except Undecided:
        return False
