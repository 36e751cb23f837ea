"""Writing source files atomically: each target is replaced only by ``os.replace`` of a
complete, fsynced temp file next to it, and a set of files is replaced all or none.

What a kill (SIGKILL, power loss) can leave behind: every file is either its old or its
new version, never a mix; a process killed between creating and renaming a temp file
leaves that temp file (``.<name>.<random>.codemod-tmp``; not a ``.py`` file, so discovery
never reads it). A file that changed on disk after it was read (an editor, a second
``apply`` running at the same time) is not replaced: each write can be given the digest of
the bytes read, and the file is compared with it when staged and again just before its
rename. Reading and encoding are ``fileio``'s.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from codemod.fileio import SourceError, content_digest

#: Suffix of the temp files ``write_atomic`` creates next to their target.
TEMP_SUFFIX = ".codemod-tmp"


def _writable_target(path: Path) -> tuple[Path, os.stat_result | None]:
    """The real path to replace and its current stat; SourceError if it must not be."""
    target = Path(os.path.realpath(path))
    try:
        current = os.stat(target)
    except FileNotFoundError:
        return target, None
    except OSError as exc:
        raise SourceError(f"{path}: cannot stat: {exc.strerror or exc}", path=path) from exc
    if not stat.S_ISREG(current.st_mode):
        raise SourceError(f"{path}: not a regular file; not rewritten", path=path)
    if not current.st_mode & stat.S_IWUSR:
        raise SourceError(f"{path}: file is read-only; not rewritten", path=path)
    return target, current


def _check_unchanged(path: Path, target: Path, digest: str | None) -> None:
    """SourceError unless ``target`` (``path``'s real file) still holds the bytes whose
    digest is ``digest`` (None: nothing to compare)."""
    if digest is None:
        return
    try:
        with open(target, "rb") as handle:
            now = content_digest(handle.read())
    except OSError:
        now = None
    if now != digest:
        raise SourceError(
            f"{path}: changed on disk since codemod read it; not rewritten (run codemod again)",
            path=path,
        )


def _stage(path: Path, data: bytes, mode: int, digest: str | None = None) -> tuple[str, Path]:
    """Write ``data`` to a complete, fsynced temp file next to ``path``'s real target.

    Returns (temp name, target). On failure no temp file is left. With ``digest``, the
    target must still hold the bytes that digest was made of.
    """
    target, current = _writable_target(path)
    _check_unchanged(path, target, digest)
    try:
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                        suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise SourceError(
            f"{path}: cannot create temp file: {exc.strerror or exc}", path=path
        ) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates 0o600; restore the original mode before the file becomes visible.
        os.chmod(tmp_name, mode)
        if current is not None and (current.st_uid, current.st_gid) != _ids(tmp_name):
            # Running as root on someone else's tree: keep the owner (best effort).
            with contextlib.suppress(OSError):
                os.chown(tmp_name, current.st_uid, current.st_gid)
    except BaseException as exc:
        _unlink(tmp_name)
        if isinstance(exc, OSError):
            raise SourceError(f"{path}: cannot write: {exc.strerror or exc}", path=path) from exc
        raise
    return tmp_name, target


def _ids(name: str) -> tuple[int, int]:
    info = os.stat(name)
    return info.st_uid, info.st_gid


def _unlink(name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name)


def _sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (best effort; not every OS allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, mode: int) -> None:
    """Replace the contents of ``path`` with ``data`` atomically and set its mode to ``mode``.

    Writes a temp file in the same directory, fsyncs it, and renames it over ``path``, so
    readers see either the old or the new file, never a partial one. A symlink is written
    through (its target is replaced; the link stays a link). A file without the user write
    bit is refused rather than replaced (a rename would succeed on it). The owner is kept
    where the process may set it. On any failure the temp file is removed; OSError is
    raised as SourceError naming ``path``.
    """
    tmp_name, target = _stage(path, data, mode)
    try:
        os.replace(tmp_name, target)
    except BaseException as exc:
        _unlink(tmp_name)
        if isinstance(exc, OSError):
            raise SourceError(f"{path}: cannot write: {exc.strerror or exc}", path=path) from exc
        raise
    _sync_directory(target.parent)


def write_files_atomic(files: Sequence[tuple[Path, bytes, int]],
                       read_as: Mapping[Path, str] | None = None) -> None:
    """Write several files (``(path, data, mode)``) so that a failure replaces none.

    ``read_as`` maps a path to the digest of the bytes it held when it was read: that
    file is replaced only if it still holds them, checked when staged and again just
    before its rename (a file changed in between is reported as changed, with the files
    already replaced, and the rest are not written).

    Every new content is first written to a complete, fsynced temp file (the step where
    a read-only file, a full disk or a missing permission shows up); only when all of
    them are staged are they renamed over their targets, in the order given. So an error
    leaves every target untouched, and a kill leaves each file old or new, with the
    window for "some new, some old" reduced to the renames. Pass files that others
    depend on (modules that define converted classes) last. On failure the temp files
    are removed and SourceError names the file; if a rename itself fails (which needs
    the file system to change under us) the message says which files were replaced.
    """
    staged: list[tuple[str, Path, Path]] = []
    try:
        for path, data, mode in files:
            tmp_name, target = _stage(path, data, mode, (read_as or {}).get(path))
            staged.append((tmp_name, target, path))
    except BaseException:
        for tmp_name, _target, _path in staged:
            _unlink(tmp_name)
        raise
    done: list[Path] = []
    try:
        for tmp_name, target, path in staged:
            _check_unchanged(path, target, (read_as or {}).get(path))
            os.replace(tmp_name, target)
            done.append(path)
    except BaseException as exc:
        for tmp_name, _target, _path in staged[len(done):]:
            _unlink(tmp_name)
        if isinstance(exc, SourceError) and done:
            replaced = ", ".join(map(str, done))
            raise SourceError(f"{exc} (already replaced: {replaced})", path=exc.path) from exc
        if isinstance(exc, OSError):
            path = staged[len(done)][2]
            replaced = ", ".join(map(str, done)) or "none"
            raise SourceError(
                f"{path}: cannot write: {exc.strerror or exc} (already replaced: {replaced})",
                path=path,
            ) from exc
        raise
    for directory in sorted({target.parent for _tmp, target, _path in staged}):
        _sync_directory(directory)
