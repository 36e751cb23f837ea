#!/usr/bin/env python3
"""Release check: convert the published vLLM 0.6.4.post1 tree and verify it.

Steps:

1. get the wheel: ``pip download --no-deps vllm==0.6.4.post1`` into a temporary
   directory, or the file given with ``--wheel``;
2. unpack only ``vllm/**/*.py`` from it;
3. convert copies of the whole ``vllm/`` tree, with the default configuration and with
   ``allow-value-uses = true`` (``scripts/whole_tree.py``: ``codemod apply`` through the
   CLI, a second ``apply`` changes nothing, ``scripts/verify_tree.py`` finds no class-only
   use and no unresolved import, ``codemod check`` reports only the kept classes);
4. ``codemod verify`` (``codemod/verify``) on the original tree and each conversion: every
   converted class built from the tree's own construction sites, every method at tp
   1/2/4 and every rank, compared bit for bit. No stub, table or file list is written
   here: the verifier finds the families and stubs the rest of vLLM itself.

Prints what it did and a summary (cases run, tensors compared, differences); exits 0
when everything is equivalent, 1 on any difference, 2 when it could not run. Needs torch
and the repository's ``.venv`` (``bash scripts/setup.sh test``); run from anywhere:

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codemod.verify.model import VerifyResult

REPO_ROOT = Path(__file__).resolve().parent.parent
VERSION = "0.6.4.post1"


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


def verify_conversion(original: Path, converted: Path, problems: list[str]) -> VerifyResult:
    """``codemod verify original converted``: print its table; each difference, and a run
    that verified nothing, goes to ``problems``. Returns the ``VerifyResult``."""
    from codemod.verify.render import as_table
    from codemod.verify.run import verify_trees

    result = verify_trees(original, converted)
    log(as_table(result))
    for difference in result.differences:
        problems.append(f"verify: {difference.cls}: {difference.detail}")
    for problem in result.import_problems:
        problems.append(f"verify: cannot import {problem.module} ({problem.side}): {problem.error}")
    if result.exit_code == 2:
        problems.append(f"verify: nothing could be verified {result.error}".rstrip())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="use this vllm wheel instead of downloading")
    parser.add_argument("--version", default=VERSION, help=f"vllm version to download ({VERSION})")
    parser.add_argument("--keep", type=Path, help="build the trees here and keep them")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(REPO_ROOT))
    if importlib.util.find_spec("torch") is None:
        log("torch is not installed: run `bash scripts/setup.sh test` and use .venv/bin/python")
        return 2
    from scripts.whole_tree import convert_whole_tree

    workdir = args.keep if args.keep else Path(tempfile.mkdtemp(prefix="codemod-release-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        wheel = args.wheel if args.wheel else fetch_wheel(workdir, args.version)
        log(f"wheel: {wheel}")
        sources = workdir / "sources"
        log(f"unpacked {unpack_sources(wheel, sources)} vllm/**/*.py files into {sources}")
        problems: list[str] = []
        totals = []
        for allow_value_uses in (False, True):
            config = "allow-value-uses" if allow_value_uses else "default"
            log(f"\n== the whole tree ({config})")
            whole = convert_whole_tree(sources / "vllm", workdir / f"whole-{config}", problems,
                                       allow_value_uses=allow_value_uses)
            log(f"\n== codemod verify ({config})")
            result = verify_conversion(sources / "vllm", whole.target, problems)
            totals.append(f"{config}: {result.cases} cases, {result.tensors} tensors, "
                          f"{len(result.differences)} differences")
        log("")
        log(f"release check of vllm {args.version}")
        for line in totals:
            log(f"verify, {line}")
        for problem in problems:
            log(f"problem: {problem}")
        log("PASS" if not problems else "FAIL")
        return 0 if not problems else 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
