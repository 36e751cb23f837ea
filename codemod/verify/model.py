"""What a verification found, as plain dataclasses a report can serialise (``to_dict``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Exit codes: as ``apply`` and ``check`` (0 clean, 1 differences, 2 nothing verifiable).
EXIT_SAME, EXIT_DIFFERENT, EXIT_UNUSABLE = 0, 1, 2


@dataclass
class Difference:
    """One place where the converted tree answered otherwise than the original."""

    #: The former class whose parameter was compared.
    cls: str
    #: The case: section and what was run (``load_column_parallel_weight tp 1/2 #3``).
    case: str
    #: What differed, original vs converted.
    detail: str


@dataclass
class ClassResult:
    """The counts for one class of a converted family."""

    name: str
    module: str
    #: ``converted`` (now a factory), ``shadow`` (kept class with a wrap) or ``kept``.
    status: str
    #: Constructions that ran: ``site`` (harvested from the tree) or ``synthesized``.
    builds: int = 0
    build_origin: str = ""
    cases: int = 0
    tensors: int = 0
    #: Method calls where the original raised (type and message were compared).
    raised: int = 0
    differences: list[Difference] = field(default_factory=list)
    #: Harmless differences the documentation promises (``deepcopy`` now works).
    documented: list[str] = field(default_factory=list)


@dataclass
class ImportProblem:
    """A module that could not be imported, even with the rest of the engine stubbed."""

    module: str
    side: str
    error: str


@dataclass
class VerifyResult:
    """Everything ``verify`` found for one pair of trees."""

    original: str
    converted: str
    classes: list[ClassResult] = field(default_factory=list)
    import_problems: list[ImportProblem] = field(default_factory=list)
    #: Modules of the tree imported for real (the families', the runtime modules, and what
    #: the families import directly), and those replaced by stubs.
    real_modules: list[str] = field(default_factory=list)
    stubbed_modules: list[str] = field(default_factory=list)
    tp_sizes: tuple[int, ...] = (1, 2, 4)
    #: The tree's rewritten class checks and type comparisons asked of the built
    #: parameters (``where``), and those that could not be paired or driven, with the
    #: reason.
    check_sites: list[str] = field(default_factory=list)
    check_sites_skipped: list[str] = field(default_factory=list)
    #: The family modules' functions taking a parameter that were called (``module.name``).
    functions: list[str] = field(default_factory=list)
    #: Functions elsewhere in the tree the conversion put runtime calls into (a
    #: ``__dict__`` copy followed by ``rebind_param_methods``), called on every parameter;
    #: and those whose module could not be imported.
    rewritten_functions: list[str] = field(default_factory=list)
    rewritten_functions_skipped: list[str] = field(default_factory=list)
    #: ``--compile``: what torch.compile(fullgraph=True) of each class's loader gave.
    compiled: bool = False
    seconds: float = 0.0
    #: Why nothing could be verified (usage problems), if so.
    error: str = ""

    @property
    def cases(self) -> int:
        return sum(result.cases for result in self.classes)

    @property
    def tensors(self) -> int:
        return sum(result.tensors for result in self.classes)

    @property
    def differences(self) -> list[Difference]:
        return [diff for result in self.classes for diff in result.differences]

    @property
    def exit_code(self) -> int:
        """0: every case agreed; 1: a difference, or a module that imports in the original
        tree but not in the converted one; 2: nothing could be verified."""
        if self.error or not any(result.builds for result in self.classes):
            return EXIT_UNUSABLE
        if self.differences or any(p.side == "converted" for p in self.import_problems):
            return EXIT_DIFFERENT
        return EXIT_SAME

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, plus the totals and the exit code."""
        data = asdict(self)
        data.update(cases=self.cases, tensors=self.tensors,
                    difference_count=len(self.differences), exit_code=self.exit_code)
        return data
