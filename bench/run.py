"""Benchmark ``codemod check`` and ``codemod apply --dry-run`` on real vLLM trees.

Measured in the same run, on the same tree, as separate processes (so interpreter start
and imports count, as they do for a user):

* ``codemod check --no-cache TREE``, ``codemod check TREE`` answered from a warm result
  cache (filled by one untimed run), and ``codemod apply --dry-run TREE`` (``--jobs``
  default: the number of CPUs);
* the naive baseline: one process that parses every ``.py`` file with LibCST;
* ``ruff check --select F401 --no-cache --isolated TREE``: the linter a CI check stands
  beside;

each the median of several runs (interleaved, so that a burst of load on the machine
hits every tool alike), with the CPU time (user + system, workers included) and the peak
RSS of the process and its workers (``wait4``'s rusage), then the ratios the targets are
stated in. The load average before and after is printed: on a shared machine, wall
times grow with it (CPU times much less).

Usage (from the repository root)::

    .venv/bin/python bench/run.py                    # the default trees (see below)
    .venv/bin/python bench/run.py PATH/TO/vllm ...   # package directories
    .venv/bin/python bench/run.py --runs 3 --parse-runs 1 --jobs 2

Default trees: ``/tmp/vllm064/src/vllm`` (vLLM 0.6.4.post1) and ``/tmp/vllmnew/src/vllm``
(the newest release) when they exist; otherwise the wheels are fetched with ``pip
download --no-deps`` (``vllm==0.6.4.post1`` and the newest ``vllm``) into the cache
directory (``--cache``, default ``~/.cache/codemod-bench``) and their ``vllm/**/*.py``
unpacked there. ruff is taken from ``--ruff``, ``PATH`` or ``/tmp/ruffenv``; if none is
found, ``/tmp/ruffenv`` is created with ``pip install ruff``, and if that fails the ruff
column is skipped with a message. Not a unit test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_TREES = (Path("/tmp/vllm064/src/vllm"), Path("/tmp/vllmnew/src/vllm"))
OLD_RELEASE = "0.6.4.post1"
RUFF_VENV = Path("/tmp/ruffenv")
TARGETS = ("check <= 2x ruff (no cache), check <= 0.3 s with a warm cache, check >= 10x faster "
           "than a full parse, apply --dry-run < 3 s, RSS < 500 MB")

PARSE_EVERY_FILE = r"""
import os, sys
import libcst
parsed = failed = 0
for dirpath, dirnames, filenames in os.walk(sys.argv[1]):
    dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
    for name in filenames:
        if name.endswith(".py"):
            with open(os.path.join(dirpath, name), "rb") as handle:
                data = handle.read()
            try:
                libcst.parse_module(data)
                parsed += 1
            except Exception:
                failed += 1
print(parsed, failed)
"""


@dataclass
class Sample:
    """One timed run of one command."""

    wall: float
    cpu: float
    rss_mb: float
    code: int


@dataclass
class Tool:
    """A command measured on a tree, and its runs."""

    name: str
    argv: list[str]
    ok_codes: tuple[int, ...]
    samples: list[Sample] = field(default_factory=list)
    error: str = ""

    def median(self) -> float:
        return statistics.median(s.wall for s in self.samples)

    def peak_rss(self) -> float:
        return max(s.rss_mb for s in self.samples)


def run_once(argv: list[str], env: dict[str, str]) -> tuple[Sample, str]:
    """Run ``argv``; wall time and the peak RSS of it and its (waited-for) children."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()  # drained while it runs: a full pipe would stall it
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss: kilobytes on Linux, bytes on macOS.
    rss = usage.ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)
    cpu = usage.ru_utime + usage.ru_stime
    return Sample(wall, cpu, rss, proc.returncode), err.decode(errors="replace")


def measure(tool: Tool, runs: int, env: dict[str, str]) -> None:
    """Add ``runs`` samples to ``tool``; stop at the first run that fails."""
    for _ in range(runs):
        if tool.error:
            return
        sample, err = run_once(tool.argv, env)
        if sample.code not in tool.ok_codes:
            tail = " | ".join(err.strip().splitlines()[-3:])
            tool.error = f"exit {sample.code}: {tail}"[:300]
            return
        tool.samples.append(sample)


