"""In which order ``apply`` replaces the files it changed.

What it does
    ``write_order`` puts the files that use converted classes first, then the modules
    that define Parameter classes, each after every module defining one of its
    subclasses (a module before the modules of its classes' bases); ties and cycles go by
    path.
Why
    A run killed while it replaces files, then started again, must end as an
    uninterrupted run. The second run sees only what is still a class: as long as the
    module defining a class is unconverted, every module using or subclassing it is
    converted again (or recognised as converted). Replacing a base's module before its
    subclass's module would leave the subclass deriving from a function the rerun no
    longer knows as a Parameter class.
Fix safety
    Only the order changes; the set of files and their texts are the same.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from pathlib import Path

from codemod.planning.plan import Plan


def write_order(paths: Sequence[Path], plan: Plan | None) -> list[Path]:
    """``paths`` ordered for replacing: users, then defining modules, subclasses first."""
    classes = plan.classes if plan is not None else {}
    defining = {p.facts.path for p in classes.values()}
    users = sorted((p for p in paths if p not in defining), key=str)
    modules = [p for p in paths if p in defining]
    # after[m]: the modules to replace after m (those defining bases of its classes).
    after: dict[Path, set[Path]] = {m: set() for m in modules}
    waiting: dict[Path, int] = {m: 0 for m in modules}
    for cp in classes.values():
        here = cp.facts.path
        if here not in after:
            continue
        for base in cp.mro[1:]:
            there = classes[base].facts.path if base in classes else None
            if there in waiting and there != here and there not in after[here]:
                after[here].add(there)
                waiting[there] += 1
    ready = [(str(m), m) for m in modules if waiting[m] == 0]
    heapq.heapify(ready)
    ordered: list[Path] = []
    while ready:
        _, module = heapq.heappop(ready)
        ordered.append(module)
        for later in sorted(after[module], key=str):
            waiting[later] -= 1
            if waiting[later] == 0:
                heapq.heappush(ready, (str(later), later))
    cyclic = sorted((m for m in modules if m not in ordered), key=str)
    return users + ordered + cyclic
