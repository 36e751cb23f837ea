"""Check ``screen_leftovers`` (CPython) against ``unconverted_uses`` (LibCST) on a tree,
and every file ``screen_file`` proves untouched against LibCST's conversion of it.

For the first plan of each setting (``allow-value-uses`` off and on, nothing refused
yet: the plan with the most converted classes, so the most mentions to classify) and
for the plan ``apply`` settles on, every candidate file is screened; where the screen
decides, its leftovers must equal LibCST's, entry for entry; where it proves a file
untouched (and ``conversion.only_use_sites`` holds), converting it must give its own
text. Prints how many files were decided, the time each path took, and every
disagreement; exits 1 if there is one. The
engine's LibCST path (scan and metadata per mentioning statement) is also compared with
a scan of the whole module.

Usage: ``.venv/bin/python scripts/verify_screen.py TREE [TREE...]`` (package directories).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from libcst.codemod import CodemodContext

from codemod import api
from codemod.pipeline import conversion, plan_rounds, reading, rewrite_reach
from codemod.planning.plan import build_plan
from codemod.transforms.leftover_screen import screen_file
from codemod.transforms.refs import FileRefs
from codemod.transforms.use_scanner import unconverted_uses
from codemod.transforms.use_sites import UseSiteTransformer
from codemod.types import Options


def _whole_module_leftovers(path: Path, text: str, plan) -> list:
    """``unconverted_uses`` the slow way: every statement visited and scanned, metadata
    of the whole module (what the engine computes per statement must equal it)."""
    ff = reading.parse_facts(path, text)[0]
    assert ff is not None
    uses = UseSiteTransformer(ff, plan, FileRefs(ff, plan, CodemodContext()))
    ff.module.visit(uses)
    return unconverted_uses(ff, plan, uses.handled)


def compare(tree: Path, allow_value_uses: bool) -> int:
    options = Options(jobs=1, allow_value_uses=allow_value_uses)
    result = api.read_tree([tree], options)
    index = api.analyse(result.sources, result)
    settled, _, _ = api.settle_plan(result, index, options, convert=False)
    first = build_plan(index, options.allow_classes, {}, allow_value_uses=allow_value_uses,
                       feature_prefix=options.feature_prefix)
    bad = 0
    for label, plan in (("first plan", first), ("settled plan", settled)):
        names = rewrite_reach.rewritable_names(plan)
        decided = undecided = untouched = 0
        fast = slow = 0.0
        for path in plan_rounds.rewrite_candidates(plan, result):
            text = result.sources[path].text
            start = time.perf_counter()
            screened, proven = screen_file(path, text, plan, rewrite_reach.class_spellings(plan))
            proven = proven and conversion.only_use_sites(path, text, plan)
            fast += time.perf_counter() - start
            start = time.perf_counter()
            ff = result.facts.get(path) or reading.parse_facts(path, text)[0]
            if ff is None:
                continue
            _, expected = conversion.convert_with_leftovers(ff, plan, stop_at_leftovers=False,
                                                            names=names, leftovers_only=True)
            slow += time.perf_counter() - start
            if proven:
                untouched += 1
                if api.convert_file(ff, plan).new_text != text:
                    bad += 1
                    print(f"DIFFER {path}: proven untouched, but LibCST's conversion changes it")
            whole = _whole_module_leftovers(path, text, plan)
            if whole != expected:
                bad += 1
                print(f"DIFFER (LibCST, per statement vs whole module) {path}\n"
                      f"  per statement: {expected}\n  whole: {whole}")
            if screened is None:
                undecided += 1
                continue
            decided += 1
            if screened != expected:
                bad += 1
                print(f"DIFFER {path}\n  screen: {screened}\n  libcst: {expected}")
        print(f"{tree} allow-value-uses={allow_value_uses} {label}: "
              f"{len(plan.converted())} converted; {decided} decided, {undecided} undecided, "
              f"{untouched} proven untouched; "
              f"screen {fast:.2f} s, LibCST {slow:.2f} s")
    return bad


def main(argv: list[str]) -> int:
    bad = sum(compare(Path(tree), allow) for tree in argv for allow in (False, True))
    print("OK" if not bad else f"{bad} disagreement(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
