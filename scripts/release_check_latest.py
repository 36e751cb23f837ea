#!/usr/bin/env python3
"""Release check on the newest vLLM: convert the whole tree, then ``codemod verify --compile``.

Steps:

1. get the wheel (``pip download --no-deps vllm==0.34.0``, or ``--wheel PATH``) and
   unpack only ``vllm/**/*.py``;
2. with the default configuration (no ``[tool.codemod]`` table), copy the whole ``vllm/``
   tree and convert it as a user would (``scripts/whole_tree.py``: ``codemod apply``
   through the CLI, the files changed, the classes converted and kept; a second ``apply``
   changes nothing; ``scripts/verify_tree.py`` finds no class-only use left, every added
   import resolving and every changed file compiling; ``codemod check`` reports only the
   kept classes);
3. ``codemod verify --compile`` (``codemod/verify``) on the original and the conversion:
   every class built and every method, the family modules' functions taking a parameter,
   the tree's functions that copy a parameter onto another tensor (``reload/meta.py``) and
   every rewritten class check of the tree, at tp 1/2/4, each loader compiled as one
   graph. No stubs, tables or probe of this script.

What stays here is release-specific, and only a floor on what ``verify`` reached, so that
a verifier that silently covers less on this release fails the check: this release's
``permute_param_layout_`` must have been called, the ``reload/`` functions that copy a
parameter onto a meta tensor and back (``to_meta_tensor``, ``materialize_meta_tensor``)
called on every parameter, and its rewritten class checks in ``layers/linear.py`` and in
the mixed-precision kernels (outside the family modules) asked of every parameter. The
floor names files of vLLM 0.34 (hence this script, beside the generic
``release_check.py``); ``verify`` itself knows nothing of them.

Not covered any more (the former hand-wired battery drove them with stubs written for
this release): the layerwise reload and online-quantization flows end to end (they take
layers and a model, not a parameter), ``SharedWeightParameter`` end to end and
``KVCacheScaleParameter``'s ``BaseKVCacheMethod``.

Prints ``verify``'s table and a summary and exits 0 when everything agrees, 1 on any
difference or pipeline problem, 2 when it could not run. Needs torch and the repository's
``.venv`` (``bash scripts/setup.sh test``):

    .venv/bin/python scripts/release_check_latest.py                     # downloads the wheel
    .venv/bin/python scripts/release_check_latest.py --wheel vllm-0.34.0-*.whl
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from scripts.release_check import (  # noqa: E402 - after the sys.path entry
    fetch_wheel,
    log,
    unpack_sources,
    verify_conversion,
)
from scripts.whole_tree import convert_whole_tree  # noqa: E402

VERSION = "0.34.0"
#: What ``verify`` must reach on this release (see the module docstring).
FUNCTIONS_CALLED = ("vllm.model_executor.parameter.permute_param_layout_",)
COPYING_FUNCTIONS_CALLED = (
    "vllm.model_executor.model_loader.reload.meta.to_meta_tensor",
    "vllm.model_executor.model_loader.reload.meta.materialize_meta_tensor",
)
CHECK_SITES_IN = (
    "vllm/model_executor/layers/linear.py",
    "vllm/model_executor/kernels/linear/mixed_precision/",
)


def coverage_problems(functions: list[str], check_sites: list[str],
                      copying_functions: list[str] | None = None) -> list[str]:
    """Where ``verify`` reached less of this release than the floor above."""
    problems = [f"verify did not call {name}" for name in FUNCTIONS_CALLED
                if name not in functions]
    if copying_functions is not None:
        problems += [f"verify did not call {name}" for name in COPYING_FUNCTIONS_CALLED
                     if name not in copying_functions]
    problems += [f"verify asked no rewritten class check in {where}" for where in CHECK_SITES_IN
                 if not any(site.startswith(where) for site in check_sites)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="use this vllm wheel instead of downloading")
    parser.add_argument("--version", default=VERSION, help=f"vllm version to download ({VERSION})")
    parser.add_argument("--keep", type=Path, help="build the trees here and keep them")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip verify's torch.compile cases")
    args = parser.parse_args(argv)

    if importlib.util.find_spec("torch") is None:
        log("torch is not installed: run `bash scripts/setup.sh test` and use .venv/bin/python")
        return 2

    workdir = args.keep if args.keep else Path(tempfile.mkdtemp(prefix="codemod-release-latest-"))
    workdir.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    started = time.perf_counter()
    try:
        log(f"== step 1: vllm {args.version} sources")
        wheel = args.wheel if args.wheel else fetch_wheel(workdir, args.version)
        log(f"wheel: {wheel}")
        sources = workdir / "sources"
        log(f"unpacked {unpack_sources(wheel, sources)} vllm/**/*.py files into {sources}")

        log("\n== step 2 (default configuration): codemod apply on a copy of the whole tree")
        whole = convert_whole_tree(sources / "vllm", workdir / "whole-default", problems,
                                   allow_value_uses=False).target
        log("\n== step 3: codemod verify" + ("" if args.no_compile else " --compile")
            + " on the original and the whole-tree conversion")
        verified = verify_conversion(sources / "vllm", whole, problems,
                                     compile_loaders=not args.no_compile)
        problems += coverage_problems(verified.functions, verified.check_sites,
                                      verified.rewritten_functions)

        log("")
        log(f"release check of vllm {args.version} ({time.perf_counter() - started:.0f} s)")
        log(f"codemod verify: {verified.cases} cases, {verified.tensors} tensors, "
            f"{len(verified.differences)} differences; {len(verified.check_sites)} rewritten "
            f"checks and type comparisons asked ({len(verified.check_sites_skipped)} left out), "
            f"functions "
            f"called: {', '.join(verified.functions) or 'none'}; functions copying a "
            f"parameter called: {len(verified.rewritten_functions)}")
        if problems:
            log(f"problems: {len(problems)}")
            for problem in problems:
                log(f"  {problem}")
        ok = not problems and verified.exit_code == 0
        log("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