def find_ruff(explicit: str | None) -> str | None:
    """ruff from ``--ruff``, PATH or /tmp/ruffenv; else try to install it there."""
    if explicit:
        return explicit
    for candidate in (shutil.which("ruff"), RUFF_VENV / "bin" / "ruff"):
        if candidate and Path(candidate).exists():
            return str(candidate)
    print(f"ruff not found: installing it into {RUFF_VENV} ...", file=sys.stderr)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(RUFF_VENV)], check=True)
        subprocess.run([str(RUFF_VENV / "bin" / "pip"), "install", "-q", "ruff"], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"cannot install ruff ({exc}); the ruff column is skipped", file=sys.stderr)
        return None
    return str(RUFF_VENV / "bin" / "ruff")


def fetch_tree(cache: Path, requirement: str) -> Path:
    """Download the vLLM wheel for ``requirement`` and unpack its ``.py`` files."""
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    before = set(wheels.glob("vllm-*.whl"))
    pinned = "==" in requirement
    existing = [w for w in before if pinned and f"-{requirement.split('==')[1]}-" in w.name]
    if not existing:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "-d", str(wheels), requirement],
            check=True,
        )
        existing = sorted(set(wheels.glob("vllm-*.whl")) - before) or sorted(before)
    wheel = existing[-1] if pinned else max(existing, key=lambda w: w.stat().st_mtime)
    version = wheel.name.split("-")[1]
    root = cache / f"vllm-{version}" / "src"
    if not (root / "vllm" / "__init__.py").exists():
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.startswith("vllm/") and name.endswith(".py"):
                    archive.extract(name, root)
    return root / "vllm"


def python_files(tree: Path) -> list[Path]:
    return [p for p in tree.rglob("*.py") if "__pycache__" not in p.parts]


