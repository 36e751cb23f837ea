"""The ``verify`` command's body: run, print, return the exit code."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from pathlib import Path
from typing import TextIO

from codemod.verify.model import EXIT_UNUSABLE, VerifyResult


def run_verify(original: Path, converted: Path, output_format: str = "text",
               output: TextIO | None = None) -> tuple[int, VerifyResult | None]:
    """Verify ``converted`` against ``original``; print the table (or JSON) to ``output``.
    Returns the exit code and the result (None when torch is not installed)."""
    output = output or sys.stdout
    if importlib.util.find_spec("torch") is None:
        print("codemod verify: needs torch (it imports and runs both trees' parameter code)",
              file=sys.stderr)
        return EXIT_UNUSABLE, None
    from codemod.verify.render import as_json, as_table
    from codemod.verify.run import verify_trees

    with contextlib.redirect_stdout(sys.stderr):  # what the engine's modules print
        result = verify_trees(original, converted)
    text = as_json(result) if output_format == "json" else as_table(result)
    print(text, file=output if not result.error or output_format == "json" else sys.stderr)
    return result.exit_code, result
