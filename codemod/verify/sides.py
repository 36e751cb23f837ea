"""The two trees as the cases see them: each tree's imported family (``Side``), what every
case of a family needs (``Family``), a family function as each tree defines it
(``SideFunctions``) and the tensor-parallel positions a call runs at (``tp_grid``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from codemod.verify.check_sites import DrivenSite
from codemod.verify.families import FamilyClass
from codemod.verify.functions import ParamFunction
from codemod.verify.importer import TreeImport
from codemod.verify.stubs import TensorParallel

#: What running something gave: (value, None) or (None, the exception it raised).
Outcome = tuple[Any, BaseException | None]


@dataclass
class Side:
    """One tree's view of the family: its import, classes (or factories), runtimes."""

    tree: TreeImport
    classes: dict[str, Any]
    runtimes: dict[str, Any]

    def run(self, action: Callable[[], Any]) -> Outcome:
        """``action()`` with this copy active: (value, None) or (None, exception)."""
        with self.tree.active():
            try:
                return action(), None
            except Exception as exc:  # noqa: BLE001 - an outcome to compare
                return None, exc


@dataclass
class Family:
    """What every case needs: both sides, the family's classes, tp sizes, the harvest."""

    before: Side
    after: Side
    members: list[FamilyClass]
    position: TensorParallel
    tp_sizes: tuple[int, ...]
    method_keywords: dict[str, set[tuple[str, ...]]]
    #: The family modules' functions taking a parameter, with each tree's function object.
    functions: list[SideFunctions] = field(default_factory=list)
    #: The tree's rewritten class checks outside the family modules.
    check_sites: list[DrivenSite] = field(default_factory=list)
    #: ``--compile``: each class's loader compiled with ``torch.compile(fullgraph=True)``.
    compile_loaders: bool = False
    #: Functions elsewhere the conversion put runtime calls into (``rewritten_functions``).
    rewritten: list[SideFunctions] = field(default_factory=list)
    #: (original, converted) of the first parameter each class built so far, and plain
    #: objects: the second objects of the comparisons of two objects' types.
    others: list[tuple[str, Any, Any]] = field(default_factory=list)


@dataclass
class SideFunctions:
    """One module-level function of the family, as each tree defines it."""

    function: ParamFunction
    original: Any
    converted: Any
    #: The original class the function's parameter is annotated with.
    admits: type


def tp_grid(sizes: tuple[int, ...]) -> Iterator[tuple[int, int]]:
    """Every (rank, size) of the tensor-parallel group sizes ``sizes``."""
    for size in sizes:
        for rank in range(size):
            yield rank, size
