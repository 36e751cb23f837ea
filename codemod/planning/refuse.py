"""``Refuse``: how a planning rule says no (the reason, its ``RefusalKind``, a line)."""

from __future__ import annotations

from codemod.types import BlockingUse, RefusalKind


class Refuse(Exception):
    """A refusal rule's verdict: the reason, its kind, the line it names (0: the class's),
    and for a use no rewrite covers, that use."""

    def __init__(self, reason: str, line: int = 0,
                 kind: RefusalKind = RefusalKind.UNCONVERTIBLE,
                 use: BlockingUse | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.kind = kind
        self.use = use
