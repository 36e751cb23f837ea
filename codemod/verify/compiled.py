"""``--compile``: each converted class's loader, compiled with ``torch.compile(fullgraph=True)``.

For every class, the first public method whose name starts with ``load`` (else
``weight_loader``) is called from a small program, ``load(param, weight); return param * 2``,
at tensor-parallel size 2, rank 1 (the argument combinations ``call_args`` gives, the first
one the original runs eagerly without raising). The converted tree's program is compiled
as one graph; its result and the parameter afterwards must equal the original's, run
eagerly. The original is compiled too: a converted loader that fails to compile where the
original compiled is a difference; one that compiles where the original did not is noted.

Off by default: compiling takes about a second per class and side.
"""

from __future__ import annotations

import builtins
import types
from collections.abc import Callable
from typing import Any

import torch

from codemod.verify.arguments import Build
from codemod.verify.call_args import ArgumentMaker, realize
from codemod.verify.compare import exception_text, same_outcome

#: torch.compile's backend: ``eager`` captures the whole graph (what fullgraph checks)
#: without generating kernels.
BACKEND = "eager"
#: The tensor-parallel position the compiled load runs at.
RANK, SIZE = 1, 2


def loader_name(methods: dict[str, Callable[..., Any]]) -> str | None:
    """The class's loader: the first public method named ``load*``, else ``weight_loader``."""
    loaders = [name for name in methods if name.startswith("load")]
    if loaders:
        return loaders[0]
    return "weight_loader" if "weight_loader" in methods else None


def _program(param: Any, name: str, args: list[Any], kwargs: dict[str, Any]) \
        -> Callable[[], Any]:
    """The load program, with globals of its own: torch.compile stores aliases of the
    modules it traces in the compiled function's globals, and each tree's copy of a module
    has the same name as the other's."""
    def step() -> Any:
        getattr(param, name)(*args, **kwargs)
        return param * 2
    own_globals = {"__builtins__": builtins, "__name__": "codemod_verify_program"}
    return types.FunctionType(step.__code__, own_globals, "step", None, step.__closure__)


def _run(cls: Any, build: Build, name: str, make_args: ArgumentMaker, compiled: bool) \
        -> tuple[Any, Any]:
    """(result, data after) of the load program, compiled or eager, from fresh values."""
    args, kwargs = build.values()
    param = cls(*args, **kwargs)
    call_args, call_kwargs = make_args(param)
    call_args = [realize(value, param, 7 + i) for i, value in enumerate(call_args)]
    call_kwargs = {k: realize(v, param, 57 + i) for i, (k, v) in enumerate(call_kwargs.items())}
    step = _program(param, name, call_args, call_kwargs)
    if compiled:
        torch._dynamo.reset()
        try:
            step = torch.compile(step, fullgraph=True, backend=BACKEND)
            return step(), param.data
        finally:
            torch._dynamo.reset()
    return step(), param.data


def compile_case(cases: Any, build: Build, sample: Any, index: int) -> None:
    """Run the compiled-loader case of ``cases`` (a ``ClassCases``) for one build."""
    name = loader_name(cases.public_methods())
    if name is None:
        return
    position = cases.family.position
    position.rank, position.size = RANK, SIZE
    try:
        before, after = cases.family.before, cases.family.after
        for make_args in cases.calls(name, cases.public_methods()[name], sample, False):
            eager, eager_fail = before.run(
                lambda m=make_args: _run(cases.old_cls, build, name, m, False))
            if eager_fail is None:
                break
        else:
            return  # no arguments the original loader takes
        label = f"compile {name} tp {RANK}/{SIZE} (build #{index})"
        got, got_fail = after.run(lambda: _run(cases.new_cls, build, name, make_args, True))
        _, original_fail = before.run(lambda: _run(cases.old_cls, build, name, make_args, True))
        if got_fail is not None:
            if original_fail is None:
                cases.case(label, [f"{label}: the converted loader does not compile as one graph "
                                   f"where the original did: {exception_text(got_fail)}"])
            else:
                cases.note(f"{label}: neither the original nor the converted loader compiles "
                           "as one graph")
                cases.case(label, [])
            return
        if original_fail is not None:
            cases.note(f"{label}: the converted loader compiles as one graph; the original "
                       f"did not ({type(original_fail).__name__})")
        diffs = same_outcome((eager[0], None), (got[0], None), f"{label}: result",
                             cases.counter)
        diffs += same_outcome((eager[1], None), (got[1], None), f"{label}: data after",
                              cases.counter)
        cases.case(label, diffs)
    finally:
        position.rank, position.size = 0, 1
