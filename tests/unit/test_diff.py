"""Unit tests for codemod.output.diff."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from codemod.output import unified_diff

CASES = [
    pytest.param(
        "a = 1\nb = 2\n",
        "a = 1\nb = 3\n",
        "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n",
        id="basic",
    ),
    pytest.param(
        "a = 1\nb = 2",
        "a = 1\nb = 3",
        "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n"
        "\\ No newline at end of file\n+b = 3\n\\ No newline at end of file\n",
        id="no-trailing-newline-both",
    ),
    pytest.param(
        "a = 1",
        "a = 1\n",
        "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1 +1 @@\n-a = 1\n"
        "\\ No newline at end of file\n+a = 1\n",
        id="newline-added",
    ),
    pytest.param(
        "a = 1\r\nb = 2\r\n",
        "a = 1\r\nb = 3\r\n",
        "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,2 +1,2 @@\n a = 1\r\n-b = 2\r\n+b = 3\r\n",
        id="crlf-kept",
    ),
    pytest.param(
        "x = 1  \x0c comment\ny = 2\n",
        "x = 1  \x0c comment\ny = 3\n",
        "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,2 +1,2 @@\n x = 1  \x0c comment\n-y = 2\n+y = 3\n",
        id="form-feed-is-not-a-line-end",
    ),
    pytest.param(
        "", "x = 1\n", "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -0,0 +1 @@\n+x = 1\n", id="from-empty"
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_unified_diff(old: str, new: str, expected: str) -> None:
    assert unified_diff(Path("pkg/m.py"), old, new) == expected


@pytest.mark.parametrize("text", ["", "x\n", "x"], ids=["empty", "line", "no-newline"])
def test_equal_texts_give_empty_diff(text: str) -> None:
    assert unified_diff("m.py", text, text) == ""


def test_accepts_str_path() -> None:
    assert unified_diff("m.py", "a\n", "b\n").startswith("--- a/m.py\n+++ b/m.py\n")


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc"),
        ("a\nb", "a\nb\nc\n"),
        ("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nX\n4\n5\n6\n7\nY\n9\n"),
    ],
    ids=["drop-newline", "add-newline", "two-hunks"],
)
def test_patch_applies_diff(tmp_path: Path, old: str, new: str) -> None:
    (tmp_path / "m.py").write_bytes(old.encode())
    diff = unified_diff("m.py", old, new)
    subprocess.run(["patch", "-p1", "-s"], input=diff.encode(), cwd=tmp_path, check=True)
    assert (tmp_path / "m.py").read_bytes() == new.encode()
