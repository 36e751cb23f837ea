"""Which files to read: walking the given paths with the excludes applied.

Discovery stays on plain strings and ``os.scandir`` (no ``Path`` objects or stat calls
per entry while walking); the text tests that then skip files without parsing them are
``prefilters``'.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
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
    paths: Sequence[Path], excludes: Sequence[str], extend_excludes: Sequence[str] = (),
    links_out: list[str] | None = None, aliases: dict[str, str] | None = None,
) -> list[Path]:
    """The ``.py`` files under ``paths``, sorted, each real file once.

    A given file is taken as is (excludes apply only inside walked directories); it must
    be a regular file ending in ``.py``. A symlinked directory is entered when its target
    lies inside the project of the root it was found under (``ImportRoots.link_boundary``:
    a symlinked subpackage; its files are found under the link's path, which is how
    ``import`` names them), once per target and never when the target holds the link (a
    loop). A symlinked directory whose target leaves the project and directly holds
    ``.py`` files is not entered: its path is added to ``links_out`` (the caller reports
    it: its files would be left unconverted). A symlinked file is kept when it resolves
    to a file inside the root it was found under or the project (read under the link's
    path, as ``import`` names it); one that resolves to a file outside the project is
    added to ``links_out`` too. A file reached twice (a directory given twice or under
    two spellings, a link to a file or directory that is also found directly) is
    returned once: under a path that is not a symlink where there is one, unless only the
    symlinked path lies in a package (``ImportRoots.in_package``); else the first found.
    Converting it twice under two module names would write it twice. Each other path it
    was found under is recorded in ``aliases`` (that path -> the path returned): its
    module is a second name of the same file. Raises DiscoveryError for a missing
    path, a broken symlink or a symlink loop, a non-Python or non-regular file, or a
    directory that cannot be listed.
    """
    match_name, match_path = _compile([*excludes, *extend_excludes])
    # real path -> (reached through a symlink?, path as found)
    found: dict[str, tuple[bool, str]] = {}
    # real path -> every path it was found under
    every: dict[str, set[str]] = {}
    for given in paths:
        spelled = os.fspath(given)
        if check_given(given):
            for path, real, is_link in _walk(spelled, match_name, match_path, links_out):
                _keep(found, real, path, is_link)
                every.setdefault(real, set()).add(path)
        else:
            real = os.path.realpath(spelled)
            _keep(found, real, spelled, False)
            every.setdefault(real, set()).add(spelled)
    if aliases is not None:
        for real, spellings in every.items():
            kept = found[real][1]
            aliases.update((other, kept) for other in spellings if other != kept)
    return sorted({Path(path) for _link, path in found.values()})


def _keep(found: dict[str, tuple[bool, str]], real: str, path: str, is_link: bool) -> None:
    """Record ``path`` for ``real`` unless a better path is already recorded: one in a
    package over one that is not, then a plain path over a symlinked one, then the first."""
    seen = found.get(real)
    if seen is None or _rank(is_link, path) > _rank(*seen):
        found[real] = (is_link, path)


def _rank(is_link: bool, path: str) -> tuple[bool, bool]:
    return _packaged(path), not is_link


def _packaged(path: str) -> bool:
    """Whether ``path`` lies in a package (its module name does not depend on the walk)."""
    from codemod.analysis.roots import current

    return current().in_package(path)


def check_given(given: Path) -> bool:
    """Whether ``given`` is a directory (True) or a Python file (False); else raise."""
    try:
        info = os.stat(given)
    except OSError as exc:
        raise DiscoveryError(f"{given}: {_stat_problem(given, exc)}") from exc
    if stat.S_ISDIR(info.st_mode):
        return True
    if not stat.S_ISREG(info.st_mode):
        raise DiscoveryError(f"{given}: not a regular file")
    if given.suffix != ".py":
        raise DiscoveryError(f"{given}: not a Python file")
    return False


def _stat_problem(given: Path, exc: OSError) -> str:
    """Why ``given`` cannot be used, for the message."""
    if exc.errno == errno.ELOOP:
        return "symbolic link loop (too many levels of symbolic links)"
    if os.path.islink(given):
        return f"no such file or directory (broken symbolic link to {os.readlink(given)})"
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    return f"cannot access: {exc.strerror or exc}"


def _holds_python(directory: str) -> bool:
    """Whether ``directory`` directly holds a ``.py`` file (unreadable: assume so)."""
    try:
        with os.scandir(directory) as entries:
            return any(entry.name.endswith(".py") for entry in entries)
    except OSError:
        return True


def _walk(
    root: str, match_name: _Matcher | None, match_path: _Matcher | None,
    links_out: list[str] | None = None,
) -> list[tuple[str, str, bool]]:
    """``(path, real path, reached through a symlink)`` of each ``.py`` file below ``root``.

    ``path`` is joined onto ``root`` as given. Below a plain directory the real path of
    a plain file is its real directory joined with its name; symlinked directories are
    entered as ``iter_python_files`` says.
    """
    from codemod.analysis.roots import current

    real_root = os.path.realpath(root)
    inside = real_root.rstrip(os.sep) + os.sep
    boundary = os.path.realpath(current().link_boundary(root))
    within = boundary.rstrip(os.sep) + os.sep
    files: list[tuple[str, str, bool]] = []
    entered: set[str] = {real_root}
    # (directory, its path relative to root, its real path, reached through a link)
    stack: list[tuple[str, str, str, bool]] = [(root, "", real_root, False)]
    while stack:
        directory, rel_dir, real_dir, via_link = stack.pop()
        try:
            with os.scandir(directory) as entries:
                listed = sorted(entries, key=lambda entry: entry.name)  # the same walk each run
        except OSError as exc:
            raise DiscoveryError(f"{directory}: cannot list directory: {exc.strerror}") from exc
        for entry in listed:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if (match_name and match_name(name)) or (match_path and match_path(rel)):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, rel, os.path.join(real_dir, name), via_link))
            elif entry.is_symlink() and os.path.isdir(entry.path):
                target = os.path.realpath(entry.path)
                holds_link = real_dir == target or real_dir.startswith(target.rstrip(os.sep) + os.sep)
                if holds_link or target in entered:
                    continue  # a loop, or a target already walked through another link
                if target == boundary or target.startswith(within):
                    entered.add(target)
                    stack.append((entry.path, rel, target, True))
                elif links_out is not None and _holds_python(target):
                    links_out.append(entry.path)
            elif name.endswith(".py"):
                if entry.is_symlink():
                    # A link into the tree or the project is read under its own path, as
                    # a symlinked directory is entered; one that leaves the project is
                    # reported (its code would be left unconverted). Broken links, link
                    # loops and links to directories are dropped.
                    real = os.path.realpath(entry.path)
                    if not os.path.isfile(real):
                        continue
                    if real.startswith(inside) or real.startswith(within):
                        files.append((entry.path, real, True))
                    elif links_out is not None:
                        links_out.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    files.append((entry.path, os.path.join(real_dir, name), via_link))
                # else: sockets, FIFOs, device files
    return files
