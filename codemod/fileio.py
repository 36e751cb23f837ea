"""Reading source files byte-faithfully, and encoding a new text as the file was.

A rewritten file must differ from the original only where the codemod changed code
(docs/ARCHITECTURE.md, "Files, output and exit codes"): same encoding, same BOM, same line
endings, same trailing newline, same mode. So files are read as bytes and decoded here,
never via text mode (which would translate ``\\r\\n``), and a new text is encoded back
the same way (``encode_source``); ``atomic_writes`` writes it.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

#: Files larger than this are not read: LibCST needs about 1 GB of memory and a minute
#: per MB of source, and no hand-written module comes close (vLLM's largest is 0.26 MB).
MAX_SOURCE_BYTES = 2 * 2**20


class SourceError(Exception):
    """A file cannot be read, decoded, encoded or written; the message names the path.

    ``path`` is that file (None only where a caller raises one without it).
    """

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class UndecodableSource(SourceError):
    """The file's bytes do not decode in its encoding. ``lossy`` is its text with each
    undecodable byte replaced (U+FFFD), enough to see which names it mentions."""

    def __init__(self, message: str, path: Path, lossy: str) -> None:
        super().__init__(message, path=path)
        self.lossy = lossy


@dataclass(frozen=True)
class SourceFile:
    """One source file as read from disk.

    ``text`` is the decoded text without the BOM, line endings exactly as on disk.
    ``encoding`` is the codec name (``utf-8`` even when the file has a BOM; see ``bom``).
    ``mode`` holds the permission bits (``stat.S_IMODE``) to restore on write.
    ``read_bytes``: the bytes read (None for a source not read from disk), kept only
    where the text encoded again could differ from them; ``b""`` stands for "the BOM
    (if any) and the text in UTF-8", which are those bytes exactly (a strict UTF-8
    decode and encode give back the same bytes).
    """

    path: Path
    text: str
    encoding: str
    bom: bool
    mode: int
    read_bytes: bytes | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def digest(self) -> str:
        """SHA-256 of the bytes read (``content_digest``), made when first asked (by a
        write, to refuse a file changed on disk since); "" for a source not read from
        disk. Most files are only read, so reading a tree no longer hashes them all."""
        if self.read_bytes is None:
            return ""
        if self.read_bytes:
            return content_digest(self.read_bytes)
        return content_digest((codecs.BOM_UTF8 if self.bom else b"") + self.text.encode("utf-8"))


def content_digest(data: bytes) -> str:
    """What identifies a file's contents: SHA-256 of its bytes, in hex."""
    return hashlib.sha256(data).hexdigest()


def read_source(path: Path, max_bytes: int = MAX_SOURCE_BYTES) -> SourceFile:
    """Read and decode ``path``, honouring a UTF-8 BOM and a PEP 263 coding cookie.

    Raises SourceError when the file is not a regular file, cannot be read, is larger
    than ``max_bytes``, declares an unknown encoding, or holds bytes that do not decode
    in its encoding.
    """
    try:
        # stat before open: opening a FIFO for reading would block until a writer comes.
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(f"{path}: cannot read: not a regular file", path=path)
        if info.st_size > max_bytes:
            raise SourceError(_too_large(path, info.st_size, max_bytes), path=path)
        with open(path, "rb") as handle:
            mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}", path=path) from exc
    if len(data) > max_bytes:  # it grew between stat and read
        raise SourceError(_too_large(path, len(data), max_bytes), path=path)

    try:
        encoding = _encoding(data)
    except SyntaxError as exc:
        if exc.msg.startswith("encoding problem"):
            raise SourceError(
                f"{path}: starts with a UTF-8 BOM but its coding cookie declares another"
                " encoding; remove one of them",
                path=path,
            ) from exc
        if not exc.msg.startswith("invalid or missing encoding declaration"):
            # An unknown codec: the file cannot be decoded at all.
            raise UndecodableSource(f"{path}: {exc.msg}", path=path,
                                    lossy=data.decode("utf-8", errors="replace")) from exc
        # Non-UTF-8 bytes in the first two lines and no cookie: decode as the default
        # below so that the error names the offending byte like any other.
        encoding = "utf-8"

    read_bytes = data
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8) :]
        encoding = "utf-8"  # detect_encoding says "utf-8-sig"; we track the BOM ourselves
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(codecs.BOM_UTF8) if bom else 0)
        line = len(_LINE_BREAKS_B.findall(data, 0, exc.start)) + 1
        raise UndecodableSource(
            f"{path}:{line}: cannot decode as {encoding} (byte 0x{exc.object[exc.start]:02x} at"
            f" offset {offset}); add a coding cookie or fix the file",
            path=path,
            lossy=data.decode(encoding, errors="replace"),
        ) from exc
    if encoding == "utf-8":
        read_bytes = b""  # the text encoded again (``SourceFile.digest``)
    return SourceFile(path=path, text=text, encoding=encoding, bom=bom, mode=mode,
                      read_bytes=read_bytes)


