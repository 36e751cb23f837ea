"""Unified diffs for ``apply --dry-run``, in the form ``git diff`` and ``patch -p1`` read."""

from __future__ import annotations

import difflib
import re
from pathlib import Path, PurePath

# Python's line ends are \n, \r\n and \r only; str.splitlines() would also split on form
# feeds and other separators that Python code may contain inside a line.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    """``text`` split after each line end, ends kept."""
    return _LINE.findall(text)


def unified_diff(path: Path | str, old: str, new: str, context: int = 3,
                 new_file: bool = False) -> str:
    """A unified diff from ``old`` to ``new`` with ``--- a/path`` / ``+++ b/path`` headers
    (``--- /dev/null`` for a ``new_file``, as ``git diff`` shows a file it adds).

    Line endings are kept as they are; a last line without a line end is followed by the
    usual ``\\ No newline at end of file`` marker. Returns ``""`` when the texts are equal.
    """
    if old == new:
        return ""
    name = PurePath(path).as_posix()
    out: list[str] = []
    for line in difflib.unified_diff(
        _lines(old), _lines(new), fromfile="/dev/null" if new_file else f"a/{name}",
        tofile=f"b/{name}", n=context
    ):
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out.append(line + "\n" + _NO_NEWLINE)
    return "".join(out)
