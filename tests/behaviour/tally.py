"""Session-wide counts of what the behaviour tests compared, printed in pytest's summary.

Tests call ``count(kind, n)`` for every tensor they compared bit for bit, and ``note(text)``
for an observation worth reporting (e.g. what the original engine does under
``torch.compile``). ``tests/behaviour/conftest.py`` prints both at the end of the run.
"""

from __future__ import annotations

from collections import Counter

COUNTS: Counter[str] = Counter()
NOTES: dict[str, str] = {}


def count(kind: str, n: int = 1) -> None:
    """Record ``n`` tensor comparisons of ``kind`` (e.g. ``"params gptq"``)."""
    COUNTS[kind] += n


def note(key: str, text: str) -> None:
    """Record an observation under ``key`` (the last one per key is kept)."""
    NOTES[key] = text


def summary_lines() -> list[str]:
    """The summary pytest prints: totals by kind, then the notes."""
    lines = []
    if COUNTS:
        total = sum(COUNTS.values())
        lines.append(f"tensors compared bit for bit: {total}")
        for kind in sorted(COUNTS):
            lines.append(f"  {kind}: {COUNTS[kind]}")
    for key in sorted(NOTES):
        lines.append(f"{key}: {NOTES[key]}")
    return lines
