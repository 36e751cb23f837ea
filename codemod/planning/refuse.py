"""``Refuse``: how a planning rule says no (the reason, its ``RefusalKind``, a line)."""

from __future__ import annotations

from codemod.types import RefusalKind


class Refuse(Exception):
    """A refusal rule's verdict: the reason, its kind, and the line it names (0: the class's)."""

    def __init__(self, reason: str, line: int = 0,
                 kind: RefusalKind = RefusalKind.UNCONVERTIBLE) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.kind = kind
