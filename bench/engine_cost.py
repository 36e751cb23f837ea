"""What converted parameters cost the engine: the original and converted modules, side by side.

    .venv/bin/python bench/engine_cost.py                      # the three parameter modules
    .venv/bin/python bench/engine_cost.py --wheels /tmp/wheels --reps 15 --count 4000

Three subjects, each imported twice in one process (``tests/behaviour/twin.py``: the
original tree and its conversion by ``codemod apply``, loaded side by side):

* ``fixture``: ``fixtures/engine`` (``minivllm``, the vLLM 0.6.4-shaped example);
* ``vllm 0.6.4.post1``: the published ``model_executor/parameter.py`` with the stubs of
  ``tests/behaviour/release_trees.py`` (``build_tree``);
* ``vllm 0.34.0``: the real files and stubs of ``tests/behaviour/release_trees.py``
  (``build_isolated``), where ``BasevLLMParameter`` stays a class (a shadow base).

The vLLM sources come from the cache (``--cache``, default ``~/.cache/codemod-bench``,
unpacked as ``bench/run.py`` leaves them), else from the wheel in ``--wheels DIR``, else
from ``pip download --no-deps``.

Measured on both sides, in the same run, interleaved (original then converted, round after
round), medians of ``--reps`` rounds; the ratio column is converted / original:

* construction of each class (one valid construction from ``tests/behaviour/scenarios.py``)
  on a shared tensor, so only the parameter's own cost counts: microseconds per parameter,
  and bytes per parameter by ``tracemalloc`` (Python-heap allocations: the Python object,
  its attribute dict and what the constructor stores; the C++ tensor header is the same on
  both sides and not counted);
* a loader call per call (``load_row_parallel_weight``, ``load_qkv_weight`` on a
  ``ModelWeightParameter``, tensor-parallel rank 0 of 1);
* eager ops touching a parameter per call: ``F.linear(x, p)``, ``p.narrow(0, 0, 4)``,
  ``p.copy_(src)`` on a ``ModelWeightParameter``; and for every class, ``p + 1``,
  ``p.sum()`` and ``p.copy_(src)`` (any shape), their time per call summed;
* ``torch.compile(fullgraph=True)`` (``--backend``, default ``aot_eager``) of a small
  forward ``F.linear(x, p) * 2`` and of a loader step (``p.load_row_parallel_weight(w)``,
  then ``p * 2``), the parameter passed as an argument: seconds to the first result, graph
  count and graph breaks (``torch._dynamo.explain``), graphs compiled again when a second
  parameter of the same kind is passed, and the steady-state call time;
* the eager ops and compiled calls again on CUDA (``torch.cuda.synchronize`` around each
  timing) when CUDA is available; skipped with a line saying so otherwise.

Times are the process's CPU time (``--clock wall`` for wall time; CUDA timings are wall
time). Not a test: it asserts nothing. Timings on a shared machine are noisy; the ratios
are measured back to back and are the numbers to read.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

OLD_RELEASE = "0.6.4.post1"
NEW_RELEASE = "0.34.0"

import torch  # noqa: E402 - after the repository is on sys.path
import torch.nn.functional as F  # noqa: E402

from bench.run import fetch_tree  # noqa: E402
from scripts.release_check import unpack_sources  # noqa: E402
from tests.behaviour.battery_latest import ONE_PER_CLASS_LATEST  # noqa: E402
from tests.behaviour.release_trees import SUBMODULES as LATEST_SUBMODULES  # noqa: E402
from tests.behaviour.release_trees import build_isolated, build_tree  # noqa: E402
from tests.behaviour.scenarios import LOAD_CASES, ONE_PER_CLASS, Build, LoadCase  # noqa: E402
from tests.behaviour.twin import (  # noqa: E402
    SUBMODULES,
    Twin,
    copy_tree,
    forget_compiled_module_names,
    load_twin,
)


@dataclass
class Subject:
    """One parameter module: its original and converted trees and how to import them."""

    name: str
    before: Path
    after: Path
    submodules: tuple[str, ...]
    package: str
    builds: dict[str, Build]


@dataclass
class Row:
    """One line of the table: a measure on the original and on the converted module."""

    measure: str
    unit: str
    original: Any
    converted: Any
    ratio: float | None = None
    note: str = ""


@dataclass
class Table:
    """The rows measured on one subject."""

    subject: str
    rows: list[Row] = field(default_factory=list)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(f"  {row.measure}: {_shown(row.original)} / {_shown(row.converted)} {row.unit}"
              + (f" ({row.ratio:.2f}x)" if row.ratio is not None else "") + (f" {row.note}" if row.note else ""),
              file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------
# the subjects


def convert(tree: Path) -> None:
    """``codemod apply tree`` in this process, its summary kept off the output."""
    from codemod.cli import main

    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            rc = main(["apply", str(tree)])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
    if rc != 1:
        raise SystemExit(f"codemod apply {tree} exited {rc}, expected 1:\n{err.getvalue()}")


def vllm_sources(version: str, wheels: Path | None, cache: Path) -> Path:
    """The directory holding ``vllm/`` of ``version``: the one already unpacked in the
    cache, else unpacked from ``wheels`` when it has the wheel, else from the cache's wheel
    or a download (``bench/run.py``'s ``fetch_tree``)."""
    root = cache / f"vllm-{version}" / "src"
    if (root / "vllm" / "__init__.py").exists():
        return root
    found = sorted(wheels.glob(f"vllm-{version}-*.whl")) if wheels else []
    if not found:
        return fetch_tree(cache, f"vllm=={version}").parent
    unpack_sources(found[0], root)
    return root


def fixture_subject(work: Path) -> Subject:
    before = copy_tree(REPO / "fixtures" / "engine", work / "fixture" / "before")
    after = copy_tree(before, work / "fixture" / "after")
    convert(after)
    return Subject("fixture (fixtures/engine)", before, after, SUBMODULES, "minivllm", dict(ONE_PER_CLASS))


def old_release_subject(work: Path, sources: Path) -> Subject:
    before = work / "vllm064" / "before"
    build_tree(sources, before)
    after = copy_tree(before, work / "vllm064" / "after")
    convert(after)
    return Subject(f"vllm {OLD_RELEASE}", before, after,
                   ("vllm.distributed", "vllm.model_executor.parameter"), "vllm", dict(ONE_PER_CLASS))


def new_release_subject(work: Path, sources: Path) -> Subject:
    before = work / "vllm034" / "before"
    build_isolated(sources, before)
    after = copy_tree(before, work / "vllm034" / "after")
    convert(after / "vllm")
    return Subject(f"vllm {NEW_RELEASE}", before, after, tuple(LATEST_SUBMODULES), "vllm",
                   dict(ONE_PER_CLASS_LATEST))


# ---------------------------------------------------------------------------------------
# timing helpers


#: The clock of the CPU measures: CPU time of this process (``--clock cpu``, the default:
#: on a shared machine it varies much less than wall time) or wall time (``--clock wall``).
#: Timings around CUDA work always use wall time.
CLOCK: list[Callable[[], float]] = [time.process_time]


def clock_for(sync: Callable[[], None]) -> Callable[[], float]:
    """Wall time where ``sync`` waits for a device, else the chosen CPU clock."""
    return CLOCK[0] if sync is _no_sync else time.perf_counter


def per_call_us(call: Callable[[], Any], count: int, sync: Callable[[], None]) -> float:
    """Microseconds per call of ``call``, over ``count`` calls."""
    clock = clock_for(sync)
    sync()
    start = clock()
    for _ in range(count):
        call()
    sync()
    return (clock() - start) / count * 1e6


def interleaved(timed: Callable[[Any], float], sides: list[Any] | tuple[Any, Any],
                reps: int) -> tuple[float, float, float]:
    """Medians of ``reps`` rounds of ``timed(original)`` then ``timed(converted)``, and the
    median per-round ratio."""
    before, after, ratios = [], [], []
    for _ in range(reps):
        b, a = timed(sides[0]), timed(sides[1])
        before.append(b)
        after.append(a)
        ratios.append(a / b)
    return statistics.median(before), statistics.median(after), statistics.median(ratios)


def build_us(factory: Callable[..., Any], build: Build, data: torch.Tensor, count: int) -> float:
    """Microseconds per construction of ``build`` on the shared ``data``."""
    make = _maker(factory, build, data)
    clock = CLOCK[0]
    start = clock()
    keep = [make() for _ in range(count)]
    elapsed = clock() - start
    del keep
    return elapsed / count * 1e6


def build_bytes(factory: Callable[..., Any], build: Build, data: torch.Tensor, count: int) -> float:
    """Python-heap bytes per parameter (tracemalloc) of ``count`` live constructions."""
    make = _maker(factory, build, data)
    make()  # first call: imports, caches
    gc.collect()
    tracemalloc.start()
    keep = [make() for _ in range(count)]
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del keep
    return (size - sys.getsizeof([None] * count)) / count


def _maker(factory: Callable[..., Any], build: Build, data: torch.Tensor) -> Callable[[], Any]:
    from tests.behaviour.twin import stub_weight_loader

    kwargs = dict(build.kwargs, weight_loader=stub_weight_loader)
    return lambda: factory(data=data, **kwargs)


# ---------------------------------------------------------------------------------------
# the measures


def construction(table: Table, twin: Twin, subject: Subject, args: argparse.Namespace) -> None:
    for name, build in subject.builds.items():
        old = getattr(twin.before.parameter, name, None)
        new = getattr(twin.after.parameter, name, None)
        if old is None or new is None:
            continue
        data = build.data()
        kept = isinstance(new, type)
        note = "kept as a class" if kept else ""
        timed = partial(build_us, build=build, data=data, count=args.count)
        b, a, ratio = interleaved(timed, (old, new), args.reps)
        table.add(Row(f"construct {name}", "us/param", b, a, ratio, note))
        mb, ma = build_bytes(old, build, data, args.count), build_bytes(new, build, data, args.count)
        table.add(Row(f"memory {name}", "B/param", mb, ma, ma / mb, note))


def _case(case_id: str) -> LoadCase:
    return next(c for c in LOAD_CASES if c.id == case_id)


def loaders(table: Table, twin: Twin, args: argparse.Namespace) -> None:
    for label, case_id in (("load_row_parallel_weight", "row-modelweight"),
                           ("load_qkv_weight", "qkv-modelweight-q")):
        case = _case(case_id)
        full = case.full(1)
        params = [case.build.make(side.parameter) for side in (twin.before, twin.after)]
        calls = [partial(case.call, p, full) for p in params]
        timed = partial(per_call_us, count=args.calls, sync=_no_sync)
        b, a, ratio = interleaved(timed, calls, args.reps)
        table.add(Row(f"{label} (ModelWeightParameter)", "us/call", b, a, ratio))


def _weights(twin: Twin, device: str) -> list[Any]:
    """A ``ModelWeightParameter`` (8 x 6) of each side, on ``device``."""
    build = ONE_PER_CLASS["ModelWeightParameter"]
    data = build.data().to(device)
    return [build.make(side.parameter, data=data.clone()) for side in (twin.before, twin.after)]


def eager_ops(table: Table, twin: Twin, args: argparse.Namespace, device: str) -> None:
    sync = torch.cuda.synchronize if device == "cuda" else _no_sync
    params = _weights(twin, device)
    x = torch.randn(4, 6, device=device)
    source = torch.randn(8, 6, device=device)
    ops: dict[str, Callable[[Any], Callable[[], Any]]] = {
        "F.linear(x, p)": lambda p: (lambda: F.linear(x, p)),
        "p.narrow(0, 0, 4)": lambda p: (lambda: p.narrow(0, 0, 4)),
        "p.copy_(src)": lambda p: (lambda: p.copy_(source)),
    }
    suffix = " [cuda]" if device == "cuda" else ""
    with torch.no_grad():
        for label, op in ops.items():
            timed = partial(per_call_us, count=args.calls, sync=sync)
            b, a, ratio = interleaved(timed, [op(p) for p in params], args.reps)
            table.add(Row(f"eager {label}{suffix}", "us/call", b, a, ratio))


#: Ops that take a parameter of any shape (0-d scales included), for every class.
_ANY_SHAPE_OPS = "p + 1, p.sum(), p.copy_(src)"


def eager_ops_per_class(table: Table, twin: Twin, subject: Subject, args: argparse.Namespace,
                        device: str) -> None:
    """For each class, the three ops of ``_ANY_SHAPE_OPS`` per call (their time summed):
    an op dispatched on a former subclass instance went through its class's
    ``__torch_function__``, whatever the class."""
    sync = torch.cuda.synchronize if device == "cuda" else _no_sync
    suffix = " [cuda]" if device == "cuda" else ""
    timed = partial(per_call_us, count=args.calls, sync=sync)
    with torch.no_grad():
        for name, build in subject.builds.items():
            factories = [getattr(side.parameter, name, None) for side in (twin.before, twin.after)]
            if None in factories:
                continue
            data = build.data().to(device)
            params = [_maker(factory, build, data.clone())() for factory in factories]
            source = torch.ones_like(data)

            def ops(p: Any, source: torch.Tensor = source) -> Callable[[], Any]:
                def run() -> None:
                    p + 1
                    p.sum()
                    p.copy_(source)
                return run

            b, a, ratio = interleaved(timed, [ops(p) for p in params], args.reps)
            note = "kept as a class" if isinstance(factories[1], type) else ""
            table.add(Row(f"eager {_ANY_SHAPE_OPS} on {name}{suffix}", "us/call", b, a, ratio, note))


# ---------------------------------------------------------------------------------------
# torch.compile


def forward(x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """A small forward reading the parameter."""
    return F.linear(x, p) * 2


def loader_step(w: torch.Tensor, p: Any) -> torch.Tensor:
    """A loader called inside the compiled region, then the parameter read."""
    p.load_row_parallel_weight(w)
    return p * 2


@dataclass
class Compiled:
    """What compiling one function on one side gave."""

    first_s: float | None = None
    graphs: int | None = None
    breaks: int | None = None
    recompiles: int | None = None
    steady_us: float | None = None
    error: str = ""


def compile_case(fn: Callable[..., Any], make_args: Callable[[Any], tuple[Any, ...]],
                 params: tuple[Any, Any], args: argparse.Namespace, sync: Callable[[], None]) -> Compiled:
    """Compile ``fn`` with ``fullgraph=True``: first result, graphs, recompiles, steady time."""
    import torch._dynamo

    result = Compiled()
    compiled_graphs = [0]

    def counting(gm: Any, example_inputs: Any) -> Any:
        compiled_graphs[0] += 1
        return torch._dynamo.lookup_backend(args.backend)(gm, example_inputs)

    forget_imports(fn)
    first, second = params
    compiled = torch.compile(fn, fullgraph=True, backend=counting)
    try:
        clock = clock_for(sync)
        sync()
        start = clock()
        compiled(*make_args(first))
        sync()
        result.first_s = clock() - start
        graphs = compiled_graphs[0]
        compiled(*make_args(second))
        result.recompiles = compiled_graphs[0] - graphs
        call_args = make_args(first)
        result.steady_us = statistics.median(
            per_call_us(lambda: compiled(*call_args), args.calls, sync) for _ in range(args.reps))
    except Exception as exc:  # noqa: BLE001
        message = str(exc).strip().splitlines()[0][:100] if str(exc).strip() else ""
        result.error = f"fullgraph fails: {type(exc).__name__}: {message}"
    forget_imports(fn)
    try:
        explanation = torch._dynamo.explain(fn)(*make_args(first))
        result.graphs, result.breaks = explanation.graph_count, explanation.graph_break_count
    except Exception as exc:  # noqa: BLE001 - the failure is the measurement
        result.error = result.error or f"explain: {type(exc).__name__}"
    finally:
        forget_imports(fn)
    return result


def forget_imports(fn: Callable[..., Any]) -> None:
    """Reset Dynamo and forget the modules it imported by name for ``fn``'s frame.

    Both sides' modules have the same names: Dynamo caches ``import_module`` by name and
    stores the modules it imported as ``__import_*`` globals of the compiled function's
    module, so a compile of the other side would find the first side's modules there.
    """
    import torch._dynamo

    torch._dynamo.reset()
    forget_compiled_module_names()
    for name in [n for n in fn.__globals__ if n.startswith("__import_")]:
        del fn.__globals__[name]


def warm_up_compiler(backend: str, device: str) -> None:
    """Compile one unrelated function first: the process's first compile also pays for
    Dynamo's own start, which would land on whichever side is measured first."""
    import torch._dynamo

    torch.compile(lambda t: F.linear(t, t) * 2, fullgraph=True, backend=backend)(
        torch.ones(2, 2, device=device))
    torch._dynamo.reset()


def compile_rows(table: Table, twin: Twin, args: argparse.Namespace, device: str) -> None:
    sync = torch.cuda.synchronize if device == "cuda" else _no_sync
    warm_up_compiler(args.backend, device)
    suffix = " [cuda]" if device == "cuda" else ""
    x = torch.randn(4, 6, device=device)
    w = torch.randn(8, 6, device=device)
    sides = [tuple(_weights(twin, device)) for _ in range(2)]  # two parameters per side
    pairs = {side: (sides[0][side], sides[1][side]) for side in (0, 1)}
    cases: list[tuple[str, Callable[..., Any], Callable[[Any], tuple[Any, ...]]]] = [
        ("forward F.linear(x, p) * 2", forward, lambda p: (x, p)),
        ("loader p.load_row_parallel_weight(w)", loader_step, lambda p: (w, p)),
    ]
    for label, fn, make_args in cases:
        old = compile_case(fn, make_args, pairs[0], args, sync)
        new = compile_case(fn, make_args, pairs[1], args, sync)
        name = f"compile {label}{suffix}"
        table.add(Row(f"{name}: first result", "s", old.first_s or old.error, new.first_s or new.error,
                      _ratio(old.first_s, new.first_s)))
        table.add(Row(f"{name}: graphs / graph breaks", "", _pair(old.graphs, old.breaks),
                      _pair(new.graphs, new.breaks)))
        table.add(Row(f"{name}: graphs recompiled for a 2nd parameter", "", _count(old.recompiles),
                      _count(new.recompiles)))
        table.add(Row(f"{name}: steady call", "us/call", old.steady_us or old.error,
                      new.steady_us or new.error, _ratio(old.steady_us, new.steady_us)))


def _ratio(old: float | None, new: float | None) -> float | None:
    return new / old if old and new else None


def _pair(a: int | None, b: int | None) -> str:
    return "n/a" if a is None else f"{a} / {b}"


def _count(value: int | None) -> str:
    return "n/a" if value is None else str(value)


def _no_sync() -> None:
    return None


# ---------------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 else f"{value:.2f}" if value >= 1 else f"{value:.3f}"
    return str(value)


def print_table(table: Table) -> None:
    print(f"\n## {table.subject}\n")
    print("| measure | unit | original | converted | converted / original |")
    print("| --- | --- | ---: | ---: | ---: |")
    for row in table.rows:
        ratio = f"{row.ratio:.2f}x" if row.ratio is not None else ""
        note = f" ({row.note})" if row.note else ""
        print(f"| {row.measure}{note} | {row.unit} | {_shown(row.original)} | {_shown(row.converted)} | {ratio} |")


def measure(subject: Subject, args: argparse.Namespace) -> Table:
    table = Table(subject.name)
    print(f"measuring {subject.name} ...", file=sys.stderr, flush=True)
    with load_twin(subject.before, subject.after, submodules=subject.submodules,
                   package=subject.package) as twin:
        twin.set_tp(0, 1)
        construction(table, twin, subject, args)
        loaders(table, twin, args)
        eager_ops(table, twin, args, "cpu")
        eager_ops_per_class(table, twin, subject, args, "cpu")
        if not args.skip_compile:
            compile_rows(table, twin, args, "cpu")
        if torch.cuda.is_available():
            eager_ops(table, twin, args, "cuda")
            eager_ops_per_class(table, twin, subject, args, "cuda")
            if not args.skip_compile:
                compile_rows(table, twin, args, "cuda")
    return table


def subjects(work: Path, args: argparse.Namespace) -> Iterator[Subject]:
    chosen = set(args.only or ("fixture", "0.6.4", "0.34"))
    if "fixture" in chosen:
        yield fixture_subject(work)
    if "0.6.4" in chosen:
        yield old_release_subject(work, vllm_sources(OLD_RELEASE, args.wheels, args.cache))
    if "0.34" in chosen:
        yield new_release_subject(work, vllm_sources(NEW_RELEASE, args.wheels, args.cache))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="interleaved rounds per measure (median)")
    parser.add_argument("--count", type=int, default=1000, help="constructions per round")
    parser.add_argument("--calls", type=int, default=300, help="calls per round (loaders, ops)")
    parser.add_argument("--backend", default="aot_eager", help="torch.compile backend")
    parser.add_argument("--skip-compile", action="store_true", help="leave out torch.compile")
    parser.add_argument("--only", action="append", choices=("fixture", "0.6.4", "0.34"),
                        help="measure only this subject (repeatable)")
    parser.add_argument("--wheels", type=Path, default=None,
                        help="a directory holding vllm-<version>-*.whl (else cache or download)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "codemod-bench",
                        help="where downloaded wheels and unpacked sources are kept")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="time CPU measures by this process's CPU time (default) or wall time")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (tiny tensors)")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    CLOCK[0] = time.process_time if args.clock == "cpu" else time.perf_counter
    warnings.filterwarnings("ignore")
    import logging

    logging.getLogger("vllm").setLevel(logging.ERROR)
    started = time.perf_counter()
    print("# engine cost: original vs converted parameters")
    print(f"\n{platform.platform()}, Python {platform.python_version()}, torch {torch.__version__}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.reps} interleaved rounds "
          f"(median), {args.count} constructions and {args.calls} calls per round, "
          f"compile backend {args.backend}, {args.clock} time, memory by tracemalloc (Python heap).")
    if not torch.cuda.is_available():
        print("CUDA: skipped (torch.cuda.is_available() is False).")
    with tempfile.TemporaryDirectory(prefix="codemod-engine-cost-") as scratch:
        for subject in subjects(Path(scratch), args):
            print_table(measure(subject, args))
    print(f"\n{time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.2f} at the end.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
