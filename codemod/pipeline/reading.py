"""Stage 1, read: the Python files of the trees under the given paths, read byte-faithfully
into a ``RunResult`` (a FAILED result for each file that cannot be read; undecodable
files held until the plan says whether they matter), and the parse of one file into its
facts (CPython's compiler first, then LibCST), with the message naming why it fails."""

from __future__ import annotations

import os
from pathlib import Path

import libcst as cst

from codemod.analysis import python_trees
from codemod.analysis.classes import FileFacts, analyse_file
from codemod.analysis.compiles import RUNNING_PYTHON, cpython_rejects, needs_newer_python
from codemod.analysis.names import module_name_for
from codemod.discovery import iter_python_files
from codemod.fileio import SourceError, UndecodableSource, read_source
from codemod.pipeline.results import RunResult
from codemod.scope import Scope, scope_of
from codemod.types import FileResult, Options, Outcome


def parse_file(path: Path, text: str, result: RunResult) -> FileFacts | None:
    """Parse and analyse one file into ``result`` (None, and a FAILED result, if it does not parse)."""
    ff, error = parse_facts(path, text)
    if error is not None:
        result.files.append(FileResult(path, Outcome.FAILED, error=error))
        return None
    assert ff is not None
    result.facts[path] = ff
    result.parsed += 1
    return ff


def parse_facts(path: Path, text: str, parsed: str | None = None,
                ) -> tuple[FileFacts | None, str | None]:
    """``analyse_file``, or the message naming why the file does not parse (``parsed``:
    the text LibCST parses instead, when not ``text``).

    CPython compiles the text first: its compiler is much faster than LibCST's parser,
    names the exact line, and rejects what LibCST accepts but no interpreter runs (200+
    nested brackets, a 1,000-term ``a + b + ...`` chain, ``return`` outside a function,
    a late ``__future__`` import), on which LibCST can take minutes or overflow its stack
    and a conversion would only fail at the final compile check.
    """
    error = _cpython_rejects(path, text)
    newer = needs_newer_python(text) if error is not None else None
    if error is not None and newer is None:
        return None, error
    try:
        return analyse_file(path, text, parsed), None  # newer syntax: LibCST reads it
    except cst.ParserSyntaxError as exc:
        if newer is not None:
            return None, (f"{error} (Python {newer} syntax, which this Python {RUNNING_PYTHON} "
                          "cannot compile; LibCST rejects it too)")
        return None, f"{path}:{exc.raw_line}:{exc.raw_column}: syntax error: {exc.message}"
    except (RecursionError, ValueError) as exc:
        return None, f"{path}: {exc}"


def _cpython_rejects(path: Path, text: str) -> str | None:
    """``cpython_rejects(path, text)``, compiling the tree the run's other readers share
    (``python_trees``) instead of parsing the text again; the text itself only when it
    does not parse or its tree does not compile, so that the message is CPython's own."""
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return cpython_rejects(path, text)
    return None if cpython_rejects(path, tree) is None else cpython_rejects(path, text)


def read_tree(paths: list[Path], options: Options, scope: Scope | None = None) -> RunResult:
    """A ``RunResult`` holding the sources of every Python file of the trees under
    ``paths`` (``scope``; a FAILED result for each file that cannot be read, and for
    each symlinked directory that leaves the tree with Python files in it); nothing
    parsed yet. Module names follow the import roots in effect (``roots.using``)."""
    scope = scope or scope_of(paths, options.src)
    python_trees.clear()  # trees of an earlier run's texts
    result = RunResult(scope=scope)
    links_out: list[str] = []
    aliases: dict[str, str] = {}
    found = iter_python_files(list(scope.walk), options.excludes, options.extend_excludes,
                              links_out, aliases)
    files = sorted(scope.spelled(path) for path in found)
    for link in links_out:
        spelled = scope.spelled(Path(link))
        if os.path.isdir(link):
            result.files.append(FileResult(Path(link), Outcome.FAILED, error=(
                f"{spelled}: symbolic link to a directory outside the tree "
                f"({os.path.realpath(link)}): its Python files would be left unconverted; "
                "run on a directory that holds its target, or exclude the link")))
            continue
        # A linked file is held, as an undecodable one, until the plan says whether it can
        # matter: one that may define or names a Parameter class fails the run, any other
        # is skipped with a warning (``plan_rounds._judge_undecodable``).
        error = (f"{spelled}: symbolic link to a file outside the tree "
                 f"({os.path.realpath(link)}), which would be left unconverted")
        try:
            result.undecodable[spelled] = (error, read_source(Path(link)).text)
        except UndecodableSource as exc:
            result.undecodable[spelled] = (error, exc.lossy)
        except SourceError as exc:
            result.files.append(FileResult(spelled, Outcome.FAILED, error=f"{error}: {exc}"))
    for other, kept in sorted(aliases.items()):
        alias, module = module_name_for(Path(other)), module_name_for(Path(kept))
        if alias != module:
            result.module_aliases[alias] = module
    result.scanned = len(files)
    for path in files:
        try:
            result.sources[path] = read_source(path)
        except UndecodableSource as exc:
            result.undecodable[path] = (str(exc), exc.lossy)  # judged by settle_plan
        except SourceError as exc:
            result.files.append(FileResult(path, Outcome.FAILED, error=str(exc)))
    return result
