"""The statements that tell the runtime what a converted or kept class gave its parameters.

Per kind, once, at module level: ``register_param_fields`` (which attributes replaced
which backing fields) and ``register_param_kind`` (the kinds of its bases in order and the
methods it defined). ``init_param_kind`` reads them for each new parameter, so the
parameters get what the class's instances had.
"""

from __future__ import annotations

import libcst as cst

from codemod.planning.plan import ClassPlan, Plan
from codemod.runtime.helpers import REGISTER_PARAM_FIELDS, REGISTER_PARAM_KIND
from codemod.transforms.code_layout import layout_call, two_blank_lines
from codemod.transforms.refs import FileRefs


def fields_registration(plan: Plan, class_plan: ClassPlan,
                        refs: FileRefs) -> list[cst.BaseStatement]:
    """``register_param_fields(Features.X, {...})``: the runtime's record of which
    attributes replaced which fields for kind ``X`` (read by ``param_attr_dict``,
    ``param_field`` and ``set_param_field``), once per kind."""
    fields = plan.property_fields(class_plan.facts.qualname)
    if not fields:
        return []
    register = refs.helper(REGISTER_PARAM_FIELDS, class_plan.facts.qualname).value
    feature = cst.Module(body=[]).code_for_node(refs.feature(class_plan.facts.qualname))
    pairs = [f'"{fld}": "{name}"' for fld, (name, _) in fields.items()]
    nullable = [f'"{name}"' for name, none_deletes in fields.values() if none_deletes]
    tail = f", none_deletes=({', '.join(nullable)},)" if nullable else ""
    args = f"{feature}, {{{', '.join(pairs)}}}{tail}"
    line = f"{register}({args})"
    if len(line) > 88 and len(args) <= 84:
        line = f"{register}(\n    {args}\n)"
    elif len(line) > 88:
        inner = "".join(f"        {pair},\n" for pair in pairs)
        tail = f"    none_deletes=({', '.join(nullable)},),\n" if nullable else ""
        line = f"{register}(\n    {feature},\n    {{\n{inner}    }},\n{tail})"
    return [two_blank_lines(cst.parse_statement(line))]


def kind_registration(plan: Plan, class_plan: ClassPlan, refs: FileRefs,
                      next_to_fields: bool) -> list[cst.BaseStatement]:
    """``register_param_kind(Features.X, bases=(...), methods={...})``: what the class
    gave its instances, recorded once per kind (``init_param_kind`` gives it to each new
    parameter): the kinds of its bases, in order, and the methods it defined. Placed
    after its method functions, which it names; right under the kind's
    ``register_param_fields`` when no function stands between them."""
    register = refs.helper(REGISTER_PARAM_KIND, class_plan.facts.qualname).value
    feature = cst.Module(body=[]).code_for_node(refs.feature(class_plan.facts.qualname))
    args: list[tuple[str, str, list[str], str]] = [(feature, "", [], "")]
    bases = [cst.Module(body=[]).code_for_node(refs.feature(q))
             for q in plan.index.param_bases(class_plan.facts.qualname)]
    if bases:
        args.append(("bases=", "(", bases, ")"))
    if class_plan.method_funcs:
        pairs = [f'"{method}": {func}' for method, func in class_plan.method_funcs.items()]
        args.append(("methods=", "{", pairs, "}"))
    statement = cst.parse_statement(layout_call(register, args))
    return [statement if next_to_fields else two_blank_lines(statement)]
