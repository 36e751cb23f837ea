"""What one ``codemod check`` found, and its exit code (the CLI prints it; the cache
stores it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from codemod.check.rules import Finding

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@dataclass
class CheckResult:
    """Everything one check found; the CLI decides what to print and the exit code."""

    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    #: Files that could not be read or parsed (and internal errors), as messages.
    errors: list[str] = field(default_factory=list)
    #: Files skipped without failing the check (undecodable, naming no class), as messages.
    warnings: list[str] = field(default_factory=list)
    scanned: int = 0
    parsed: int = 0
    #: Modules that ``apply`` already converted (their factories are in a ``Features``).
    converted_modules: list[str] = field(default_factory=list)

    @property
    def fixable(self) -> int:
        """How many findings ``codemod apply`` fixes."""
        return sum(f.fixable for f in self.findings)

    @property
    def exit_code(self) -> int:
        """2 on an error, else 1 when there are findings, else 0."""
        if self.errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if self.findings else EXIT_CLEAN
