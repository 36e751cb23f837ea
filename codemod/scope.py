"""What a run reads for the paths it was given: whole trees, never a slice of one.

A class converted in one file breaks every file of its tree that still uses it as a
class, so the analysis always covers the whole tree a given path belongs to: a file or
subdirectory inside a package stands for the top package directory above it (found
from the import roots, ``analysis.roots``). The given paths are then the *focus*: what
``check`` reports on and what ``apply`` may write.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codemod.analysis.roots import ImportRoots, absolute, is_under, working_directory
from codemod.discovery import check_given


@dataclass(frozen=True)
class Scope:
    """The trees to read, the given paths when they are narrower, and the import roots."""

    #: Paths to walk, spelled as the user spelled theirs (relative stays relative).
    walk: tuple[Path, ...]
    #: The given paths, absolute, when some of them is narrower than its tree; else None.
    focus: tuple[str, ...] | None
    roots: ImportRoots
    #: Whether every given path was relative (outputs then stay relative).
    relative: bool = True

    def in_focus(self, path: Path | str) -> bool:
        """Whether ``path`` lies in the given paths (always, when they are whole trees),
        as spelled or once symbolic links are resolved: from a working directory entered
        through a link, ``a.py`` is read through the link and ``../b.py`` from the
        physical directory, so a file may be found under the other spelling."""
        if self.focus is None:
            return True
        spelled = absolute(path)
        if any(is_under(spelled, given) for given in self.focus):
            return True
        real = os.path.realpath(path)
        return any(is_under(real, os.path.realpath(given)) for given in self.focus)

    def spelled(self, path: Path) -> Path:
        """``path`` as found under a widened tree, relative to the working directory
        when the user gave relative paths (``a.py``, not ``../../pkg/sub/a.py``)."""
        if self.focus is None or not self.relative:
            return path
        spelled = os.path.relpath(absolute(path), working_directory())
        if spelled.split(os.sep)[0] == os.pardir and working_directory() != os.getcwd():
            return Path(absolute(path))  # ``..`` would climb from the physical directory
        return Path(spelled)


def scope_of(paths: Sequence[Path], src: Sequence[Path] = ()) -> Scope:
    """The trees behind ``paths``: each path inside a package is widened to its top
    package directory (``ImportRoots.tree_of``). Raises ``DiscoveryError`` for a path
    that cannot be used (missing, not Python, not a regular file), naming it as given."""
    inferred = ImportRoots.of(src=src)
    walk: list[Path] = []
    narrowed = False
    for given in paths:
        check_given(given)
        tree = inferred.tree_of(given)
        if tree == absolute(given):
            walk.append(given)
            continue
        narrowed = True
        relative = not given.is_absolute() and working_directory() == os.getcwd()
        walk.append(Path(os.path.relpath(tree)) if relative else Path(tree))
    absolute_walks = [absolute(w) for w in walk]
    walked_dirs = [w for w in absolute_walks if os.path.isdir(w)]
    focus = tuple(absolute(p) for p in paths) if narrowed else None
    # One walk per tree, however it was spelled (``.`` through a link, ``..`` physically),
    # in the order given.
    unique: list[Path] = []
    walked_reals: set[str] = set()
    for walked in walk:
        real = os.path.realpath(walked)
        if real not in walked_reals:
            walked_reals.add(real)
            unique.append(walked)
    return Scope(tuple(unique), focus, ImportRoots.of(src=src, walked=walked_dirs),
                 relative=not any(p.is_absolute() for p in paths))
