"""The console-script entry point leaves with ``os._exit``: nothing printed may be lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from codemod.cli import main

REPO = Path(__file__).resolve().parents[2]
ENTRY = "import sys; from codemod.cli import main_entry; sys.argv[0] = 'codemod'; main_entry()"


def _entry(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True,
                          text=True, timeout=120, **kwargs)


def test_entry_prints_everything_main_prints(capsys):
    tree = str(REPO / "fixtures" / "engine")
    code = main(["check", "--format", "json", tree])
    expected = capsys.readouterr().out
    done = _entry("check", "--format", "json", tree)
    assert done.returncode == code == 1
    assert done.stdout == expected and len(expected) > 1000  # a long output, all of it


def test_entry_exit_code_without_findings(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    done = _entry("check", str(tmp_path))
    assert done.returncode == 0 and "All checks passed" in done.stderr


def test_entry_reader_gone_is_quiet():
    """``codemod check ... | head -1``: no traceback about the closed pipe."""
    tree = str(REPO / "fixtures" / "engine")
    proc = subprocess.Popen([sys.executable, "-c", ENTRY, "check", tree],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err
    assert proc.returncode != 0


def test_entry_prints_the_whole_diff(capsys, tmp_path):
    tree = str(REPO / "fixtures" / "engine")
    code = main(["apply", "--dry-run", tree])
    expected = capsys.readouterr().out
    done = _entry("apply", "--dry-run", tree)
    assert done.returncode == code
    assert done.stdout == expected and expected.count("\n+++ ") >= 2
