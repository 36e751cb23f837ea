#!/usr/bin/env python3
"""Convert a copy of a whole engine tree as a user would, and check what it left.

    python scripts/whole_tree.py PACKAGE_DIR [--allow-value-uses] [--keep DIR]

PACKAGE_DIR is an engine's top package (``vllm/``, ``sglang/``, ``aphrodite/``), e.g.
unpacked from a wheel (``pip download --no-deps vllm==VERSION``; a wheel is a zip). The
directory is copied, ``[tool.codemod]`` is written above the copy (``allow-value-uses``
when asked), and then, each through the CLI in a fresh process:

1. ``codemod apply`` on the copy: the files changed, the classes converted and the
   refusals it printed (its exit code must be 0 or 1);
2. a second ``apply`` must change nothing;
3. ``scripts/verify_tree.py`` (independent of the tool) on the original and the copy:
   no class-only use of a converted name anywhere, every added import resolves in the
   tree, every changed file compiles;
4. ``codemod check`` on the copy may report only the classes ``apply`` kept (CM001).

Exits 0 when all of it holds, 1 when something does not (each problem printed), 2 when
it could not run. The release checks (``release_check.py``, ``release_check_latest.py``)
run this on the whole vLLM tree, with and without ``allow-value-uses``.
"""

from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

CODEMOD = [sys.executable, "-c", "import sys; from codemod.cli import main; sys.exit(main(sys.argv[1:]))"]
SUMMARY = re.compile(
    r"changed (?P<changed>\d+) file\(s\) of (?P<scanned>\d+) scanned \(\d+ parsed\)"
    r"(?: and added (?P<added>\d+) runtime module\(s\))?(?:; converted (?P<converted>\d+) class\(es\))?(?: \[(?P<rewrites>[^\]]*)\])?"
)
REFUSAL = re.compile(r"^\s+(?P<where>\S+:\d+): (?P<cls>\w+): (?P<reason>.*)$")


def log(message: str) -> None:
    print(message, flush=True)


@dataclass
class Run:
    """One run of the codemod CLI: exit code, output and wall time."""

    rc: int
    stdout: str
    stderr: str
    seconds: float


def codemod(*args: str) -> Run:
    """``codemod ARGS...`` as a user runs it (a fresh process, the repository's code)."""
    start = time.perf_counter()
    proc = subprocess.run([*CODEMOD, *args], capture_output=True, text=True, cwd=REPO_ROOT)
    return Run(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start)


@dataclass
class ApplySummary:
    """What ``codemod apply`` said on stderr: counts and refusals (class, where, why)."""

    changed: int | None = None
    scanned: int | None = None
    converted: int | None = None
    rewrites: str = ""
    refusals: list[tuple[str, str, str]] = field(default_factory=list)


def parse_apply_summary(stderr: str) -> ApplySummary:
    """Read the summary line and the refusal lines of ``codemod apply``'s stderr."""
    summary = ApplySummary()
    match = SUMMARY.search(stderr)
    if match:
        # The runtime modules ``apply`` adds are files that differ too.
        summary.changed = int(match["changed"]) + int(match["added"] or 0)
        summary.scanned = int(match["scanned"])
        summary.converted = int(match["converted"] or 0)
        summary.rewrites = match["rewrites"] or ""
    in_refusals = False
    for line in stderr.splitlines():
        if line.startswith("refused "):
            in_refusals = True
            continue
        found = REFUSAL.match(line) if in_refusals else None
        if found:
            summary.refusals.append((found["cls"], found["where"], found["reason"]))
        elif in_refusals and not line.startswith(" "):
            in_refusals = False
    return summary


def second_run_is_no_op(rc: int, summary: ApplySummary) -> bool:
    """Whether a second ``apply`` changed nothing: exit 0, or exit 1 only because the
    classes the first run kept are refused again (its summary says 0 files changed)."""
    if rc == 0:
        return True
    return rc == 1 and summary.changed == 0 and bool(summary.refusals)


def changed_files(before: Path, after: Path) -> list[str]:
    """Relative paths of the ``*.py`` files whose bytes differ (or that exist on one side)."""
    names = {p.relative_to(before).as_posix() for p in before.rglob("*.py")}
    names |= {p.relative_to(after).as_posix() for p in after.rglob("*.py")}
    return sorted(
        name for name in names
        if not (before / name).is_file() or not (after / name).is_file()
        or not filecmp.cmp(before / name, after / name, shallow=False)
    )


def expected_after_apply(finding: str, kept: set[str]) -> bool:
    """Whether a ``codemod check`` finding on the converted tree is expected: only CM001
    on a class that ``apply`` reported as kept; anything else is work ``apply`` left."""
    match = re.search(r": (CM\d+) `(\w+)`", finding)
    return bool(match) and match[1] == "CM001" and match[2] in kept


