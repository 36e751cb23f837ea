"""The cases run on each class: build, kinds, every public method at every tensor-parallel
position, deep copy, pickling and attribute-dict reads, original against converted.

Every case builds fresh parameters on both sides from the same argument values, runs the
same thing on each (each inside its own copy's ``active()`` block) and compares what came
out (``compare``). A difference is recorded with its case; nothing raises out of here.
"""

from __future__ import annotations

import copy
import inspect
import pickle
from collections.abc import Callable
from functools import partial
from typing import Any

from codemod.verify.arguments import Build
from codemod.verify.call_args import ArgumentMaker, argument_makers, realize
from codemod.verify.compare import exception_text, same_outcome
from codemod.verify.model import Difference
from codemod.verify.param_compare import ParamComparison, read_outcome
from codemod.verify.sides import Outcome, tp_grid


def _plain_objects() -> list[tuple[str, Any, Any]]:
    """A plain ``Parameter`` and a plain tensor, the same object on both sides."""
    import torch

    parameter, tensor = torch.nn.Parameter(torch.zeros(1)), torch.zeros(1)
    return [("a plain Parameter", parameter, parameter), ("a plain tensor", tensor, tensor)]


class ClassCases(ParamComparison):
    """Runs every case of one class and fills its ``ClassResult``."""

    # -- bookkeeping -------------------------------------------------------------------

    def case(self, name: str, differences: list[str]) -> None:
        self.result.cases += 1
        self.result.tensors = self.counter.tensors
        for detail in differences:
            self.result.differences.append(Difference(self.member.name, name, detail))

    def build(self, build: Build) -> tuple[Outcome, Outcome]:
        """Build the parameter on both sides from identical fresh values."""
        def make(cls: Any) -> Callable[[], Any]:
            def action() -> Any:
                args, kwargs = build.values()
                return cls(*args, **kwargs)
            return action
        return self.family.before.run(make(self.old_cls)), self.family.after.run(make(self.new_cls))

    # -- the sections ------------------------------------------------------------------

    def run(self, builds: list[Build]) -> None:
        """Every section for every build; a failure of the verifier itself on one build is
        recorded as a difference of that build, and the next build runs."""
        for index, build in enumerate(builds):
            try:
                self.run_build(build, index)
            except Exception as exc:  # noqa: BLE001 - reported, never raised
                self.case(f"build #{index}", [f"build #{index}: could not be compared: "
                                              f"{exception_text(exc)}"])

    def run_build(self, build: Build, index: int) -> None:
        """The sections for one build: construction, kinds, methods, copies."""
        old, new = self.build(build)
        if old[1] is not None:
            return  # the harvested arguments do not fit the original: not a case
        self.result.builds += 1
        label = f"build #{index} ({build.origin})"
        if new[1] is not None:
            self.case(label, same_outcome(old, new, label, self.counter))
            return
        self.case(label, self.param_differences(old[0], new[0], label))
        self.case(f"kinds #{index}", self.kind_differences(old[0], new[0], f"kinds #{index}"))
        self.checks(old[0], new[0], index)
        self.methods(build, old[0], index)
        self.module_functions(build, old[0], index)
        self.copies(build, index)
        self.rewritten_functions(build, index)
        if self.family.compile_loaders and index == 0:
            from codemod.verify.compiled import compile_case

            compile_case(self, build, old[0], index)

    def checks(self, old: Any, new: Any, index: int) -> None:
        """Each of the tree's rewritten class checks answers for the converted parameter
        as the original check did for the original one (``check_sites``); each rewritten
        comparison of two objects' types, for this class's first parameter against the
        first of every class before it, itself, a plain ``Parameter`` and a plain tensor,
        both ways round."""
        for driven in self.family.check_sites:
            if driven.site.pair:
                continue
            label = f"check {driven.site.where} #{index}"
            before = self.family.before.run(partial(driven.original.answer, old))
            after = self.family.after.run(partial(driven.converted.answer, new))
            diffs = same_outcome(before, after, f"{label}: `{driven.site.original}`",
                                 self.counter)
            self.case(label, diffs)
        pairs = [driven for driven in self.family.check_sites if driven.site.pair]
        others = self.family.others
        if not pairs or any(name == self.member.name for name, _, _ in others):
            return
        if not others:
            others += _plain_objects()
        others.append((self.member.name, old, new))
        for driven in pairs:
            for other, other_old, other_new in others:
                for swapped in (False, True):
                    label = (f"compare {driven.site.where} {other if swapped else self.member.name}"
                             f" with {self.member.name if swapped else other}")
                    first, second = ((other_old, old), (other_new, new)) if swapped else \
                        ((old, other_old), (new, other_new))
                    before = self.family.before.run(partial(driven.original.answer, *first))
                    after = self.family.after.run(partial(driven.converted.answer, *second))
                    self.case(label, same_outcome(before, after, f"{label}: `{driven.site.original}`",
                                                  self.counter))

    # -- methods -----------------------------------------------------------------------

    def methods(self, build: Build, sample: Any, index: int) -> None:
        """Every public method, at every tp position, with every argument combination."""
        position = self.family.position
        for name, function in self.public_methods().items():
            is_static = isinstance(inspect.getattr_static(self.old_cls, name), staticmethod)
            for rank, size in tp_grid(self.family.tp_sizes):
                position.rank, position.size = rank, size
                for n, call in enumerate(self.calls(name, function, sample, is_static)):
                    label = f"{name} tp {rank}/{size} #{n} (build #{index})"
                    self.case(label, self.call_differences(build, name, call, label))
        position.rank, position.size = 0, 1

    def module_functions(self, build: Build, sample: Any, index: int) -> None:
        """Every family-module function whose parameter admits this class, called on the
        parameter with the tree's literal arguments (else method-style ones), at every tp
        position; compared as methods are."""
        position = self.family.position
        for side_functions in self.family.functions:
            function = side_functions.function
            if not isinstance(sample, side_functions.admits):
                continue
            for rank, size in tp_grid(self.family.tp_sizes):
                position.rank, position.size = rank, size
                makers = [_literal_maker(args, kwargs) for args, kwargs in function.forms] or \
                    argument_makers(function.name, side_functions.original, sample, False,
                                    self.family.method_keywords, size)
                for n, make in enumerate(makers):
                    label = f"{function.name}() tp {rank}/{size} #{n} (build #{index})"
                    self.case(label, self.call_differences(
                        build, function.name, make, label,
                        (side_functions.original, side_functions.converted)))
        position.rank, position.size = 0, 1

    def calls(self, name: str, function: Callable[..., Any], sample: Any, is_static: bool) \
            -> list[ArgumentMaker]:
        """Argument makers for method ``name`` at the current tp size."""
        return argument_makers(name, function, sample, is_static,
                               self.family.method_keywords, self.family.position.size)

    def call_differences(self, build: Build, name: str,
                         make_args: ArgumentMaker,
                         label: str, functions: tuple[Any, Any] | None = None) -> list[str]:
        """Build both, call method ``name`` (or each tree's function of ``functions`` on the
        parameter) with the same arguments, compare result and state."""
        seed = 7

        def action(cls: Any, function: Any = None) -> Callable[[], Any]:
            def run() -> Any:
                args, kwargs = build.values()
                param = cls(*args, **kwargs)
                call_args, call_kwargs = make_args(param)
                call_args = [realize(value, param, seed + i) for i, value in enumerate(call_args)]
                call_kwargs = {k: realize(v, param, seed + 50 + i)
                               for i, (k, v) in enumerate(call_kwargs.items())}
                try:
                    if function is not None:
                        returned = function(param, *call_args, **call_kwargs)
                    else:
                        returned = getattr(param, name)(*call_args, **call_kwargs)
                except Exception as exc:  # noqa: BLE001 - the state is compared too
                    return param, None, exc
                return param, returned, None
            return run

        old_function, new_function = functions if functions is not None else (None, None)
        old, old_fail = self.family.before.run(action(self.old_cls, old_function))
        new, new_fail = self.family.after.run(action(self.new_cls, new_function))
        if old_fail is not None or new_fail is not None:
            return same_outcome((None, old_fail), (None, new_fail), label, self.counter)
        old_param, old_value, old_exc = old
        new_param, new_value, new_exc = new
        self.result.raised += old_exc is not None
        diffs = same_outcome((_unself(old_value, old_param), old_exc),
                             (_unself(new_value, new_param), new_exc), label, self.counter)
        diffs += same_outcome(read_outcome(old_param, "data"), read_outcome(new_param, "data"),
                              f"{label}: data after", self.counter)
        for attr in self.public_attributes(old_param):
            diffs += same_outcome(read_outcome(old_param, attr), read_outcome(new_param, attr),
                                  f"{label}: .{attr} after", self.counter)
        return diffs

    # -- copies ------------------------------------------------------------------------

    def copies(self, build: Build, index: int) -> None:
        """``copy.deepcopy`` and a pickle round trip of a converted parameter give a
        parameter that answers as the original one did (data, attributes, kinds), whose
        methods act on the copy. The original class's own copy may have raised or lost its
        class (``pickle`` rebuilds a plain ``Parameter``): noted as documented."""
        for label, clone in (("deepcopy", copy.deepcopy),
                             ("pickle", lambda p: pickle.loads(pickle.dumps(p)))):
            def action(cls: Any, clone: Callable[[Any], Any] = clone) -> Callable[[], Any]:
                def run() -> Any:
                    args, kwargs = build.values()
                    param = cls(*args, **kwargs)
                    try:
                        return param, clone(param), None
                    except Exception as exc:  # noqa: BLE001 - compared below
                        return param, None, exc
                return run
            what = f"{label} #{index}"
            old, old_fail = self.family.before.run(action(self.old_cls))
            new, new_fail = self.family.after.run(action(self.new_cls))
            if old_fail is not None or new_fail is not None:
                self.case(what, same_outcome((None, old_fail), (None, new_fail), what, self.counter))
                continue
            (old_param, old_copy, old_exc), (new_param, new_copy, new_exc) = old, new
            if new_exc is not None:  # fine only where the original raised the same
                self.case(what, same_outcome((None, old_exc), (None, new_exc), what, self.counter))
                continue
            if isinstance(self.new_cls, type) and old_exc is not None:
                self.case(what, same_outcome((None, old_exc), (new_copy, None), what, self.counter))
                continue
            if not isinstance(self.new_cls, type) and (
                    old_exc is not None or type(old_copy) is not type(old_param)):
                self.note(
                    f"{what}: the original class's copy "
                    + (f"raised {type(old_exc).__name__}" if old_exc is not None
                       else f"is a {type(old_copy).__name__}")
                    + "; the converted parameter's copy keeps its kind (docs/fix-safety.md)")
            # A class kept as a class copies as the original class did; a converted
            # parameter's copy must answer as the original parameter itself.
            expected = old_copy if isinstance(self.new_cls, type) else old_param
            diffs = self.param_differences(expected, new_copy, what)
            diffs += self.kind_differences(expected, new_copy, what)
            diffs += self.methods_act_on_copy(new_param, new_copy, what)
            self.case(what, diffs)

    def rewritten_functions(self, build: Build, index: int) -> None:
        """Each function that copies a parameter, on a fresh parameter: the tensor it
        returns answers as the original's (kinds, attribute names, shape, dtype and device,
        public attributes off the ``meta`` device) and its methods act on it."""
        for side_functions in self.family.rewritten:
            name = side_functions.function.name
            label = f"{name}() #{index}"

            def action(cls: Any, function: Any) -> Callable[[], Any]:
                def run() -> Any:
                    args, kwargs = build.values()
                    param = cls(*args, **kwargs)
                    return param, function(param)
                return run
            old, old_fail = self.family.before.run(action(self.old_cls, side_functions.original))
            new, new_fail = self.family.after.run(action(self.new_cls,
                                                         side_functions.converted))
            if old_fail is not None or new_fail is not None:
                self.case(label, same_outcome((None, old_fail), (None, new_fail), label,
                                              self.counter))
                continue
            (_, old_result), (new_param, new_result) = old, new
            self.case(label, self.returned_copy_differences(old_result, new_result, new_param,
                                                            label))

def _literal_maker(args: tuple[Any, ...], kwargs: dict[str, Any]) -> ArgumentMaker:
    """The tree's own literal arguments, copied afresh for each call."""
    def make(param: Any) -> tuple[list[Any], dict[str, Any]]:
        return list(copy.deepcopy(args)), copy.deepcopy(kwargs)
    return make


def _unself(value: Any, param: Any) -> Any:
    """A method that returns its own parameter returns "self" on both sides."""
    return "<the parameter itself>" if value is param else value
