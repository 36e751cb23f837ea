"""What ``apply`` prints on stderr besides errors: the progress bar, the one-line summary
with the refused classes, and the note on changes outside the given paths.

Rendering only: these read a run's result and print; the CLI decides what is written
and which exit code follows.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

    from codemod.pipeline.results import RunResult


def err(message: str, **style: object) -> None:
    """``message`` on stderr, styled (colour, bold) when given ``style``."""
    click.echo(click.style(message, **style) if style else message, err=True)  # type: ignore[arg-type]


def changes_beyond(result: RunResult, paths: tuple[Path, ...], dry_run: bool) -> bool:
    """Whether the conversion of the tree changes files outside the given ``paths``;
    if so, say which, and which directory to run on (nothing is written then: the given
    files alone would leave the rest of the tree using classes that became functions)."""
    from codemod.output.writes import changed_outside

    scope = result.scope
    outside = changed_outside(result)
    if not outside:
        return False
    trees = ", ".join(str(path) for path in scope.walk) if scope is not None else ""
    level = "note" if dry_run else "error"
    err(f"{level}: converting {', '.join(map(str, paths))} also changes {len(outside)} file(s) "
         f"of its tree outside the given path(s):", fg="yellow" if dry_run else "red")
    for path in outside:
        err(f"  {path}", fg="yellow" if dry_run else "red")
    if dry_run:
        err(f"the diff above covers the whole tree; `codemod apply {trees}` writes it",
             fg="yellow")
    else:
        err(f"error: nothing written: run `codemod apply {trees}` to convert the whole tree",
             fg="red")
    return True


class Progress:
    """click's progress bar on stderr, for a run that lasts longer than a moment.

    Shown only when stderr is a terminal, and only once the run has taken ``DELAY``
    seconds (a quick run prints nothing but its result); one bar per stage of the
    engine (parsing, converting).
    """

    DELAY = 0.5
    LABELS = {"parse": "parsing   ", "convert": "converting"}

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = _isatty(stream)
        self.started = time.monotonic()
        self.bar: ProgressBar[int] | None = None
        self.stage = ""
        self.position = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is not None and stage != self.stage:
            self.close()
        if self.bar is None:
            if time.monotonic() - self.started < self.DELAY:
                return
            self.bar = click.progressbar(length=total, label=self.LABELS.get(stage, stage),
                                         file=self.stream, show_pos=True)
            self.bar.__enter__()
            self.stage, self.position = stage, 0
        self.bar.length = max(total, done)
        self.bar.update(done - self.position)
        self.position = done

    def close(self) -> None:
        """End the current bar (its line stays; the summary follows below it)."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def summary(result: RunResult, dry_run: bool, written: int) -> None:
    """One line of what was done: "would" for a dry run; classes and rewrites only when
    files were (or would be) written, since nothing is converted otherwise."""
    plan = result.plan
    converted = len(plan.converted()) if plan else 0
    counts = result.counts()
    verb = "would change" if dry_run else "changed"
    # New files (runtime modules) are not among those scanned: named apart.
    n_new = sum(1 for f in result.changed() if f.path not in result.sources) if written or dry_run else 0
    n_changed = (len(result.changed()) if dry_run else written) - n_new
    detail = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    line = f"{verb} {n_changed} file(s) of {result.scanned} scanned ({result.parsed} parsed)"
    if n_new:
        line += f" and {'would add' if dry_run else 'added'} {n_new} runtime module(s)"
    if n_changed and converted:
        line += f"; {'would convert' if dry_run else 'converted'} {converted} class(es)"
    if n_changed and detail:
        line += f" [{detail}]"
    err(line, bold=True)
    refusals = result.refusals
    if refusals:
        err(f"refused {len(refusals)} class(es), left unchanged:", fg="yellow")
        for refusal in refusals:
            err(f"  {refusal.render()}", fg="yellow")
