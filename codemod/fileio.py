"""Reading and writing source files byte-faithfully.

A rewritten file must differ from the original only where the codemod changed code
(DESIGN.md section 3): same encoding, same BOM, same line endings, same trailing newline,
same mode, and the write is atomic. So files are read as bytes and decoded here, never via
text mode (which would translate ``\\r\\n``), and written through a temp file + rename.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path


class SourceError(Exception):
    """A file cannot be read, decoded, encoded or written; the message names the path."""


@dataclass(frozen=True)
class SourceFile:
    """One source file as read from disk.

    ``text`` is the decoded text without the BOM, line endings exactly as on disk.
    ``encoding`` is the codec name (``utf-8`` even when the file has a BOM; see ``bom``).
    ``mode`` holds the permission bits (``stat.S_IMODE``) to restore on write.
    """

    path: Path
    text: str
    encoding: str
    bom: bool
    mode: int


def read_source(path: Path) -> SourceFile:
    """Read and decode ``path``, honouring a UTF-8 BOM and a PEP 263 coding cookie.

    Raises SourceError when the file cannot be read, declares an unknown encoding, or
    holds bytes that do not decode in its encoding.
    """
    try:
        with open(path, "rb") as handle:
            mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
            data = handle.read()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from exc

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if not exc.msg.startswith("invalid or missing encoding declaration"):
            # An unknown codec, or a cookie that contradicts the BOM.
            raise SourceError(f"{path}: {exc.msg}") from exc
        # Non-UTF-8 bytes in the first two lines and no cookie: decode as the default
        # below so that the error names the offending byte like any other.
        encoding = "utf-8"

    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8) :]
        encoding = "utf-8"  # detect_encoding says "utf-8-sig"; we track the BOM ourselves
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(codecs.BOM_UTF8) if bom else 0)
        raise SourceError(
            f"{path}: cannot decode as {encoding} (byte 0x{exc.object[exc.start]:02x} at offset"
            f" {offset}); add a coding cookie or fix the file"
        ) from exc
    return SourceFile(path=path, text=text, encoding=encoding, bom=bom, mode=mode)


def encode_source(text: str, like: SourceFile) -> bytes:
    """Encode ``text`` as ``like`` was encoded: same codec, BOM re-added if it had one.

    Raises SourceError when ``text`` holds a character the file's encoding cannot hold
    (e.g. a non-Latin-1 character introduced into a ``latin-1`` file).
    """
    try:
        data = text.encode(like.encoding)
    except UnicodeEncodeError as exc:
        raise SourceError(
            f"{like.path}: cannot encode {exc.object[exc.start]!r} as {like.encoding}"
        ) from exc
    return codecs.BOM_UTF8 + data if like.bom else data


def write_atomic(path: Path, data: bytes, mode: int) -> None:
    """Replace the contents of ``path`` with ``data`` atomically and set its mode to ``mode``.

    Writes a temp file in the same directory, fsyncs it, and renames it over ``path``, so
    readers see either the old or the new file, never a partial one. A symlink is written
    through (its target is replaced; the link stays a link). A file without the user write
    bit is refused rather than replaced (a rename would succeed on it). On any failure the
    temp file is removed; OSError is raised as SourceError naming ``path``.
    """
    target = Path(os.path.realpath(path))
    try:
        current = os.stat(target).st_mode
    except FileNotFoundError:
        current = None
    except OSError as exc:
        raise SourceError(f"{path}: cannot stat: {exc.strerror or exc}") from exc
    if current is not None and not current & stat.S_IWUSR:
        raise SourceError(f"{path}: file is read-only; not rewritten")

    try:
        fd, tmp_name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".codemod-tmp"
        )
    except OSError as exc:
        raise SourceError(f"{path}: cannot create temp file: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates 0o600; restore the original mode before the file becomes visible.
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise SourceError(f"{path}: cannot write: {exc.strerror or exc}") from exc
        raise
