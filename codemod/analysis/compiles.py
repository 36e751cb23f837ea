"""Whether CPython compiles a source text (or an already parsed tree), and why not.

``needs_newer_python`` tells a syntax error of this interpreter from syntax a newer
Python accepts (PEP 695 ``type X = ...``, ``def f[T]()``, ``class C[T]``; PEP 701
f-strings, both 3.12): LibCST reads those, so such a file is still analysed and
converted, checked by LibCST's parser instead of CPython's compiler.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from pathlib import Path

#: The running interpreter's version, as messages name it.
RUNNING_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"

#: A statement only Python 3.12's grammar has: a ``type`` alias or type parameters.
_PEP_695 = re.compile(r"^\s*(?:type\s+\w+\s*[\[=]|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)")


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


def needs_newer_python(text: str) -> str | None:
    """The Python version (``"3.12"``) whose syntax makes ``text`` fail to parse here,
    or None when its syntax error is an error in every version (or there is none)."""
    if sys.version_info >= (3, 12):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as exc:
        lines = text.splitlines()
        line = lines[exc.lineno - 1] if exc.lineno and exc.lineno <= len(lines) else ""
        if _PEP_695.match(line) or (exc.msg or "").startswith("f-string"):
            return "3.12"
        return None
    except (ValueError, RecursionError, MemoryError):
        return None
    return None