def version_of(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    except OSError:
        return "?"
    return out.strip().splitlines()[0] if out.strip() else "?"


def bench_tree(tree: Path, args: argparse.Namespace, ruff: str | None) -> None:
    files = python_files(tree)
    size = sum(p.stat().st_size for p in files)
    for path in files:  # warm the page cache: every tool reads the same bytes
        path.read_bytes()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # What the ``codemod`` console script runs: ``main_entry`` leaves with ``os._exit``
    # once the output is flushed, instead of freeing every tree at interpreter shutdown.
    codemod = [sys.executable, "-c", "from codemod.cli import main_entry; main_entry()"]
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    check = Tool("codemod check --no-cache", [*codemod, "check", "--no-cache", *jobs, str(tree)],
                 (0, 1))
    # The result cache of an unchanged tree (a second run in CI or pre-commit): filled by
    # one run before the timed ones, in a directory of its own.
    cache_dir = Path(tempfile.mkdtemp(prefix="codemod-bench-cache-"))
    warm = Tool("codemod check (warm cache)",
                [*codemod, "check", "--cache-dir", str(cache_dir), *jobs, str(tree)], (0, 1))
    run_once(warm.argv, env)
    apply = Tool("codemod apply --dry-run", [*codemod, "apply", "--dry-run", *jobs, str(tree)], (0, 1))
    tools = [check, warm, apply]
    ruff_tool = None
    if ruff is not None:
        ruff_tool = Tool("ruff check --select F401", [
            ruff, "check", "--select", "F401", "--no-cache", "--isolated", "--quiet", str(tree)
        ], (0, 1))
        tools.append(ruff_tool)
    parse = Tool("LibCST parse of every file", [sys.executable, "-c", PARSE_EVERY_FILE, str(tree)], (0,))

    load_before = os.getloadavg()
    for _ in range(args.runs):  # interleaved: load bursts hit every tool alike
        for tool in tools:
            measure(tool, 1, env)
    shutil.rmtree(cache_dir, ignore_errors=True)
    if not args.skip_parse:
        measure(parse, args.parse_runs, env)
        tools.append(parse)
    load_after = os.getloadavg()

    print(f"\n## {tree}  ({len(files)} files, {size / 1e6:.1f} MB)\n")
    print(f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} "
          f"on {os.cpu_count()} CPUs; codemod --jobs {args.jobs or 'default (CPUs)'}\n")
    print("| command | median wall (s) | min | max | median CPU (s) | runs | peak RSS (MB) | exit |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for tool in tools:
        if tool.error and not tool.samples:
            print(f"| {tool.name} | skipped: {tool.error} | | | | | | |")
            continue
        walls = [s.wall for s in tool.samples]
        cpu = statistics.median(s.cpu for s in tool.samples)
        print(f"| {tool.name} | {tool.median():.2f} | {min(walls):.2f} | {max(walls):.2f} | "
              f"{cpu:.2f} | {len(walls)} | {tool.peak_rss():.0f} | {tool.samples[-1].code} |")
    if ruff is None:
        print("| ruff check --select F401 | skipped: ruff not available | | | | | | |")

    print("\nratios (medians):\n")
    have = {t.name: t for t in tools if t.samples}

    def line(label: str, value: float | None, target: str, met: bool | None) -> None:
        shown = "n/a" if value is None else f"{value:.2f}"
        verdict = "n/a" if met is None else ("met" if met else "MISSED")
        print(f"- {label}: {shown} (target {target}): {verdict}")

    c, a, p = have.get(check.name), have.get(apply.name), have.get(parse.name)
    w = have.get(warm.name)
    r = have.get(ruff_tool.name) if ruff_tool else None
    ratio = c.median() / r.median() if c and r else None
    line("check / ruff (no cache)", ratio, "<= 2", None if ratio is None else ratio <= 2)
    cpu = (statistics.median(s.cpu for s in c.samples) / statistics.median(s.cpu for s in r.samples)
           if c and r else None)
    line("check / ruff CPU (no cache)", cpu, "(information)", None)
    line("check with a warm cache, wall (s)", w.median() if w else None, "<= 0.3",
         None if w is None else w.median() <= 0.3)
    ratio = p.median() / c.median() if p and c else None
    line("full parse / check", ratio, ">= 10", None if ratio is None else ratio >= 10)
    ratio = p.median() / a.median() if p and a else None
    line("full parse / apply --dry-run", ratio, "(information)", None)
    line("apply --dry-run wall (s)", a.median() if a else None, "< 3",
         None if a is None else a.median() < 3)
    peak = max((t.peak_rss() for t in (c, a) if t), default=None)
    line("codemod peak RSS (MB)", peak, "< 500", None if peak is None else peak < 500)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", type=Path, help="package directories (vllm/)")
    parser.add_argument("--runs", type=int, default=5, help="runs per command (median)")
    parser.add_argument("--parse-runs", type=int, default=1,
                        help="runs of the full LibCST parse (slow: default 1)")
    parser.add_argument("--skip-parse", action="store_true", help="skip the full parse")
    parser.add_argument("--jobs", type=int, default=None, help="codemod --jobs (default: CPUs)")
    parser.add_argument("--ruff", default=None, help="the ruff executable")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "codemod-bench",
                        help="where downloaded trees are kept")
    args = parser.parse_args()

    trees = list(args.trees)
    if not trees:
        trees = [t for t in DEFAULT_TREES if (t / "__init__.py").exists()]
        if len(trees) < len(DEFAULT_TREES):
            trees = [fetch_tree(args.cache, f"vllm=={OLD_RELEASE}"), fetch_tree(args.cache, "vllm")]
    ruff = find_ruff(args.ruff)

    print("# codemod benchmark")
    print(f"\n{platform.platform()}, Python {platform.python_version()}, "
          f"libcst {_libcst_version()}, {version_of([ruff, '--version']) if ruff else 'no ruff'}; "
          f"{args.runs} runs per command, {args.parse_runs} of the full parse")
    print(f"targets: {TARGETS}")
    for tree in trees:
        bench_tree(tree.resolve() if not tree.is_absolute() else tree, args, ruff)
    return 0


def _libcst_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libcst")
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