def _encoding(data: bytes) -> str:
    """``tokenize.detect_encoding``'s answer; "utf-8" without asking it when neither a
    BOM nor the word ``coding`` is in the first two lines, where a cookie must be (the
    common case: it then answers "utf-8" or raises the error handled as "utf-8")."""
    end = data.find(b"\n")
    end = data.find(b"\n", end + 1) if end >= 0 else -1
    head = data if end < 0 else data[:end]
    if b"coding" not in head and not data.startswith(codecs.BOM_UTF8):
        return "utf-8"
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding


def _too_large(path: Path, size: int, limit: int) -> str:
    return (
        f"{path}: too large to convert ({size / 2**20:.1f} MiB; the limit is"
        f" {limit / 2**20:g} MiB); exclude it (--extend-exclude) or split it"
    )


def newline_style(text: str) -> str | None:
    """The one line ending ``text`` uses (``"\\n"``, ``"\\r\\n"`` or ``"\\r"``).

    None when it has no line break or mixes several kinds.
    """
    crlf = text.count("\r\n")
    kinds = [
        ending
        for ending, count in (
            ("\r\n", crlf),
            ("\r", text.count("\r") - crlf),
            ("\n", text.count("\n") - crlf),
        )
        if count
    ]
    return kinds[0] if len(kinds) == 1 else None


_BARE_LF = re.compile(r"(?<!\r)\n")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_LINE_BREAKS_B = re.compile(rb"\r\n|\r|\n")


def restore_newlines(text: str, like: str) -> str:
    """``text`` with the line endings and trailing newline of the original ``like``.

    Generated code (and LibCST for a ``\\r``-only file) may bring ``\\n`` line breaks
    into a file that used ``\\r\\n`` or ``\\r`` throughout; they are converted to the
    file's ending. This is safe inside string literals too: Python reads every line
    ending of a source file as ``\\n``. A file with mixed endings is left as it is. If
    ``like`` ended with a line break and ``text`` does not, one is added.
    """
    style = newline_style(like)
    if style == "\r\n":
        text = _BARE_LF.sub("\r\n", text)
    elif style == "\r":
        text = text.replace("\r\n", "\r").replace("\n", "\r")
    if text and like.endswith(("\n", "\r")) and not text.endswith(("\n", "\r")):
        text += style or ("\r\n" if like.endswith("\r\n") else like[-1])
    return text


def encode_source(text: str, like: SourceFile) -> bytes:
    """Encode ``text`` as ``like`` was encoded: same codec, BOM re-added if it had one.

    Line endings and the trailing newline follow ``like`` (see ``restore_newlines``).
    Raises SourceError when ``text`` holds a character the file's encoding cannot hold
    (e.g. a non-Latin-1 character introduced into a ``latin-1`` file).
    """
    text = restore_newlines(text, like.text)
    try:
        data = text.encode(like.encoding)
    except UnicodeEncodeError as exc:
        line = len(_LINE_BREAKS.findall(text, 0, exc.start)) + 1
        raise SourceError(
            f"{like.path}:{line}: cannot encode {exc.object[exc.start]!r} as {like.encoding}",
            path=like.path,
        ) from exc
    return codecs.BOM_UTF8 + data if like.bom else data
