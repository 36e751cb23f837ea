"""Lines and columns as CPython counts them, for positions compared with LibCST's.

CPython numbers lines at ``\r\n``, ``\r`` and ``\n`` and gives columns in UTF-8 bytes;
LibCST gives columns in characters. The value proofs and the safety net key their
verdicts by LibCST's position, so they convert CPython's here.
"""

from __future__ import annotations

import re

_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def physical_lines(text: str) -> list[str]:
    """The lines as CPython numbers them (``\\r\\n``, ``\\r``, ``\\n``; not ``str.splitlines``,
    which also splits at form feeds and Unicode separators)."""
    return _PHYSICAL_LINE.findall(text)


def line_text(text: str, line: int) -> str:
    """The stripped code of ``line`` (1-based, as CPython numbers lines); "" past the end."""
    lines = physical_lines(text)
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def char_column(line: str, byte_offset: int) -> int:
    """The 1-based column, in characters, of CPython's ``col_offset`` (UTF-8 bytes) in ``line``."""
    if line.isascii():
        return byte_offset + 1
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace")) + 1
