"""The calls that run the wraps: which arguments each wrap is given, and what a relay's
``super().__init__(...)`` with other arguments becomes (the wraps after it, each given
what the call passed that it takes, every argument evaluated once and in order).
"""

from __future__ import annotations

import libcst as cst

from codemod.analysis.names import is_name_or_literal, variables_used
from codemod.planning.plan import ClassPlan, Plan
from codemod.transforms.code_layout import call_line
from codemod.transforms.refs import FileRefs


def receives(link: ClassPlan, name: str) -> bool:
    """Whether ``link``'s wrap is given the argument ``name`` by the call that runs it: when
    its ``__init__`` declares it, or when it is a relay that passes on its ``**kwargs``
    (the name was in them)."""
    init = link.init
    if init is None:
        return False
    return name in init.param_names or (init.relays and init.forwards_rest)


def relay_calls(plan: Plan, class_plan: ClassPlan, refs: FileRefs, call: cst.Call, name: str,
                own: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """What ``super().__init__(...)`` did in a relay: the wraps of the classes after it
    (base first), each given the arguments the relay passed that it takes.

    An argument that more than one wrap takes, or that a later call takes, is first
    stored in a local (all of them then, in order), so each is evaluated once and
    before any of those wraps runs, as the call's arguments were.
    """
    assert class_plan.relay is not None and class_plan.init is not None
    run = [plan.classes[q] for q in class_plan.relay.chain]
    funcs = [cst.Module(body=[]).code_for_node(refs.name_in(w.facts.module, w.wrap_name))
             for w in run]
    passed = [(arg, arg_name) for arg, arg_name in zip(call.args, class_plan.relay.arg_names)]
    takers: dict[str, list[int]] = {}
    for _, arg_name in passed:
        if arg_name is not None:
            takers[arg_name] = [i for i, w in enumerate(run) if receives(w, arg_name)] or [len(run) - 1]
    hoist = any(not is_name_or_literal(arg.value) and takers[n] != [0] for arg, n in passed if n is not None)
    out: list[cst.BaseStatement] = []
    values: dict[str, str] = {}
    taken = variables_used([*own, *(cst.parse_statement(f) for f in funcs)]) | \
        set(class_plan.init.param_names) | {name, "kwargs"}
    for arg, arg_name in passed:
        if arg_name is None:
            continue
        code = cst.Module(body=[]).code_for_node(arg.value)
        if hoist and not is_name_or_literal(arg.value):
            local = arg_name
            while local in taken:
                local += "_"
            taken.add(local)
            out.append(cst.parse_statement(f"{local} = {code}"))
            code = local
        values[arg_name] = code
    star = next((arg for arg, n in passed if n is None), None)
    for i, func in enumerate(funcs):
        args = [f"{n}={values[n]}" for _, n in passed if n is not None and i in takers[n]]
        if star is not None:
            args.append(f"**{cst.Module(body=[]).code_for_node(star.value)}")
        out.append(call_line(func, name, args))
    return out