@dataclass
class WholeTree:
    """What converting one whole tree gave: where the copy is, and the counts."""

    target: Path
    converted: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    class_only_uses: int = 0
    added_imports: int = 0


def convert_whole_tree(original: Path, root: Path, problems: list[str], *,
                       allow_value_uses: bool, say: Callable[[str], None] = log) -> WholeTree:
    """Copy the package directory ``original`` to ``root/<name>``, configure it, convert
    it with the CLI and check the result (module docstring, steps 1-4). Every problem is
    appended to ``problems``, prefixed with the configuration it came from."""
    from scripts.verify_tree import verify

    config = "allow-value-uses" if allow_value_uses else "default"
    target = root / original.name
    shutil.copytree(original, target, symlinks=True)
    (root / "pyproject.toml").write_text(
        "[tool.codemod]\n" + ("allow-value-uses = true\n" if allow_value_uses else ""))

    say(f"codemod apply ({config}) on {target}")
    first = codemod("apply", str(target))
    summary = parse_apply_summary(first.stderr)
    result = WholeTree(target, changed=changed_files(original, target))
    say(f"exit code {first.rc} in {first.seconds:.1f} s")
    for line in first.stderr.strip().splitlines():
        say(f"  | {line}")
    say(f"files changed ({len(result.changed)}):")
    for name in result.changed:
        say(f"  {name}")
    if first.rc not in (0, 1):
        problems.append(f"{config}: codemod apply exited {first.rc}")
    if summary.changed is not None and summary.changed != len(result.changed):
        problems.append(f"{config}: apply reported {summary.changed} changed files, "
                        f"{len(result.changed)} differ")

    second = codemod("apply", str(target))
    again = changed_files(original, target)
    say(f"second apply: exit code {second.rc} in {second.seconds:.1f} s; "
        f"{'nothing changed' if again == result.changed else 'CHANGED FILES'}")
    if again != result.changed or not second_run_is_no_op(second.rc, parse_apply_summary(second.stderr)):
        first_line = (second.stderr.strip().splitlines() or [""])[0]
        problems.append(f"{config}: a second apply is not a no-op (exit {second.rc}): {first_line}")

    start = time.perf_counter()
    verified = verify(original, target)
    result.converted = sorted(name.rsplit(".", 1)[1] for name in verified.converted)
    result.refused = [cls for cls, _, _ in summary.refusals]
    result.class_only_uses = len(verified.class_only_uses)
    result.added_imports = verified.added_imports
    kinds = Counter(use.kind for use in verified.uses)
    say(f"classes converted ({len(result.converted)}): {', '.join(result.converted)}")
    say(f"classes kept (refused) ({len(result.refused)}): {', '.join(result.refused)}")
    if summary.converted is not None and summary.converted != len(result.converted):
        problems.append(f"{config}: apply reported {summary.converted} classes converted, "
                        f"{len(result.converted)} found in the output")
    say(f"scripts/verify_tree.py in {time.perf_counter() - start:.1f} s: "
        f"{len(verified.converted)} converted, uses besides calls and imports "
        f"{dict(sorted(kinds.items()))}, {len(verified.class_only_uses)} class-only use(s) left, "
        f"{verified.added_imports} added import(s) ({len(verified.import_problems)} unresolved), "
        f"{len(verified.changed)} changed file(s) ({len(verified.compile_problems)} do not compile)")
    if not verified.ok:
        problems.append(f"{config}: scripts/verify_tree.py found problems:\n"
                        + "\n".join(f"    {line}" for line in verified.problems))

    check = codemod("check", str(target))
    findings = [line for line in check.stdout.splitlines() if re.search(r":\d+:\d+: CM\d+", line)]
    say(f"codemod check on the result: exit code {check.rc} in {check.seconds:.1f} s, "
        f"{len(findings)} finding(s)")
    kept = set(result.refused)
    for line in findings:
        say(f"  | {line}")
        if not expected_after_apply(line, kept):
            short = line.replace(f"{target}/", "")
            problems.append(f"{config}: left for `codemod check` to find: {short[:150]}...")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", type=Path, help="the engine's top package directory")
    parser.add_argument("--allow-value-uses", action="store_true",
                        help="convert with [tool.codemod] allow-value-uses = true")
    parser.add_argument("--keep", type=Path, help="make the copy here and keep it")
    args = parser.parse_args(argv)
    original = args.package.resolve()
    if not original.is_dir():
        log(f"{args.package}: not a directory")
        return 2
    workdir = args.keep if args.keep else Path(tempfile.mkdtemp(prefix="codemod-whole-tree-"))
    workdir.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    try:
        convert_whole_tree(original, workdir, problems, allow_value_uses=args.allow_value_uses)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    for problem in problems:
        log(f"PROBLEM {problem}")
    log("PASS" if not problems else f"FAIL ({len(problems)} problem(s))")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
