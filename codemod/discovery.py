"""Which files to read: walking the given paths, excludes, and a cheap text prefilter.

Parsing is the expensive step (DESIGN.md section 6), so discovery stays on plain strings
and ``os.scandir`` (no ``Path`` objects or stat calls per entry while walking), and
``prefilter`` lets the engine skip files that never mention a candidate class name.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path


class DiscoveryError(Exception):
    """A given path cannot be used (missing, not Python, unreadable); names the path."""


_Matcher = Callable[[str], "re.Match[str] | None"]


def _compile(patterns: Sequence[str]) -> tuple[_Matcher | None, _Matcher | None]:
    """Split glob patterns into one regex for bare names and one for relative paths.

    A pattern containing ``/`` (a trailing ``/`` is ignored) is matched against the
    ``/``-separated path relative to the walked root; any other pattern against the name.
    """
    names: list[str] = []
    paths: list[str] = []
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if pattern.startswith("./"):
            pattern = pattern[2:]
        if pattern:
            (paths if "/" in pattern else names).append(fnmatch.translate(pattern))

    def join(parts: list[str]) -> _Matcher | None:
        return re.compile("|".join(parts)).match if parts else None

    return join(names), join(paths)


def iter_python_files(
    paths: Sequence[Path], excludes: Sequence[str], extend_excludes: Sequence[str] = ()
) -> list[Path]:
    """The ``.py`` files under ``paths``, sorted and de-duplicated.

    A given file is taken as is (excludes apply only inside walked directories); it must
    exist and end in ``.py``. Directories are walked without following symlinked
    directories; a symlinked file is kept only if it resolves to a file inside the root
    it was found under. Raises DiscoveryError for a missing path, a non-Python file, or
    a directory that cannot be listed.
    """
    match_name, match_path = _compile([*excludes, *extend_excludes])
    found: set[Path] = set()
    for given in paths:
        if not given.exists():
            raise DiscoveryError(f"{given}: no such file or directory")
        if given.is_dir():
            found.update(map(Path, _walk(os.fspath(given), match_name, match_path)))
        elif given.suffix == ".py":
            found.add(given)
        else:
            raise DiscoveryError(f"{given}: not a Python file")
    return sorted(found)


def _walk(root: str, match_name: _Matcher | None, match_path: _Matcher | None) -> list[str]:
    """Paths (as strings joined onto ``root``) of the ``.py`` files below ``root``."""
    real_root = os.path.realpath(root)
    inside = real_root.rstrip(os.sep) + os.sep
    files: list[str] = []
    stack: list[tuple[str, str]] = [(root, "")]  # (directory, its path relative to root)
    while stack:
        directory, rel_dir = stack.pop()
        try:
            with os.scandir(directory) as entries:
                listed = list(entries)
        except OSError as exc:
            raise DiscoveryError(f"{directory}: cannot list directory: {exc.strerror}") from exc
        for entry in listed:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if (match_name and match_name(name)) or (match_path and match_path(rel)):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, rel))
            elif name.endswith(".py"):
                if entry.is_symlink():
                    # Keep links into the tree only; this drops broken links, links that
                    # leave the tree and links to directories.
                    real = os.path.realpath(entry.path)
                    if not (real.startswith(inside) and os.path.isfile(real)):
                        continue
                elif not entry.is_file(follow_symlinks=False):
                    continue  # sockets, FIFOs, device files
                files.append(entry.path)
    return files


@functools.lru_cache(maxsize=32)
def _names_regex(names: frozenset[str]) -> re.Pattern[str]:
    """One alternation of the names, longest first (order does not matter for search)."""
    alternation = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    # Whole identifiers only: ``_weight_loader`` must not match ``default_weight_loader``.
    return re.compile(rf"(?<![\w])(?:{alternation})(?![\w])")


def prefilter(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` mentions any of ``names`` as a whole identifier.

    A cheap, conservative test: False means the file cannot refer to any of the names;
    True means it may. An empty ``names`` set matches nothing.
    """
    if not names:
        return False
    return _names_regex(names).search(text) is not None
