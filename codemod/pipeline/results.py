"""The values a run fills stage by stage: ``RunResult`` (per-file results, the plan,
what was read and parsed), the ``Progress`` callback, and ``Mentions`` (which names
each file mentions, asked once per file and name)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from codemod.analysis.classes import FileFacts
from codemod.analysis.nested_classes import NestedClass
from codemod.fileio import SourceFile
from codemod.planning.plan import Plan
from codemod.prefilters import mentioned
from codemod.scope import Scope
from codemod.types import FileResult, Outcome, Refusal

#: ``progress(stage, done, total)``: called by ``run`` as files are parsed ("parse") and
#: converted ("convert"), so that a front end can show a progress bar.
Progress = Callable[[str, int, int], None]


@dataclass
class RunResult:
    """Everything one run found: per-file results, the plan, errors, counts."""

    files: list[FileResult] = field(default_factory=list)
    plan: Plan | None = None
    sources: dict[Path, SourceFile] = field(default_factory=dict)
    facts: dict[Path, FileFacts] = field(default_factory=dict)
    scanned: int = 0
    parsed: int = 0
    #: Files parsed by conversion workers (not kept in ``facts``).
    parsed_elsewhere: set[Path] = field(default_factory=set)
    #: Which names each file mentions, so that no file is scanned twice for a name.
    mentions: Mentions = field(default_factory=lambda: Mentions())
    #: Files whose bytes do not decode, until the plan says whether they can matter:
    #: path -> (error, text with the bad bytes replaced).
    undecodable: dict[Path, tuple[str, str]] = field(default_factory=dict)
    #: Files skipped without failing the run, as messages.
    warnings: list[str] = field(default_factory=list)
    #: The trees read for the given paths, and those paths when narrower (``scope``).
    scope: Scope | None = None
    #: Parameter classes below a module's top level, which ``apply`` keeps as classes
    #: (found by the index stage: ``nested_parameters``), with their files.
    nested_classes: list[tuple[Path, NestedClass]] = field(default_factory=list)
    #: A second module name of a file read once (a symlinked directory or file inside the
    #: tree: ``pk.legacy.params``) -> the name the run gives it (``pk.sub.params``).
    module_aliases: dict[str, str] = field(default_factory=dict)

    @property
    def refusals(self) -> list[Refusal]:
        """Refused classes (and unconvertible sites) over the whole tree."""
        return self.plan.refusals() if self.plan is not None else []

    def changed(self) -> list[FileResult]:
        """Files whose text changes."""
        return [f for f in self.files if f.outcome is Outcome.CHANGED]

    def failed(self) -> list[FileResult]:
        """Files that could not be read, parsed or converted."""
        return [f for f in self.files if f.outcome is Outcome.FAILED]

    def counts(self) -> Counter[str]:
        """Rewrites by kind over all files."""
        total: Counter[str] = Counter()
        for f in self.files:
            total.update(dict(f.counts))
        return total


class Mentions:
    """Which of the names asked about so far each file mentions (``prefilters.mentioned``).

    The analysis rounds and the candidate search of every planning round ask about
    overlapping sets of names; each file is scanned for a name once.
    """

    def __init__(self) -> None:
        self._asked: dict[Path, set[str]] = {}
        self._found: dict[Path, set[str]] = {}

    def any(self, path: Path, text: str, names: frozenset[str]) -> bool:
        """Whether ``text`` (the contents of ``path``) mentions one of ``names``."""
        asked = self._asked.setdefault(path, set())
        found = self._found.setdefault(path, set())
        new = names - asked
        if new:
            found |= mentioned(text, frozenset(new))
            asked |= new
        return not found.isdisjoint(names)

    def files_naming(self, name: str, texts: dict[Path, str]) -> list[Path]:
        """The files of ``texts`` that mention ``name`` (each scanned for it at most once)."""
        names = frozenset({name})
        return [path for path, text in texts.items() if self.any(path, text, names)]
