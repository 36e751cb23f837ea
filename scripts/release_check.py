#!/usr/bin/env python3
"""Release check: convert the published vLLM 0.6.4.post1 ``parameter.py`` and compare.

Steps:

1. get the wheel: ``pip download --no-deps vllm==0.6.4.post1`` into a temporary
   directory, or the file given with ``--wheel``;
2. unpack only ``vllm/**/*.py`` from it;
3. build a package tree holding ``vllm/model_executor/parameter.py`` exactly as published,
   with stubs for the two things it imports: ``vllm.distributed`` (tensor-parallel rank
   and size, settable) and ``vllm.logger``;
4. copy that tree and run ``codemod apply`` on the copy (exit code 1 expected: changes),
   then ``scripts/verify_tree.py --import`` on it (no class-only use left, every added
   import executes, every changed file compiles);
5. import the original and the converted tree side by side (``tests/behaviour/twin.py``)
   and run the equivalence battery (``tests/behaviour/battery.py``, which uses the tables
   of ``tests/behaviour/scenarios.py``) on them;
6. convert copies of the whole ``vllm/`` tree, with the default configuration and with
   ``allow-value-uses = true`` (``scripts/whole_tree.py``: a second ``apply`` changes
   nothing, ``scripts/verify_tree.py`` finds no class-only use and no unresolved import,
   ``codemod check`` reports only the kept classes).

Prints what it did and a summary (cases run, tensors compared, failures); exits 0 when
everything is equivalent, 1 on any difference, 2 when it could not run. Needs torch and
the repository's ``.venv`` (``bash scripts/setup.sh test``); run from anywhere:

    .venv/bin/python scripts/release_check.py                      # downloads the wheel
    .venv/bin/python scripts/release_check.py --wheel vllm-0.6.4.post1-*.whl
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
VERSION = "0.6.4.post1"
PARAMETER = "vllm/model_executor/parameter.py"
#: The family's runtime module, which ``apply`` adds beside the root module.
RUNTIME_MODULE = "vllm/model_executor/parameter_features.py"

STUB_DISTRIBUTED = '''"""Stub of vllm.distributed for the release check: a settable tensor-parallel position."""

_TP_RANK = 0
_TP_SIZE = 1


def set_tensor_parallel(rank: int, size: int) -> None:
    global _TP_RANK, _TP_SIZE
    if size < 1 or not 0 <= rank < size:
        raise ValueError(f"invalid tensor-parallel position: rank {rank} of {size}")
    _TP_RANK, _TP_SIZE = rank, size


def get_tensor_model_parallel_rank() -> int:
    return _TP_RANK


def get_tensor_model_parallel_world_size() -> int:
    return _TP_SIZE
'''

STUB_LOGGER = '''"""Stub of vllm.logger for the release check."""

import logging


def init_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)
'''


def log(message: str) -> None:
    print(message, flush=True)


def fetch_wheel(workdir: Path, version: str) -> Path:
    """``pip download --no-deps vllm==<version>`` into ``workdir``; the wheel's path."""
    target = workdir / "download"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", f"vllm=={version}",
               "-d", str(target)]
    log("$ " + " ".join(command))
    subprocess.run(command, check=True)
    wheels = sorted(target.glob("vllm-*.whl"))
    if not wheels:
        raise SystemExit(f"pip download produced no wheel in {target}")
    return wheels[0]


def unpack_sources(wheel: Path, destination: Path) -> int:
    """Extract only ``vllm/**/*.py`` from ``wheel``; the number of files."""
    count = 0
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("vllm/") and name.endswith(".py"):
                archive.extract(name, destination)
                count += 1
    return count


def build_tree(sources: Path, root: Path) -> None:
    """``root/vllm``: the published parameter.py, its package files, the two stubs."""
    package = root / "vllm"
    (package / "model_executor").mkdir(parents=True)
    (package / "distributed").mkdir()
    (package / "__init__.py").write_text('"""vllm, reduced to parameter.py for the release check."""\n')
    (package / "model_executor" / "__init__.py").write_text("")
    shutil.copy2(sources / PARAMETER, root / PARAMETER)
    (package / "distributed" / "__init__.py").write_text(STUB_DISTRIBUTED)
    (package / "logger.py").write_text(STUB_LOGGER)


def convert(tree: Path) -> int:
    """``codemod apply tree`` in this process; its exit code."""
    from codemod.cli import main

    log(f"$ codemod apply {tree}")
    try:
        return main(["apply", str(tree)])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="use this vllm wheel instead of downloading")
    parser.add_argument("--version", default=VERSION, help=f"vllm version to download ({VERSION})")
    parser.add_argument("--keep", type=Path, help="build the trees here and keep them")
    parser.add_argument("--compile-backend", default="aot_eager",
                        help="torch.compile backend for the compile case ('none' to skip)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(REPO_ROOT))
    if importlib.util.find_spec("torch") is None:
        log("torch is not installed: run `bash scripts/setup.sh test` and use .venv/bin/python")
        return 2
    from tests.behaviour.battery import run_battery
    from tests.behaviour.twin import copy_tree, load_twin, snapshot

    workdir = args.keep if args.keep else Path(tempfile.mkdtemp(prefix="codemod-release-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        wheel = args.wheel if args.wheel else fetch_wheel(workdir, args.version)
        log(f"wheel: {wheel}")
        sources = workdir / "sources"
        log(f"unpacked {unpack_sources(wheel, sources)} vllm/**/*.py files into {sources}")
        before, after = workdir / "before", workdir / "after"
        build_tree(sources, before)
        copy_tree(before, after)
        rc = convert(after)
        if rc != 1:
            log(f"FAIL: codemod apply exited {rc}, expected 1 (changes made)")
            return 1
        changed = sorted(
            name for name, text in snapshot(after).items() if snapshot(before).get(name) != text
        )
        log(f"rewritten: {', '.join(changed)}")
        if changed != [PARAMETER, RUNTIME_MODULE]:
            log(f"FAIL: expected exactly {PARAMETER} to change and {RUNTIME_MODULE} to be added")
            return 1
        again = convert(after)
        if again != 0:
            log(f"FAIL: a second codemod apply exited {again}, expected 0 (idempotent)")
            return 1
        from scripts.verify_tree import verify

        verified = verify(before, after, run_imports=True)
        log(f"scripts/verify_tree.py --import: {len(verified.converted)} converted, "
            f"{len(verified.class_only_uses)} class-only use(s) left, {verified.added_imports} "
            f"added import(s), {len(verified.changed)} changed file(s)")
        if not verified.ok:
            log("FAIL: scripts/verify_tree.py found problems:\n  " + "\n  ".join(verified.problems))
            return 1

        backend = None if args.compile_backend == "none" else args.compile_backend
        with load_twin(before, after, submodules=("vllm.distributed", "vllm.model_executor.parameter"),
                       package="vllm") as twin:
            report = run_battery(twin, compile_backend=backend)
        from scripts.whole_tree import convert_whole_tree

        problems: list[str] = []
        for allow_value_uses in (False, True):
            config = "allow-value-uses" if allow_value_uses else "default"
            log(f"\n== the whole tree ({config})")
            convert_whole_tree(sources / "vllm", workdir / f"whole-{config}", problems,
                               allow_value_uses=allow_value_uses)
        log("")
        log(f"release check of vllm {args.version} model_executor/parameter.py")
        log(report.summary())
        for problem in problems:
            log(f"whole tree: {problem}")
        ok = report.ok and not problems
        log("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
