"""What is compared between an original parameter and its converted counterpart: data,
``requires_grad``, public attributes, the methods present, the attribute dict, every
former ``isinstance`` / ``type(p) is`` answer, and (for a copy) that its methods act on
the copy. ``ParamComparison`` holds one class of a family on both sides; ``ClassCases``
(``cases``) runs the cases that use these comparisons.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch

from codemod.runtime.helpers import PARAM_ATTR_DICT
from codemod.verify.compare import Counter, same_outcome, same_value
from codemod.verify.families import FamilyClass
from codemod.verify.model import ClassResult
from codemod.verify.sides import Family, Outcome


class ParamComparison:
    """One class of a family on both sides, and the comparisons of its parameters."""

    def __init__(self, family: Family, member: FamilyClass, result: ClassResult) -> None:
        self.family = family
        self.member = member
        self.result = result
        self.counter = Counter()
        self.old_cls = family.before.classes[member.key]
        self.new_cls = family.after.classes[member.key]

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
        diffs = same_outcome(read_outcome(old, "data"), read_outcome(new, "data"), f"{what}: data", self.counter)
        if type(new) is not torch.nn.Parameter and not isinstance(self.new_cls, type):
            diffs.append(f"{what}: converted parameter is a {type(new).__name__}")
        if old.requires_grad != new.requires_grad:
            diffs.append(f"{what}: requires_grad {old.requires_grad} vs {new.requires_grad}")
        for name in self.public_attributes(old):
            old_value, new_value = read_outcome(old, name), read_outcome(new, name)
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
        reader = getattr(runtime, PARAM_ATTR_DICT, None)
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

    def returned_copy_differences(self, old: Any, new: Any, source: Any, what: str) -> list[str]:
        """A tensor a function made from a parameter, original vs converted."""
        if not isinstance(old, torch.Tensor) or not isinstance(new, torch.Tensor):
            return same_value(type(old).__name__, type(new).__name__, f"{what}: returned",
                              self.counter)
        diffs = self.kind_differences(old, new, what)
        old_names = sorted(vars(old))
        new_names = sorted(self.attr_dict(new))
        diffs += same_value(old_names, [n for n in new_names if n in old_names or
                                        n not in self.class_level_names()],
                            f"{what}: attribute names", self.counter)
        # Shape, dtype and device, not the values: such a function may return uninitialized
        # memory (``torch.empty_strided``), and its rewrite adds no tensor operation.
        diffs += same_value((tuple(old.shape), old.dtype, old.device.type),
                            (tuple(new.shape), new.dtype, new.device.type),
                            f"{what}: shape, dtype, device", self.counter)
        if old.device.type != "meta" and new.device.type != "meta":
            if isinstance(old, torch.nn.Parameter):
                for attr in self.public_attributes(old):
                    diffs += same_outcome(read_outcome(old, attr), read_outcome(new, attr),
                                          f"{what}: .{attr}", self.counter)
        return diffs + self.methods_act_on_copy(source, new, what)

    def methods_act_on_copy(self, param: Any, clone: Any, what: str) -> list[str]:
        """Each bound method of the converted copy is bound to the copy, not the source."""
        diffs = []
        for name in self.public_methods():
            method = getattr(clone, name, None)
            bound = getattr(method, "__self__", clone)
            if bound is param:
                diffs.append(f"{what}: method {name} of the copy acts on the source")
        return diffs


def read_outcome(obj: Any, name: str) -> Outcome:
    """``obj.name`` as an outcome: (value, None), or (None, what reading it raised)."""
    try:
        return getattr(obj, name), None
    except Exception as exc:  # noqa: BLE001 - compared as an outcome
        return None, exc
