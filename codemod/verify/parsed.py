"""A tree's file read with CPython's parser, for the verifier's readers of either tree."""

from __future__ import annotations

import ast
from pathlib import Path


def parse_file(path: Path) -> ast.Module | None:
    """``path``'s module tree; None when the file cannot be read, decoded or parsed
    (the readers then pass it over, as a file with nothing to find)."""
    try:
        return ast.parse(path.read_text("utf-8"))
    except (OSError, SyntaxError, ValueError):  # ValueError: UnicodeDecodeError, NUL bytes
        return None
