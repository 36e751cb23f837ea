"""The parameter-level equivalence battery, as one callable that reports instead of raising.

``run_battery(twin)`` compares an original ``parameter`` module with its conversion on every
table of ``scenarios.py``: constructions, missing arguments, former ``isinstance`` /
``type(p) is`` answers, every loader call at every simulated tensor-parallel position
(keyword and positional), ``adjust_shard_indexes_for_packing``, ``permute_param_layout_``
followed by loads, ``deepcopy`` / pickle of converted parameters and (optionally) a loader
under ``torch.compile(fullgraph=True)``. Each check that fails is recorded with its case;
the report counts the cases run and the tensors compared bit for bit.

It works on any package laid out like vLLM (``<pkg>.model_executor.parameter`` and a
``<pkg>.distributed`` with ``set_tensor_parallel``): ``scripts/release_check.py`` runs it on
the published vLLM sources, ``test_battery.py`` on ``fixtures/engine``.
"""

from __future__ import annotations

import copy
import pickle
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .scenarios import (
    BUILDS,
    CLASS_NAMES,
    LOAD_CASES,
    ONE_PER_CLASS,
    PERMUTE_CASES,
    PUBLIC_METHODS,
    assert_same_attrs,
    assert_same_outcome,
    assert_same_tensor,
    outcome,
)
from .twin import Twin, each_tp_rank, runtime_of, stub_weight_loader, tp_grid

Parameter = torch.nn.Parameter


@dataclass
class Report:
    """What the battery did: cases run, tensors compared, failures, observations."""

    cases: int = 0
    tensors: int = 0
    failures: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    by_section: dict[str, int] = field(default_factory=dict)

    def same_tensor(self, old: torch.Tensor, new: torch.Tensor, what: str) -> None:
        """``assert_same_tensor``, counted."""
        assert_same_tensor(old, new, what)
        self.tensors += 1

    def run(self, section: str, case: str, check: Callable[[], None]) -> None:
        """Run one case; a failure (or an unexpected exception) is recorded, not raised."""
        self.cases += 1
        self.by_section[section] = self.by_section.get(section, 0) + 1
        try:
            check()
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            where = traceback.extract_tb(exc.__traceback__)[-1]
            self.failures.append(
                f"{section}/{case}: {type(exc).__name__}: {exc} "
                f"({where.filename.rsplit('/', 1)[-1]}:{where.lineno})"
            )

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        """A few lines for a terminal."""
        sections = ", ".join(f"{name} {n}" for name, n in self.by_section.items())
        lines = [
            f"cases run: {self.cases} ({sections})",
            f"tensors compared bit for bit: {self.tensors}",
            f"failures: {len(self.failures)}",
        ]
        lines += [f"  {failure}" for failure in self.failures]
        lines += [f"{key}: {value}" for key, value in self.notes.items()]
        return "\n".join(lines)


def _features(conv):
    return runtime_of(conv).Features


def _same_param(report: Report, old: Any, new: Any, what: str) -> None:
    report.same_tensor(old.data, new.data, what)
    assert new.requires_grad == old.requires_grad, f"{what}: requires_grad"
    assert_same_attrs(old, new)


def run_battery(twin: Twin, compile_backend: str | None = "aot_eager") -> Report:
    """Run every section on ``twin`` (``before``: original, ``after``: converted)."""
    report = Report()
    orig, conv = twin.before.parameter, twin.after.parameter
    try:
        _factories(report, orig, conv)
        _constructions(report, orig, conv)
        _kinds(report, orig, conv)
        _loaders(report, twin, orig, conv)
        _adjust(report, orig, conv)
        _permute(report, twin, orig, conv)
        _copies(report, twin, orig, conv)
        if compile_backend is not None:
            _compile(report, twin, orig, conv, compile_backend)
    finally:
        twin.set_tp(0, 1)
    return report


def _factories(report: Report, orig, conv) -> None:
    def check(name: str) -> None:
        factory = getattr(conv, name)
        assert not isinstance(factory, type) and callable(factory), f"{name} is still a class"
        assert type(ONE_PER_CLASS[name].make(conv)) is Parameter, f"{name}() is no plain Parameter"
        assert hasattr(_features(conv), name), f"Features.{name} is missing"

    for name in CLASS_NAMES:
        report.run("factories", name, lambda name=name: check(name))

    def exports() -> None:
        for name in orig.__all__:
            assert hasattr(conv, name), f"{name} is no longer exported"
        assert callable(conv.permute_param_layout_)

    report.run("factories", "__all__", exports)


