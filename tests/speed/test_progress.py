"""The progress bar (stderr, only on a terminal, only for runs longer than a moment) and
the ``--jobs`` default (the number of CPUs)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from codemod import api, cli
from codemod.output import console
from codemod.types import Options

ENGINE = Path(__file__).resolve().parents[2] / "fixtures" / "engine"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_per_stage_on_a_terminal():
    stream = Terminal()
    progress = console.Progress(stream)
    progress.started -= progress.DELAY
    for done in range(1, 5):
        progress("parse", done, 4)
    for done in range(1, 3):
        progress("convert", done, 2)
    progress.close()
    out = stream.getvalue()
    assert "parsing" in out and "4/4" in out
    assert "converting" in out and "2/2" in out


def test_total_may_grow_while_parsing():
    stream = Terminal()
    progress = console.Progress(stream)
    progress.started -= progress.DELAY
    progress("parse", 1, 2)
    progress("parse", 2, 5)
    progress("parse", 5, 5)
    progress.close()
    assert "5/5" in stream.getvalue()


def test_nothing_for_a_quick_run():
    stream = Terminal()
    progress = console.Progress(stream)
    progress.started += 3600  # the run "started" in the future: never longer than DELAY
    progress("convert", 1, 1)
    progress.close()
    assert stream.getvalue() == ""


def test_nothing_when_not_a_terminal():
    stream = io.StringIO()
    progress = console.Progress(stream)
    progress.started -= 3600
    progress("convert", 1, 1)
    progress.close()
    assert stream.getvalue() == ""


def test_apply_reports_progress_and_prints_no_bar_when_captured(capsys, monkeypatch):
    seen: list[tuple[str, int, int]] = []
    run = api.run

    def spy(paths, options, progress=None, **kwargs):
        def record(stage: str, done: int, total: int) -> None:
            seen.append((stage, done, total))
            if progress is not None:
                progress(stage, done, total)
        return run(paths, options, progress=record, **kwargs)

    monkeypatch.setattr(api, "run", spy)
    monkeypatch.setattr(console.Progress, "DELAY", 0.0)
    assert cli.main(["apply", "--dry-run", str(ENGINE)]) == 1
    err = capsys.readouterr().err
    assert "converting" not in err and "parsing" not in err
    stages = [stage for stage, _, _ in seen]
    assert "parse" in stages and "convert" in stages
    converts = [(done, total) for stage, done, total in seen if stage == "convert"]
    assert converts[-1][0] == converts[-1][1]


def test_jobs_default_is_the_number_of_cpus(monkeypatch, tmp_path):
    monkeypatch.setattr(cli.os, "cpu_count", lambda: 7)
    assert cli._options((tmp_path,), (), (), None).jobs == 7
    assert cli._options((tmp_path,), (), (), 3).jobs == 3


def test_jobs_from_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.codemod]\njobs = 5\n")
    assert cli._options((tmp_path,), (), (), None).jobs == 5


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_accepts_progress_none(jobs):
    assert api.run([ENGINE], Options(jobs=jobs), progress=None).changed()
