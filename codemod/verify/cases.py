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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from codemod.verify.arguments import Build
from codemod.verify.call_args import ArgumentMaker, argument_makers, realize
from codemod.verify.compare import Counter, exception_text, same_outcome, same_value
from codemod.verify.families import FamilyClass
from codemod.verify.importer import TreeImport
from codemod.verify.model import ClassResult, Difference
from codemod.verify.stubs import TensorParallel

Outcome = tuple[Any, BaseException | None]


@dataclass
class Side:
    """One tree's view of the family: its import, classes (or factories), runtimes."""

    tree: TreeImport
    classes: dict[str, Any]
    runtimes: dict[str, Any]

    def run(self, action: Callable[[], Any]) -> Outcome:
        """``action()`` with this copy active: (value, None) or (None, exception)."""
        with self.tree.active():
            try:
                return action(), None
            except Exception as exc:  # noqa: BLE001 - an outcome to compare
                return None, exc


@dataclass
class Family:
    """What every case needs: both sides, the family's classes, tp sizes, the harvest."""

    before: Side
    after: Side
    members: list[FamilyClass]
    position: TensorParallel
    tp_sizes: tuple[int, ...]
    method_keywords: dict[str, set[tuple[str, ...]]]


def tp_grid(sizes: tuple[int, ...]) -> Iterator[tuple[int, int]]:
    """Every (rank, size) of the tensor-parallel group sizes ``sizes``."""
    for size in sizes:
        for rank in range(size):
            yield rank, size