def _constructions(report: Report, orig, conv) -> None:
    def build(b) -> None:
        data_old, data_new = b.data(seed=3), b.data(seed=3)
        old, new = b.make(orig, data=data_old), b.make(conv, data=data_new)
        _same_param(report, old, new, str(b))
        shares_old = old.data_ptr() == data_old.data_ptr()
        assert (new.data_ptr() == data_new.data_ptr()) == shares_old, "storage sharing differs"
        for method in PUBLIC_METHODS:
            assert hasattr(new, method) == hasattr(old, method), method

    for b in BUILDS:
        report.run("constructions", str(b), lambda b=b: build(b))

    def missing(name: str) -> None:
        b = ONE_PER_CLASS[name]
        required = ["data", "weight_loader", *(k for k in b.kwargs if k != "marlin_tile_size")]
        for omit in required:
            args = dict(b.kwargs, data=b.data(), weight_loader=stub_weight_loader)
            del args[omit]
            o = outcome(lambda: getattr(orig, name)(**args))
            n = outcome(lambda: getattr(conv, name)(**dict(args)))
            assert_same_outcome(o, n, f"{name} without {omit}")

    for name in CLASS_NAMES:
        report.run("constructions", f"{name} missing arguments", lambda name=name: missing(name))


def _kinds(report: Report, orig, conv) -> None:
    def answers(kind: str) -> None:
        b = ONE_PER_CLASS[kind]
        old, new = b.make(orig), b.make(conv)
        wrong = []
        for name in CLASS_NAMES:
            cls, feature = getattr(orig, name), getattr(_features(conv), name)
            if isinstance(old, cls) != bool(runtime_of(conv).has_param_feature(new, feature)):
                wrong.append(f"isinstance(<{kind}>, {name}) was {isinstance(old, cls)}")
            if (type(old) is cls) != bool(runtime_of(conv).param_kind_is(new, feature)):
                wrong.append(f"type(<{kind}>) is {name} was {type(old) is cls}")
        assert not wrong, "; ".join(wrong)

    for kind in CLASS_NAMES:
        report.run("isinstance/type", kind, lambda kind=kind: answers(kind))

    def plain() -> None:
        for value in (torch.zeros(2), Parameter(torch.zeros(2)), None, 3):
            for name in CLASS_NAMES:
                feature = getattr(_features(conv), name)
                assert not runtime_of(conv).has_param_feature(value, feature), (value, name)
                assert not runtime_of(conv).param_kind_is(value, feature), (value, name)

    report.run("isinstance/type", "plain values", plain)


def _loaders(report: Report, twin: Twin, orig, conv) -> None:
    def compare(case, keyword: bool) -> None:
        pairs = [(case.build.make(orig, i), case.build.make(conv, i)) for i, _ in enumerate(tp_grid())]
        for (old, new), (rank, size) in zip(pairs, each_tp_rank(twin), strict=True):
            where = f"rank {rank} of {size}"
            full = case.full(size)
            full_old, full_new = full.clone(), full.clone()
            o = outcome(lambda: case.call(old, full_old, keyword))
            n = outcome(lambda: case.call(new, full_new, keyword))
            assert_same_outcome(o, n, where)
            _same_param(report, old, new, f"{where}: param")
            report.same_tensor(full, full_new, f"{where}: the loaded tensor was modified")

    for case in LOAD_CASES:
        for keyword in (True, False):
            style = "loaded_weight=" if keyword else "positional"
            report.run("loaders", f"{case.id} ({style})", lambda c=case, k=keyword: compare(c, k))


def _adjust(report: Report, orig, conv) -> None:
    def check(b) -> None:
        old, new = b.make(orig), b.make(conv)
        for size, offset in [(16, 0), (16, 16), (64, 96), (7, 3), (0, 0)]:
            args = dict(shard_size=size, shard_offset=offset)
            assert_same_outcome(
                outcome(lambda: old.adjust_shard_indexes_for_packing(**args)),
                outcome(lambda: new.adjust_shard_indexes_for_packing(**args)),
                f"adjust({size}, {offset})",
            )

    for b in BUILDS:
        if b.cls in ("PackedColumnParameter", "PackedvLLMParameter"):
            report.run("adjust_shard_indexes", str(b), lambda b=b: check(b))


