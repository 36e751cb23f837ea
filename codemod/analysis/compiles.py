"""Whether CPython compiles a source text (or an already parsed tree), and why not."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path


def cpython_rejects(path: Path, source: str | ast.Module) -> str | None:
    """Why CPython would not compile ``source`` (None if it would), as a message naming
    ``path``, the line and the column. A tree (``ast.parse``'s) skips the parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning, DeprecationWarning
            compile(source, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # ValueError: NUL bytes, on some versions
        line = getattr(exc, "lineno", None)
        if line is None:  # a NUL byte: CPython gives no position
            text = source if isinstance(source, str) else ""
            line = text.count("\n", 0, max(text.find("\0"), 0)) + 1
        message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        return f"{path}:{line}:{getattr(exc, 'offset', None) or 0}: syntax error: {message}"
    except (RecursionError, MemoryError):
        return f"{path}: syntax error: nested too deeply for Python to compile"
    return None
