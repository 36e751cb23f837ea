"""What converting one file in a planning round gives: the new text with its counts and
leftovers (``FileConversion``), and a worker's whole answer for the file, which may be
the leftovers alone (``Converted``). Plain values, no LibCST: ``check``'s leftover scan
makes them without importing the conversion machinery."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

#: (line, column, class qualname, source) of each use of a converted class no rewrite
#: covers.
Leftovers = list[tuple[int, int, str, str]]


@dataclass
class FileConversion:
    """The pure result of converting one file under a plan."""

    new_text: str
    counts: Counter[str]
    leftovers: Leftovers
    #: The code of the statements generated for ``new_text``; the rest of it is the
    #: file's own text, which LibCST parsed already (None: all of it was generated).
    generated: list[str] | None = None
    #: (line or None, why) of each shape a rewrite not tied to a class name left as it
    #: was, where it would have acted elsewhere (``left_alone``): reported as warnings.
    left_alone: list[tuple[int | None, str]] = field(default_factory=list)
    #: Why the conversion must not be written (the run fails on this file), if it must not.
    error: str | None = None


@dataclass
class Converted:
    """A worker's answer for one file: the conversion (None: stopped at a leftover), and
    the verification of its new text if done."""

    conversion: FileConversion | None
    leftovers: Leftovers
    verified: bool = False
    error: str | None = None
    #: The file was parsed here (not in the parent), or could not be: why.
    parsed_here: bool = False
    parse_error: str | None = None
    #: A file chosen only for a rewrite not tied to a class name, which none can change
    #: (``may_rewrite_shapes``): not a candidate after all.
    not_candidate: bool = False