def _permute(report: Report, twin: Twin, orig, conv) -> None:
    def check(case) -> None:
        old, new = case.build.make(orig), case.build.make(conv)
        o = outcome(lambda: orig.permute_param_layout_(old, **case.kwargs) is old)
        n = outcome(lambda: conv.permute_param_layout_(new, **case.kwargs) is new)
        assert_same_outcome(o, n, "permute_param_layout_")
        _same_param(report, old, new, "after permute")
        for then in case.then:
            for rank, size in each_tp_rank(twin):
                old, new = case.build.make(orig), case.build.make(conv)
                orig.permute_param_layout_(old, **case.kwargs)
                conv.permute_param_layout_(new, **case.kwargs)
                full = then.full(size)
                where = f"{then.loader} after permute at rank {rank} of {size}"
                assert_same_outcome(
                    outcome(lambda: then.call(old, full.clone())),
                    outcome(lambda: then.call(new, full.clone())),
                    where,
                )
                report.same_tensor(old.data, new.data, where)

    for case in PERMUTE_CASES:
        report.run("permute_param_layout_", case.id, lambda c=case: check(c))


def _copies(report: Report, twin: Twin, orig, conv) -> None:
    def deep(name: str) -> None:
        b = ONE_PER_CLASS[name]
        param = b.make(conv)
        o = outcome(lambda: copy.deepcopy(b.make(orig)))
        report.notes.setdefault(
            "deepcopy of an original parameter",
            "works" if o.error is None else f"raises {o.error.__name__}",
        )
        clone = copy.deepcopy(param)
        assert type(clone) is Parameter and clone.data_ptr() != param.data_ptr()
        report.same_tensor(param.data, clone.data, "deepcopy data")
        assert_same_attrs(param, clone)
        for method in PUBLIC_METHODS:
            if hasattr(param, method):
                assert getattr(clone, method).__self__ is clone, f"{method} not rebound"

    def pickled(name: str) -> None:
        param = ONE_PER_CLASS[name].make(conv)
        loaded = pickle.loads(pickle.dumps(param))
        assert type(loaded) is Parameter
        report.same_tensor(param.data, loaded.data, "pickle data")
        assert_same_attrs(param, loaded)
        feature = getattr(_features(conv), name)
        assert runtime_of(conv).param_kind_is(loaded, feature), "kind lost in pickle"

    for name in CLASS_NAMES:
        report.run("deepcopy", name, lambda name=name: deep(name))
        report.run("pickle", name, lambda name=name: pickled(name))


def _compile(report: Report, twin: Twin, orig, conv, backend: str) -> None:
    case = next(c for c in LOAD_CASES if c.id == "merged-packed-awq-marlin16")

    def run(module) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        torch._dynamo.reset()

        def program(param):
            def step(full):
                case.call(param, full)
                return param * 2

            return step

        full = case.full(2)
        twin.set_tp(1, 2)
        try:
            compiled_param, eager_param = case.build.make(module), case.build.make(module)
            got = torch.compile(program(compiled_param), fullgraph=True, backend=backend)(full.clone())
            want = program(eager_param)(full.clone())
        finally:
            twin.set_tp(0, 1)
            torch._dynamo.reset()
        return got, compiled_param.data, want, eager_param.data

    def converted() -> None:
        got, p_got, want, p_want = run(conv)
        report.same_tensor(want, got, "compiled result")
        report.same_tensor(p_want, p_got, "param after compiled load")
        report.notes[f"compile converted ({backend})"] = "fullgraph compiles; matches eager"

    def original() -> None:
        o = outcome(lambda: run(orig))
        if o.error is None:
            got, p_got, want, p_want = o.value
            assert_same_tensor(want, got, "compiled result (original)")
            result = "fullgraph compiles; matches eager"
        else:
            result = f"refused: {o.message.splitlines()[0][:160]}"
        report.notes[f"compile original ({backend})"] = result

    report.run("torch.compile", "converted", converted)
    report.run("torch.compile", "original (recorded)", original)
