"""Unit tests for codemod.fileio and codemod.atomic_writes: byte-faithful reads and atomic writes."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from codemod.atomic_writes import write_atomic
from codemod.fileio import SourceError, encode_source, read_source

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
    tmp_path: Path, raw: bytes, encoding: str, bom: bool, text: str, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(raw)
    source = read_source(path)
    write_atomic(path, encode_source(source.text + "z = 3\n", source), source.mode)
    # Added lines take the file's own line ending when it uses one kind throughout.
    ending = {"crlf": "\r\n", "cr-only": "\r"}.get(request.node.callspec.id, "\n")
    expected_tail = f"z = 3{ending}".encode(encoding)
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
        b"\xef\xbb\xbf# coding: latin-1\n",
        r"starts with a UTF-8 BOM but its coding cookie declares another encoding",
        id="bom-contradicts-cookie",
    ),
]


@pytest.mark.parametrize(("raw", "message"), DECODE_ERRORS)
def test_undecodable_input_raises_source_error(tmp_path: Path, raw: bytes, message: str) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(raw)
    with pytest.raises(SourceError, match=message) as info:
        read_source(path)
    assert str(info.value).startswith(f"{path}:")


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
        SourceError, match=rf"^{re.escape(str(path))}:3: cannot encode '€' as iso-8859-1"
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

    monkeypatch.setattr("codemod.atomic_writes.os.replace", fail)
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

    monkeypatch.setattr("codemod.atomic_writes.os.fsync", interrupt)
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


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        pytest.param(b"x = '\xff'\n", 1, id="line1"),
        pytest.param(b"a = 1\nb = 2\nx = '\xff'\n", 3, id="lf"),
        pytest.param(b"a = 1\r\nb = 2\r\nx = '\xff'\r\n", 3, id="crlf"),
        pytest.param(b"a = 1\rb = 2\rx = '\xff'\r", 3, id="cr"),
    ],
)
def test_decode_error_names_the_line(tmp_path: Path, raw: bytes, line: int) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(raw)
    with pytest.raises(SourceError, match=rf"^{re.escape(str(path))}:{line}: cannot decode"):
        read_source(path)


def test_too_large_file_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_bytes(b"x = 1\n" * 1000)
    assert read_source(path, max_bytes=6000).text.count("\n") == 1000
    with pytest.raises(
        SourceError,
        match=rf"^{re.escape(str(path))}: too large to convert \(0\.0 MiB; the limit is .* MiB\);"
        r" exclude it \(--extend-exclude\) or split it$",
    ):
        read_source(path, max_bytes=5999)


def test_default_size_limit(tmp_path: Path) -> None:
    from codemod.fileio import MAX_SOURCE_BYTES

    path = tmp_path / "big.py"
    path.write_bytes(b"#" * (MAX_SOURCE_BYTES - 1) + b"\n")
    assert read_source(path).text.endswith("#\n")
    path.write_bytes(b"#" * MAX_SOURCE_BYTES + b"\n")
    with pytest.raises(SourceError, match=r"too large to convert \(2\.0 MiB; the limit is 2 MiB\)"):
        read_source(path)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "pipe.py"
    os.mkfifo(path)
    with pytest.raises(SourceError, match=rf"^{re.escape(str(path))}: cannot read: not a regular"):
        read_source(path)


NEWLINES = [
    # (original, new text from the engine, expected after restore_newlines)
    pytest.param("a\n", "a\nb\n", "a\nb\n", id="lf-unchanged"),
    pytest.param("a\r\n", "a\r\nb\n\"\"\"x\n\ny\"\"\"\n", "a\r\nb\r\n\"\"\"x\r\n\r\ny\"\"\"\r\n",
                 id="crlf-generated-lf-converted"),
    pytest.param("a\r", "a\rb\n", "a\rb\r", id="cr-only"),
    pytest.param("a\r", "a\rb", "a\rb\r", id="cr-only-trailing-newline-restored"),
    pytest.param("a\r\nb\n", "a\r\nb\nc\n", "a\r\nb\nc\n", id="mixed-left-alone"),
    pytest.param("a", "a\nb", "a\nb", id="no-trailing-newline-kept"),
    pytest.param("a\n", "a\nb", "a\nb\n", id="trailing-newline-restored"),
    pytest.param("a\r\n", "a\r\nb", "a\r\nb\r\n", id="crlf-trailing-newline-restored"),
    pytest.param("a = 1", "a = 1", "a = 1", id="one-line"),
    pytest.param("", "", "", id="empty"),
    pytest.param("a\r\n", "", "", id="emptied"),
]


@pytest.mark.parametrize(("old", "new", "expected"), NEWLINES)
def test_restore_newlines(old: str, new: str, expected: str) -> None:
    from codemod.fileio import restore_newlines

    assert restore_newlines(new, old) == expected
    assert restore_newlines(expected, old) == expected  # idempotent


@pytest.mark.parametrize(
    ("text", "style"),
    [("a\nb\n", "\n"), ("a\r\nb\r\n", "\r\n"), ("a\rb\r", "\r"), ("a\r\nb\n", None),
     ("a", None), ("", None), ("a\rb\n", None)],
)
def test_newline_style(text: str, style: str | None) -> None:
    from codemod.fileio import newline_style

    assert newline_style(text) == style


def test_encode_keeps_crlf_for_generated_lines(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbfx = 1\r\n")
    source = read_source(path)
    data = encode_source('x = 1\r\n\n\ndef f():\n    """A\n\n    doc."""\n', source)
    assert data == b'\xef\xbb\xbfx = 1\r\n\r\n\r\ndef f():\r\n    """A\r\n\r\n    doc."""\r\n'
    ns: dict[str, object] = {}
    exec(compile(data, str(path), "exec"), ns)
    assert ns["f"].__doc__ == "A\n\n    doc."  # type: ignore[attr-defined]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_owner_kept_when_root_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    os.chown(path, 4321, 4322)
    write_atomic(path, b"x = 2\n", 0o644)
    info = path.stat()
    assert (info.st_uid, info.st_gid) == (4321, 4322)
    assert path.read_bytes() == b"x = 2\n"


def test_write_files_atomic_writes_all(tmp_path: Path) -> None:
    from codemod.atomic_writes import write_files_atomic

    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_bytes(b"a = 1\n")
    b.write_bytes(b"b = 1\n")
    b.chmod(0o640)
    write_files_atomic([(a, b"a = 2\n", 0o644), (b, b"b = 2\n", 0o640)])
    assert (a.read_bytes(), b.read_bytes()) == (b"a = 2\n", b"b = 2\n")
    assert stat.S_IMODE(b.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["a.py", "b.py"]


def test_write_files_atomic_replaces_nothing_when_one_cannot_be_written(tmp_path: Path) -> None:
    from codemod.atomic_writes import write_files_atomic

    files = [tmp_path / f"m{i}.py" for i in range(4)]
    for path in files:
        path.write_bytes(b"old\n")
    files[2].chmod(0o444)
    with pytest.raises(SourceError, match=rf"^{re.escape(str(files[2]))}: file is read-only"):
        write_files_atomic([(path, b"new\n", 0o644) for path in files])
    assert [p.read_bytes() for p in files] == [b"old\n"] * 4
    assert sorted(os.listdir(tmp_path)) == [p.name for p in files]  # no temp file left


def test_write_files_atomic_rename_failure_names_what_was_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codemod.atomic_writes import write_files_atomic

    files = [tmp_path / f"m{i}.py" for i in range(3)]
    for path in files:
        path.write_bytes(b"old\n")
    real_replace = os.replace
    calls = []

    def replace(src: str, dst: object) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr("codemod.atomic_writes.os.replace", replace)
    with pytest.raises(SourceError, match=rf"m1\.py: cannot write: Input/output error "
                       rf"\(already replaced: {re.escape(str(files[0]))}\)"):
        write_files_atomic([(path, b"new\n", 0o644) for path in files])
    assert [p.read_bytes() for p in files] == [b"new\n", b"old\n", b"old\n"]
    assert sorted(os.listdir(tmp_path)) == [p.name for p in files]


def test_write_files_atomic_interrupt_while_staging_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codemod.atomic_writes import write_files_atomic

    files = [tmp_path / f"m{i}.py" for i in range(3)]
    for path in files:
        path.write_bytes(b"old\n")
    real_fsync = os.fsync
    calls = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 3:
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr("codemod.atomic_writes.os.fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        write_files_atomic([(path, b"new\n", 0o644) for path in files])
    assert [p.read_bytes() for p in files] == [b"old\n"] * 3
    assert sorted(os.listdir(tmp_path)) == [p.name for p in files]


def test_write_atomic_refuses_non_regular_target(tmp_path: Path) -> None:
    path = tmp_path / "pipe.py"
    os.mkfifo(path)
    with pytest.raises(SourceError, match="not a regular file; not rewritten"):
        write_atomic(path, b"x = 1\n", 0o644)
    assert stat.S_ISFIFO(path.stat().st_mode)


def test_a_file_changed_since_it_was_read_is_not_replaced(tmp_path: Path) -> None:
    """Another writer between read and write: nothing is replaced, the path is named."""
    from codemod.atomic_writes import write_files_atomic

    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_bytes(b"a = 1\n")
    second.write_bytes(b"b = 1\n")
    read = {p: read_source(p) for p in (first, second)}
    second.write_bytes(b"b = 2  # edited meanwhile\n")
    with pytest.raises(SourceError, match=re.escape(f"{second}: changed on disk since codemod read it")):
        write_files_atomic([(p, b"new\n", read[p].mode) for p in (first, second)],
                           read_as={p: read[p].digest for p in read})
    assert first.read_bytes() == b"a = 1\n"
    assert second.read_bytes() == b"b = 2  # edited meanwhile\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".codemod-tmp")] == []


def test_a_file_changed_between_two_renames_stops_the_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change that lands after staging is caught just before that file's rename."""
    import codemod.atomic_writes
    from codemod.atomic_writes import write_files_atomic

    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_bytes(b"a = 1\n")
    second.write_bytes(b"b = 1\n")
    read = {p: read_source(p) for p in (first, second)}
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        real_replace(src, dst)
        if Path(dst).name == "a.py":
            second.write_bytes(b"b = 3\n")  # the other run writes b.py now

    monkeypatch.setattr(codemod.atomic_writes.os, "replace", replace)
    with pytest.raises(SourceError, match=r"b\.py: changed on disk .*already replaced: .*a\.py"):
        write_files_atomic([(p, b"new\n", read[p].mode) for p in (first, second)],
                           read_as={p: read[p].digest for p in read})
    assert (first.read_bytes(), second.read_bytes()) == (b"new\n", b"b = 3\n")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".codemod-tmp")] == []


@pytest.mark.parametrize(("raw", "encoding", "bom", "text"), ROUND_TRIPS)
def test_the_digest_is_made_when_asked_and_is_that_of_the_bytes_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: bytes, encoding: str, bom: bool,
    text: str,
) -> None:
    """Reading hashes nothing (most files are only read); the digest a write compares
    with is the SHA-256 of the bytes on disk, whatever the encoding, BOM or endings."""
    import hashlib

    import codemod.fileio

    path = tmp_path / "mod.py"
    path.write_bytes(raw)
    real_digest = codemod.fileio.content_digest

    def refuse(data: bytes) -> str:
        raise AssertionError("hashed while reading")

    monkeypatch.setattr(codemod.fileio, "content_digest", refuse)
    source = read_source(path)
    monkeypatch.setattr(codemod.fileio, "content_digest", real_digest)
    assert source.digest == hashlib.sha256(raw).hexdigest()
