"""``codemod.cli.main``: every way a run can end maps to a message and an exit code.

Exit 2 with ``error: ...`` on stderr for anything that is not a normal result, no
traceback unless ``CODEMOD_TRACEBACK=1``; the process neither crashes nor hangs.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codemod import api, cli, run_guard

from .trees import (
    TRACEBACK,
    USE_SITE,
    base_tree,
    codemod_command,
    process_env,
    run_main,
    snapshot,
)

FAKE_ENGINE = '''
def convert(path):
    raise ERROR
'''


def _fake_engine(error: BaseException, module: str = "codemod.fake"):
    """A function of a (pretend) codemod module that raises ``error`` while it holds a
    ``path`` local, as the engine's per-file functions do."""
    namespace: dict[str, object] = {"__name__": module, "ERROR": error}
    exec(compile(FAKE_ENGINE, f"<{module}>", "exec"), namespace)
    return namespace["convert"]


@pytest.mark.parametrize(
    ("error", "message"),
    [
        pytest.param(RecursionError("maximum recursion depth exceeded"),
                     r"^error: pkg/m\.py: the code is nested too deeply to convert",
                     id="recursion"),
        pytest.param(MemoryError(), r"^error: pkg/m\.py: out of memory$", id="memory"),
        pytest.param(KeyError("x"), r"^error: pkg/m\.py: internal error: KeyError: 'x'$",
                     id="bug"),
        pytest.param(OSError(5, "Input/output error"),
                     r"^error: pkg/m\.py: internal error: OSError: \[Errno 5\] "
                     r"Input/output error$",
                     id="os-error"),
    ],
)
def test_unexpected_exception_is_exit_2_naming_the_file(
    error: BaseException, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    convert = _fake_engine(error)
    monkeypatch.setattr(api, "run", lambda *a, **k: convert(Path("pkg/m.py")))
    monkeypatch.delenv(cli.TRACEBACK_ENV, raising=False)
    base_tree(tmp_path)
    code, out, err = run_main(["apply", "tree"], tmp_path, capsys)
    assert code == 2
    assert re.search(message, err, re.MULTILINE), err
    assert "CODEMOD_TRACEBACK=1" in err
    assert not TRACEBACK.search(err)


def test_file_is_named_only_from_codemod_frames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    convert = _fake_engine(ValueError("boom"), module="not_codemod")
    monkeypatch.setattr(api, "run", lambda *a, **k: convert(Path("pkg/m.py")))
    base_tree(tmp_path)
    code, _, err = run_main(["apply", "tree"], tmp_path, capsys)
    assert code == 2
    assert err.startswith("error: internal error: ValueError: boom\n"), err


def test_traceback_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    convert = _fake_engine(ValueError("boom"))
    monkeypatch.setattr(api, "run", lambda *a, **k: convert(Path("pkg/m.py")))
    monkeypatch.setenv(cli.TRACEBACK_ENV, "1")
    base_tree(tmp_path)
    code, _, err = run_main(["apply", "tree"], tmp_path, capsys)
    assert code == 2
    assert TRACEBACK.search(err) and "ValueError: boom" in err


def test_keyboard_interrupt_in_the_command_is_aborted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "run", interrupt)
    base_tree(tmp_path)
    code, _, err = run_main(["apply", "tree"], tmp_path, capsys)
    assert (code, err.strip().splitlines()[-1]) == (2, "aborted")


@pytest.mark.parametrize(("args", "code", "stream"),
                         [(["--version"], 0, "out"), (["--help"], 0, "out"),
                          (["apply", "--help"], 0, "out"), ([], 2, "either"),
                          (["frobnicate"], 2, "err")])
def test_click_exits(args: list[str], code: int, stream: str, tmp_path: Path,
                     capsys: pytest.CaptureFixture[str]) -> None:
    got, out, err = run_main(args, tmp_path, capsys)
    assert got == code
    assert (out if stream == "out" else err if stream == "err" else out + err).strip()


def test_recursion_limit_is_restored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    limit = sys.getrecursionlimit()
    base_tree(tmp_path)
    assert run_main(["apply", "--dry-run", "tree"], tmp_path, capsys)[0] == 1
    assert sys.getrecursionlimit() == limit


def test_runs_inline_when_no_large_thread_can_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_guard, "start_worker", lambda target: None)
    base_tree(tmp_path)
    assert run_main(["apply", "--dry-run", "tree"], tmp_path, capsys)[0] == 1


def test_closed_stdout_is_quiet(tmp_path: Path) -> None:
    """``codemod apply --dry-run tree | head -0``: no traceback, no 'Exception ignored'."""
    base_tree(tmp_path)
    proc = subprocess.Popen([*codemod_command(), "apply", "--dry-run", "tree"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=process_env())
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the diff is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 2
    assert "Traceback" not in err and "Exception ignored" not in err, err


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_sigint_aborts_with_exit_2_and_intact_files(tmp_path: Path) -> None:
    """Ctrl-C reaches the main thread while the command runs in its worker thread."""
    tree = base_tree(tmp_path)
    for i in range(40):  # enough use sites to take a while
        (tree / "pkg" / f"use{i}.py").write_text(USE_SITE)
    before = snapshot(tmp_path)
    proc = subprocess.Popen([*codemod_command(), "apply", "tree"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=process_env())
    # Wait until main() has started its worker thread (a second task of the process):
    # a SIGINT during the imports before it would be Python's own traceback.
    deadline = time.monotonic() + 60
    while len(os.listdir(f"/proc/{proc.pid}/task")) < 2 and proc.poll() is None:
        assert time.monotonic() < deadline, "the worker thread never started"
        time.sleep(0.005)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 1:  # finished before the signal: nothing to check
        pytest.skip("the run finished before SIGINT")
    assert proc.returncode == 2, err
    assert "aborted" in err and "Traceback" not in err, err
    after = snapshot(tmp_path)
    for rel, entry in after.items():  # each file old or new, never a mix; temps allowed
        if rel.endswith(".codemod-tmp"):
            continue
        if entry != before.get(rel) and isinstance(entry, tuple) and rel.endswith(".py"):
            compile(entry[0], rel, "exec")  # type: ignore[arg-type]