class ClassCases:
    """Runs every case of one class and fills its ``ClassResult``."""

    def __init__(self, family: Family, member: FamilyClass, result: ClassResult) -> None:
        self.family = family
        self.member = member
        self.result = result
        self.counter = Counter()
        self.old_cls = family.before.classes[member.key]
        self.new_cls = family.after.classes[member.key]

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
        self.methods(build, old[0], index)
        self.copies(build, index)

    def public_attributes(self, param: Any) -> list[str]:
        """The original's public attribute names: instance fields, family properties and
        class constants (methods are compared by calling them)."""
        names = [name for name in vars(param) if not name.startswith("_")]
        for klass in type(param).__mro__:
            if klass is torch.nn.Parameter:
                break
            for name, value in vars(klass).items():
                if name.startswith("_") or name in names:
                    continue
                if isinstance(value, property) or not callable(value) \
                        and not isinstance(value, (staticmethod, classmethod)):
                    names.append(name)
        return names

    def public_methods(self) -> dict[str, Callable[..., Any]]:
        """Public functions the original class defines or inherits from the family."""
        methods: dict[str, Callable[..., Any]] = {}
        for klass in self.old_cls.__mro__:
            if klass is torch.nn.Parameter:
                break
            for name, value in vars(klass).items():
                if name.startswith("_") or name in methods:
                    continue
                if isinstance(value, staticmethod):
                    methods[name] = value.__func__
                elif inspect.isfunction(value):
                    methods[name] = value
        return methods

    def param_differences(self, old: Any, new: Any, what: str) -> list[str]:
        """Data, ``requires_grad``, public attributes, methods present, attribute dict."""
        diffs = same_outcome(_read(old, "data"), _read(new, "data"), f"{what}: data", self.counter)
        if type(new) is not torch.nn.Parameter and not isinstance(self.new_cls, type):
            diffs.append(f"{what}: converted parameter is a {type(new).__name__}")
        if old.requires_grad != new.requires_grad:
            diffs.append(f"{what}: requires_grad {old.requires_grad} vs {new.requires_grad}")
        for name in self.public_attributes(old):
            old_value, new_value = _read(old, name), _read(new, name)
            diffs += same_outcome(old_value, new_value, f"{what}: .{name}", self.counter)
        for name in self.public_methods():
            if callable(getattr(old, name, None)) and not callable(getattr(new, name, None)):
                diffs.append(f"{what}: method {name} missing")
        old_dict = vars(old)
        new_dict = dict(self.attr_dict(new))
        for name in set(new_dict) - set(old_dict):
            if name in self.class_level_names():
                del new_dict[name]  # documented: a wrap stores it on the parameter
                self.note(f"{what}: attribute dict shows class-level {name} "
                          "(docs/fix-safety.md, attribute-dict reads)")
        diffs += same_value(old_dict, new_dict, f"{what}: attribute dict", self.counter)
        return diffs

    def class_level_names(self) -> set[str]:
        """Static methods and class constants of the original class's family MRO: a
        converted parameter holds them as attributes, so its attribute dict shows them."""
        names = set()
        for klass in self.old_cls.__mro__:
            if klass is torch.nn.Parameter:
                break
            for name, value in vars(klass).items():
                if not name.startswith("__") and (
                        isinstance(value, staticmethod)
                        or not callable(value) and not isinstance(value, (property, classmethod))):
                    names.add(name)
        return names

    def note(self, text: str) -> None:
        """Record a documented difference once."""
        if text not in self.result.documented:
            self.result.documented.append(text)

    def attr_dict(self, param: Any) -> Any:
        """What the converted code answers for ``p.__dict__`` (``param_attr_dict``)."""
        runtime = self.family.after.runtimes.get(self.member.key)
        reader = getattr(runtime, "param_attr_dict", None)
        return reader(param) if reader is not None else vars(param)

    def kind_differences(self, old: Any, new: Any, what: str) -> list[str]:
        """Every former ``isinstance`` / ``type(p) is`` answer against every family class."""
        diffs = []
        for member in self.family.members:
            old_cls = self.family.before.classes.get(member.key)
            if old_cls is None or member.key not in self.family.after.classes:
                continue
            old_answers = (isinstance(old, old_cls), type(old) is old_cls)
            new_answers = self.new_kind(new, member)
            if old_answers != new_answers:
                diffs.append(f"{what}: isinstance/type-is {member.name}: {old_answers} vs "
                             f"{new_answers}")
        if isinstance(old, torch.nn.Parameter) != isinstance(new, torch.nn.Parameter):
            diffs.append(f"{what}: isinstance Parameter differs")
        return diffs

    def new_kind(self, param: Any, member: FamilyClass) -> tuple[bool, bool]:
        """The converted tree's answers: feature tags, and a kept class's own instances."""
        target = self.family.after.classes[member.key]
        is_class = isinstance(target, type)
        runtime: Any = self.family.after.runtimes.get(member.key)
        feature = getattr(getattr(runtime, "Features", None), member.feature or "", None)
        has = runtime.has_param_feature(param, feature) if feature is not None else False
        kind = runtime.param_kind_is(param, feature) if feature is not None else False
        return (has or (is_class and isinstance(param, target)),
                kind or (is_class and type(param) is target))

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

    def calls(self, name: str, function: Callable[..., Any], sample: Any, is_static: bool) \
            -> list[ArgumentMaker]:
        """Argument makers for method ``name`` at the current tp size."""
        return argument_makers(name, function, sample, is_static,
                               self.family.method_keywords, self.family.position.size)

    def call_differences(self, build: Build, name: str,
                         make_args: ArgumentMaker,
                         label: str) -> list[str]:
        """Build both, call ``name`` with the same arguments, compare result and state."""
        seed = 7

        def action(cls: Any) -> Callable[[], Any]:
            def run() -> Any:
                args, kwargs = build.values()
                param = cls(*args, **kwargs)
                call_args, call_kwargs = make_args(param)
                call_args = [realize(value, param, seed + i) for i, value in enumerate(call_args)]
                call_kwargs = {k: realize(v, param, seed + 50 + i)
                               for i, (k, v) in enumerate(call_kwargs.items())}
                try:
                    returned = getattr(param, name)(*call_args, **call_kwargs)
                except Exception as exc:  # noqa: BLE001 - the state is compared too
                    return param, None, exc
                return param, returned, None
            return run

        old, old_fail = self.family.before.run(action(self.old_cls))
        new, new_fail = self.family.after.run(action(self.new_cls))
        if old_fail is not None or new_fail is not None:
            return same_outcome((None, old_fail), (None, new_fail), label, self.counter)
        old_param, old_value, old_exc = old
        new_param, new_value, new_exc = new
        self.result.raised += old_exc is not None
        diffs = same_outcome((_unself(old_value, old_param), old_exc),
                             (_unself(new_value, new_param), new_exc), label, self.counter)
        diffs += same_outcome(_read(old_param, "data"), _read(new_param, "data"),
                              f"{label}: data after", self.counter)
        for attr in self.public_attributes(old_param):
            diffs += same_outcome(_read(old_param, attr), _read(new_param, attr),
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

    def methods_act_on_copy(self, param: Any, clone: Any, what: str) -> list[str]:
        """Each bound method of the converted copy is bound to the copy, not the source."""
        diffs = []
        for name in self.public_methods():
            method = getattr(clone, name, None)
            bound = getattr(method, "__self__", clone)
            if bound is param:
                diffs.append(f"{what}: method {name} of the copy acts on the source")
        return diffs


def _unself(value: Any, param: Any) -> Any:
    """A method that returns its own parameter returns "self" on both sides."""
    return "<the parameter itself>" if value is param else value


def _read(obj: Any, name: str) -> Outcome:
    try:
        return getattr(obj, name), None
    except Exception as exc:  # noqa: BLE001 - compared as an outcome
        return None, exc
