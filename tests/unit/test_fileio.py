"""Unit tests for codemod.fileio: byte-faithful reads and atomic writes."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from codemod.fileio import SourceError, encode_source, read_source, write_atomic

ROUND_TRIPS = [
    pytest.param(b"x = 1\n", "utf-8", False, "x = 1\n", id="plain-utf8"),
    pytest.param(b"\xef\xbb\xbfx = '\xc3\xa9'\n", "utf-8", True, "x = '\u00e9'\n", id="utf8-bom"),
    pytest.param(b"x = 1\r\ny = 2\r\n", "utf-8", False, "x = 1\r\ny = 2\r\n", id="crlf"),
    pytest.param(b"x = 1\ry = 2\r", "utf-8", False, "x = 1\ry = 2\r", id="cr-only"),
    pytest.param(b"x = 1\r\ny = 2\n", "utf-8", False, "x = 1\r\ny = 2\n", id="mixed-endings"),
    pytest.param(b"x = 1", "utf-8", False, "x = 1", id="no-trailing-newline"),
    pytest.param(b"", "utf-8", False, "", id="empty"),
    pytest.param(
        b"# -*- coding: latin-1 -*-\nx = '\xe9'\n",
        "iso-8859-1",
        False,
        "# -*- coding: latin-1 -*-\nx = '\u00e9'\n",
        id="latin1-cookie",
    ),
    pytest.param(
        b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\x80'\n",
        "cp1252",
        False,
        "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\u20ac'\n",
        id="cp1252-cookie-line2",
    ),
    pytest.param(b"x = '\xe2\x82\xac'\n", "utf-8", False, "x = '\u20ac'\n", id="utf8-multibyte"),
]


@pytest.mark.parametrize(("raw", "encoding", "bom", "text"), ROUND_TRIPS)
def test_read_decodes_and_encode_round_trips(
    tmp_path: Path, raw: bytes, encoding: str, bom: bool, text: str
) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(raw)
    source = read_source(path)
    assert (source.text, source.encoding, source.bom) == (text, encoding, bom)
    assert source.path == path
    assert encode_source(source.text, source) == raw


@pytest.mark.parametrize(("raw", "encoding", "bom", "text"), ROUND_TRIPS)
def test_write_atomic_round_trips_bytes(
    tmp_path: Path, raw: bytes, encoding: str, bom: bool, text: str
) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(raw)
    source = read_source(path)
    write_atomic(path, encode_source(source.text + "z = 3\n", source), source.mode)
    expected_tail = "z = 3\n".encode(encoding)
    assert path.read_bytes() == raw + expected_tail


def test_edit_keeps_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbfa = 1\r\nb = 2\r\n")
    source = read_source(path)
    new = source.text.replace("b = 2", "b = 3")
    write_atomic(path, encode_source(new, source), source.mode)
    assert path.read_bytes() == b"\xef\xbb\xbfa = 1\r\nb = 3\r\n"


DECODE_ERRORS = [
    pytest.param(
        b"x = '\xff'\n", r"cannot decode as utf-8 \(byte 0xff at offset 5\)", id="line1-no-cookie"
    ),
    pytest.param(b"a = 1\nb = 2\nx = '\xc3('\n", r"byte 0xc3 at offset 17", id="line3-bad-utf8"),
    pytest.param(
        b"\xef\xbb\xbfx = '\xff'\n", r"byte 0xff at offset 8", id="after-bom-offset-counts-bom"
    ),
    pytest.param(
        b"# coding: ascii\nx = '\xe9'\n", r"cannot decode as ascii \(byte 0xe9", id="ascii-cookie"
    ),
    pytest.param(
        b"# coding: no-such-codec\n", r"unknown encoding: no-such-codec", id="unknown-codec"
    ),
    pytest.param(
        b"\xef\xbb\xbf# coding: latin-1\n", r"encoding problem", id="bom-contradicts-cookie"
    ),
]


@pytest.mark.parametrize(("raw", "message"), DECODE_ERRORS)
def test_undecodable_input_raises_source_error(tmp_path: Path, raw: bytes, message: str) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(raw)
    with pytest.raises(SourceError, match=message) as info:
        read_source(path)
    assert str(info.value).startswith(f"{path}: ")


def test_decode_error_suggests_fix(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = '\xff'\n")
    with pytest.raises(SourceError, match="add a coding cookie or fix the file"):
        read_source(path)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda p: None, id="missing"),
        pytest.param(lambda p: p.mkdir(), id="directory"),
    ],
)
def test_unreadable_raises_source_error(tmp_path: Path, make: object) -> None:
    path = tmp_path / "m.py"
    make(path)  # type: ignore[operator]
    with pytest.raises(SourceError, match=rf"^{re.escape(str(path))}: cannot read"):
        read_source(path)


def test_permission_error_raises_source_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root can read a 0o000 file, so simulate the error rather than rely on chmod.
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")

    def deny(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("builtins.open", deny)
    with pytest.raises(
        SourceError, match=rf"^{re.escape(str(path))}: cannot read: Permission denied"
    ):
        read_source(path)


def test_encode_unencodable_character_raises(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"# coding: latin-1\nx = 1\n")
    source = read_source(path)
    with pytest.raises(
        SourceError, match=rf"^{re.escape(str(path))}: cannot encode '€' as iso-8859-1"
    ):
        encode_source(source.text + "y = '\u20ac'\n", source)


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o755, 0o664], ids=oct)
def test_mode_preserved(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    path.chmod(mode)
    source = read_source(path)
    assert source.mode == mode
    write_atomic(path, b"x = 2\n", source.mode)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_bytes() == b"x = 2\n"


def test_write_atomic_creates_new_file(tmp_path: Path) -> None:
    path = tmp_path / "new.py"
    write_atomic(path, b"x = 1\n", 0o640)
    assert path.read_bytes() == b"x = 1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555], ids=oct)
def test_read_only_file_refused_and_unchanged(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\r\n")
    path.chmod(mode)
    before = path.stat()
    with pytest.raises(
        SourceError, match=rf"^{re.escape(str(path))}: file is read-only; not rewritten$"
    ):
        write_atomic(path, b"x = 2\n", 0o644)
    after = path.stat()
    assert path.read_bytes() == b"x = 1\r\n"
    assert (after.st_ino, after.st_mode, after.st_mtime_ns) == (
        before.st_ino,
        before.st_mode,
        before.st_mtime_ns,
    )
    assert os.listdir(tmp_path) == ["m.py"]


def test_temp_file_removed_when_replace_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")

    def fail(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("codemod.fileio.os.replace", fail)
    with pytest.raises(
        SourceError, match=rf"^{re.escape(str(path))}: cannot write: No space left on device"
    ):
        write_atomic(path, b"x = 2\n", 0o644)
    assert os.listdir(tmp_path) == ["m.py"]
    assert path.read_bytes() == b"x = 1\n"


def test_temp_file_removed_on_interrupt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")

    def interrupt(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("codemod.fileio.os.fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, b"x = 2\n", 0o644)
    assert os.listdir(tmp_path) == ["m.py"]
    assert path.read_bytes() == b"x = 1\n"


def test_missing_directory_raises_source_error(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "m.py"
    with pytest.raises(SourceError, match=rf"^{re.escape(str(path))}: cannot create temp file"):
        write_atomic(path, b"x = 1\n", 0o644)


def test_write_through_symlink_keeps_link(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_bytes(b"x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to("real.py")
    write_atomic(link, b"x = 2\n", 0o644)
    assert link.is_symlink()
    assert real.read_bytes() == b"x = 2\n"
