"""Which files to read: walking the given paths, excludes, and a cheap text prefilter.

Parsing is the expensive step (docs/ARCHITECTURE.md, "Speed budget"), so discovery stays on plain strings
and ``os.scandir`` (no ``Path`` objects or stat calls per entry while walking), and the
text tests here let the engine skip files without parsing them: ``may_define_root`` (can
this file start a Parameter hierarchy?), ``prefilter`` (does it mention one of these
names?) and ``inert`` (is every mention one that no rewrite touches?). Each test is
conservative: it may keep a file that turns out not to matter, never the reverse.
"""

from __future__ import annotations

import bisect
import errno
import fnmatch
import functools
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from codemod.analysis.text_search import alternation, names_pattern


class DiscoveryError(Exception):
    """A given path cannot be used (missing, not Python, unreadable); names the path."""


_Matcher = Callable[[str], "re.Match[str] | None"]


def _compile(patterns: Sequence[str]) -> tuple[_Matcher | None, _Matcher | None]:
    """Split glob patterns into one regex for bare names and one for relative paths.

    A pattern containing ``/`` (a trailing ``/`` is ignored) is matched against the
    ``/``-separated path relative to the walked root; any other pattern against the name.
    """
    names: list[str] = []
    paths: list[str] = []
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if pattern.startswith("./"):
            pattern = pattern[2:]
        if pattern:
            (paths if "/" in pattern else names).append(fnmatch.translate(pattern))

    def join(parts: list[str]) -> _Matcher | None:
        return re.compile("|".join(parts)).match if parts else None

    return join(names), join(paths)


def iter_python_files(
    paths: Sequence[Path], excludes: Sequence[str], extend_excludes: Sequence[str] = (),
    links_out: list[str] | None = None,
) -> list[Path]:
    """The ``.py`` files under ``paths``, sorted, each real file once.

    A given file is taken as is (excludes apply only inside walked directories); it must
    be a regular file ending in ``.py``. A symlinked directory is entered when its target
    lies inside the project of the root it was found under (``ImportRoots.link_boundary``:
    a symlinked subpackage; its files are found under the link's path, which is how
    ``import`` names them), once per target and never when the target holds the link (a
    loop). A symlinked directory whose target leaves the project and directly holds
    ``.py`` files is not entered: its path is added to ``links_out`` (the caller reports
    it: its files would be left unconverted). A
    symlinked file is kept only if it resolves to a file inside the root it was found
    under. A file reached twice (a directory given twice or under two spellings, a
    link to a file or directory that is also found directly) is returned once: under a
    path that is not a symlink where there is one, unless only the symlinked path lies
    in a package (``ImportRoots.in_package``); else the first found. Converting it twice
    under two module names would write it twice. Raises DiscoveryError for a missing
    path, a broken symlink or a symlink loop, a non-Python or non-regular file, or a
    directory that cannot be listed.
    """
    match_name, match_path = _compile([*excludes, *extend_excludes])
    # real path -> (reached through a symlink?, path as found)
    found: dict[str, tuple[bool, str]] = {}
    for given in paths:
        spelled = os.fspath(given)
        if check_given(given):
            for path, real, is_link in _walk(spelled, match_name, match_path, links_out):
                _keep(found, real, path, is_link)
        else:
            _keep(found, os.path.realpath(spelled), spelled, False)
    return sorted({Path(path) for _link, path in found.values()})


def _keep(found: dict[str, tuple[bool, str]], real: str, path: str, is_link: bool) -> None:
    """Record ``path`` for ``real`` unless a better path is already recorded: one in a
    package over one that is not, then a plain path over a symlinked one, then the first."""
    seen = found.get(real)
    if seen is None or _rank(is_link, path) > _rank(*seen):
        found[real] = (is_link, path)


def _rank(is_link: bool, path: str) -> tuple[bool, bool]:
    return _packaged(path), not is_link


def _packaged(path: str) -> bool:
    """Whether ``path`` lies in a package (its module name does not depend on the walk)."""
    from codemod.analysis.roots import current

    return current().in_package(path)


def check_given(given: Path) -> bool:
    """Whether ``given`` is a directory (True) or a Python file (False); else raise."""
    try:
        info = os.stat(given)
    except OSError as exc:
        raise DiscoveryError(f"{given}: {_stat_problem(given, exc)}") from exc
    if stat.S_ISDIR(info.st_mode):
        return True
    if not stat.S_ISREG(info.st_mode):
        raise DiscoveryError(f"{given}: not a regular file")
    if given.suffix != ".py":
        raise DiscoveryError(f"{given}: not a Python file")
    return False


def _stat_problem(given: Path, exc: OSError) -> str:
    """Why ``given`` cannot be used, for the message."""
    if exc.errno == errno.ELOOP:
        return "symbolic link loop (too many levels of symbolic links)"
    if os.path.islink(given):
        return f"no such file or directory (broken symbolic link to {os.readlink(given)})"
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    return f"cannot access: {exc.strerror or exc}"


def _holds_python(directory: str) -> bool:
    """Whether ``directory`` directly holds a ``.py`` file (unreadable: assume so)."""
    try:
        with os.scandir(directory) as entries:
            return any(entry.name.endswith(".py") for entry in entries)
    except OSError:
        return True


def _walk(
    root: str, match_name: _Matcher | None, match_path: _Matcher | None,
    links_out: list[str] | None = None,
) -> list[tuple[str, str, bool]]:
    """``(path, real path, reached through a symlink)`` of each ``.py`` file below ``root``.

    ``path`` is joined onto ``root`` as given. Below a plain directory the real path of
    a plain file is its real directory joined with its name; symlinked directories are
    entered as ``iter_python_files`` says.
    """
    from codemod.analysis.roots import current

    real_root = os.path.realpath(root)
    inside = real_root.rstrip(os.sep) + os.sep
    boundary = os.path.realpath(current().link_boundary(root))
    within = boundary.rstrip(os.sep) + os.sep
    files: list[tuple[str, str, bool]] = []
    entered: set[str] = {real_root}
    # (directory, its path relative to root, its real path, reached through a link)
    stack: list[tuple[str, str, str, bool]] = [(root, "", real_root, False)]
    while stack:
        directory, rel_dir, real_dir, via_link = stack.pop()
        try:
            with os.scandir(directory) as entries:
                listed = sorted(entries, key=lambda entry: entry.name)  # the same walk each run
        except OSError as exc:
            raise DiscoveryError(f"{directory}: cannot list directory: {exc.strerror}") from exc
        for entry in listed:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if (match_name and match_name(name)) or (match_path and match_path(rel)):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, rel, os.path.join(real_dir, name), via_link))
            elif entry.is_symlink() and os.path.isdir(entry.path):
                target = os.path.realpath(entry.path)
                holds_link = real_dir == target or real_dir.startswith(target.rstrip(os.sep) + os.sep)
                if holds_link or target in entered:
                    continue  # a loop, or a target already walked through another link
                if target == boundary or target.startswith(within):
                    entered.add(target)
                    stack.append((entry.path, rel, target, True))
                elif links_out is not None and _holds_python(target):
                    links_out.append(entry.path)
            elif name.endswith(".py"):
                if entry.is_symlink():
                    # Keep links into the tree only; this drops broken links, link loops,
                    # links that leave the tree and links to directories.
                    real = os.path.realpath(entry.path)
                    if not (real.startswith(inside) and os.path.isfile(real)):
                        continue
                    files.append((entry.path, real, True))
                elif entry.is_file(follow_symlinks=False):
                    files.append((entry.path, os.path.join(real_dir, name), via_link))
                # else: sockets, FIFOs, device files
    return files


def _names_regex(names: frozenset[str]) -> re.Pattern[str]:
    """One alternation of the names, longest first (order does not matter for search)."""
    # Whole identifiers only: ``_weight_loader`` must not match ``default_weight_loader``.
    return names_pattern(r"(?<![\w])(?:{names})(?![\w])", names)


def _names_gate(names: frozenset[str]) -> re.Pattern[str]:
    """The same alternation without the word-boundary lookarounds.

    A pattern that starts with a lookbehind makes ``re`` try every position of the text;
    a bare alternation of literals is scanned about ten times faster. It matches whenever
    the strict pattern does, so it serves as a gate in front of it.
    """
    return re.compile(alternation(names))


_WORD_CHAR = re.compile(r"\w")
#: Shortest substring used as a word gate (shorter ones occur everywhere).
_MIN_GATE_WORD = 5
#: A substring test costs about a tenth of the regex scan: worth it up to this many.
_MAX_GATE_WORDS = 6


@functools.lru_cache(maxsize=32)
def _gate_words(names: frozenset[str]) -> tuple[str, ...] | None:
    """A few substrings such that every name contains one (``Parameter`` for vLLM's
    class names), or None when that takes more than ``_MAX_GATE_WORDS``.

    ``word in text`` is a plain substring search, many times faster than a regex scan
    of an alternation, so a text without any of these words is ruled out at once.
    Greedy set cover: the substring in most of the remaining names, longest first.
    """
    uncovered = set(names)
    words: list[str] = []
    while uncovered:
        if len(words) == _MAX_GATE_WORDS:
            return None
        counts: dict[str, int] = {}
        for name in uncovered:
            least = min(_MIN_GATE_WORD, len(name))
            subs = {name[i:j] for i in range(len(name)) for j in range(i + least, len(name) + 1)}
            for sub in subs:
                counts[sub] = counts.get(sub, 0) + 1
        best = max(counts, key=lambda sub: (counts[sub], len(sub), sub))
        words.append(best)
        uncovered = {name for name in uncovered if best not in name}
    return tuple(words)


def _may_mention(text: str, names: frozenset[str]) -> bool:
    words = _gate_words(names)
    return words is None or any(word in text for word in words)


_IDENTIFIER = re.compile(r"\w+")
_WORD_TAIL = re.compile(r"\w*")


@functools.lru_cache(maxsize=32)
def _word_gates(names: frozenset[str]) -> tuple[str, ...] | None:
    """``_gate_words`` of ``names`` when every name is a run of word characters (then a
    whole-word mention is a maximal run of word characters around a gate word), else
    None."""
    if not all(_IDENTIFIER.fullmatch(name) for name in names):
        return None
    return _gate_words(names)


def _is_word(char: str) -> bool:
    """``\\w`` for one character (``re``'s definition: alphanumeric or ``_``)."""
    return char.isalnum() or char == "_"


def _whole_words(text: str, names: frozenset[str], words: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of every mention of one of ``names`` as a whole identifier, in
    no particular order, where every name is a run of word characters containing one
    of ``words`` (``_word_gates``): each occurrence of a gate word is widened to the
    run of word characters around it, which counts if it is one of the names. A plain
    substring search finds the gate words; a regex scan of the whole text for the
    alternation of the names costs several times more."""
    for word in words:
        at = text.find(word)
        while at >= 0:
            start = at
            while start and _is_word(text[start - 1]):
                start -= 1
            end = _WORD_TAIL.match(text, at + len(word)).end()  # type: ignore[union-attr]
            if text[start:end] in names:
                yield start, end
            at = text.find(word, end)


def whole_word_spans(text: str, names: frozenset[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of every mention of one of ``names`` as a whole identifier, in
    text order: the matches of ``(?<!\\w)(?:names)(?!\\w)``."""
    if not names or not _may_mention(text, names):
        return []
    words = _word_gates(names)
    if words is None:
        return [match.span() for match in _names_regex(names).finditer(text)]
    return sorted(set(_whole_words(text, names, words)))


def mentioned(text: str, names: frozenset[str]) -> frozenset[str]:
    """The names of ``names`` that ``text`` mentions as whole identifiers."""
    if not names or not _may_mention(text, names):
        return frozenset()
    words = _word_gates(names)
    if words is None:
        return _mentioned_by_regex(text, names)
    found: set[str] = set()
    for start, end in _whole_words(text, names, words):
        found.add(text[start:end])
        if len(found) == len(names):
            break
    return frozenset(found)


def _mentioned_by_regex(text: str, names: frozenset[str]) -> frozenset[str]:
    """``mentioned`` for names that are not all runs of word characters: one pass of
    the literal alternation; a match counts if no word character touches it (a
    whole-word mention can never start inside another match: every position inside
    one follows a word character)."""
    found: set[str] = set()
    size = len(text)
    for match in _names_gate(names).finditer(text):
        start, end = match.span()
        if (start and _WORD_CHAR.match(text, start - 1)) or (end < size and _WORD_CHAR.match(text, end)):
            continue
        found.add(match.group())
        if len(found) == len(names):
            break
    return frozenset(found)


def prefilter(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` mentions any of ``names`` as a whole identifier.

    A cheap, conservative test: False means the file cannot refer to any of the names;
    True means it may. An empty ``names`` set matches nothing.
    """
    if not names or not _may_mention(text, names):
        return False
    words = _word_gates(names)
    if words is not None:
        return next(_whole_words(text, names, words), None) is not None
    if _names_gate(names).search(text) is None:
        return False
    return _names_regex(names).search(text) is not None


#: Where a hierarchy can start: a class statement whose bases mention Parameter (or
#: UninitializedTensorMixin), or ``Parameter`` imported under another name. A file that
#: contains neither word cannot start one; the rest of a hierarchy is reached by name.
_ROOT_WORDS = ("Parameter", "UninitializedTensorMixin")
_CLASS_HEAD = re.compile(r"class\s+\w+\s*\(")
_PARAMETER_ALIAS = re.compile(r"Parameter\s+as\s+\w")
_PARENS = re.compile(r"[()]")
#: Longest base list looked at; past it the rest of the file counts as the bases.
_MAX_BASES = 4000


def may_define_root(text: str) -> bool:
    """Whether ``text`` may define a class deriving directly from torch's Parameter.

    True when a class statement's bases mention ``Parameter`` (``nn.Parameter``,
    ``UninitializedParameter``, an alias such as ``parameter.Parameter``...) or the file
    imports ``Parameter`` under another name (``from torch.nn import Parameter as P``).
    """
    if not any(word in text for word in _ROOT_WORDS):
        return False
    if _PARAMETER_ALIAS.search(text):
        return True
    return any(
        word in bases for bases in _class_bases(text) for word in _ROOT_WORDS
    )


def _class_bases(text: str) -> list[str]:
    """The text between the parentheses of every ``class X(...)`` in ``text``.

    Parentheses are counted, so ``class X(make(), Parameter)`` is read whole; one inside
    a string or comment can make the span too long or short, never empty.
    """
    spans = []
    for head in _CLASS_HEAD.finditer(text):
        start = head.end()
        depth = 1
        limit = min(start + _MAX_BASES, len(text))
        end = limit
        for paren in _PARENS.finditer(text, start, limit):
            depth += 1 if paren.group() == "(" else -1
            if depth == 0:
                end = paren.start()
                break
        spans.append(text[start:end])
    return spans


#: An import statement, to the end of its names: ``import a.b as c, d``, ``from .m import
#: (X, Y,  # comment)``. Only identifiers, dots, commas, blanks, comments and line
#: continuations may follow ``import``, so a span never runs into other code.
_IMPORT_SPAN = re.compile(
    r"^[ \t]*(?:from[ \t]+\.*[\w.]*[ \t]+)?import[ \t]+"
    r"(?:\((?:[\s\w.,]|#[^\n]*)*\)|[\w., \t]*(?:\\\r?\n[\w., \t]*)*)",
    re.MULTILINE,
)


@functools.lru_cache(maxsize=32)
def _not_called(names: frozenset[str]) -> re.Pattern[str]:
    """A mention of one of ``names`` that is not directly followed by a call's ``(``."""
    return names_pattern(r"(?<![\w])(?:{names})(?![\w])(?![ \t]*\()", names)


def _aliased(names: frozenset[str]) -> re.Pattern[str]:
    """``X as Y``: an import binding one of ``names`` under another name."""
    return names_pattern(r"(?<![\w])(?:{names})\s+as\s+\w", names)


def import_spans(text: str) -> list[str]:
    """The import statements of ``text`` as ``_IMPORT_SPAN`` finds them (at line starts)."""
    return [match.group() for match in _IMPORT_SPAN.finditer(text)]


def defines_or_aliases(text: str, names: frozenset[str]) -> bool:
    """Whether a class statement of ``text`` names one of ``names`` in its bases (a
    subclass, maybe), or ``text`` imports one under another name (``X as Y``)."""
    if not names or not _may_mention(text, names):
        return False
    if _word_gates(names) is None:
        if _aliased(names).search(text):
            return True
    elif _any_aliased(text, whole_word_spans(text, names)):
        return True
    return "class" in text and any(prefilter(bases, names) for bases in _class_bases(text))


#: What follows a name that an import binds under another name (``_aliased``).
_AS_ALIAS = re.compile(r"\s+as\s+\w")
#: What follows the callee of a call (``_not_called``).
_CALL_OPEN = re.compile(r"[ \t]*\(")


def _any_aliased(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether a mention at one of ``spans`` is followed by ``as NAME`` (``_aliased``)."""
    return any(_AS_ALIAS.match(text, end) for _start, end in spans)


def inert(text: str, names: frozenset[str], fields: frozenset[str] = frozenset()) -> bool:
    """Whether no rewrite can change ``text`` and no use in it can refuse a class.

    True when every whole-word mention of ``names`` (Parameter classes and their
    aliases) is inside an import statement or is the callee of a call (``X(...)``,
    ``mod.X(...)``: a construction, which keeps working when ``X`` becomes a factory),
    none is in a class statement's bases or imported under another name, and no name of
    ``fields`` (backing fields, rewritten where assigned) occurs at all. Every rewrite
    and every leftover the engine reports needs some other kind of mention: an
    ``isinstance`` argument, ``X.attr``, an annotation, a value, a base.
    """
    if fields and prefilter(text, fields):
        return False
    if not names:
        return True
    if _word_gates(names) is None:
        return _inert_by_regex(text, names)
    spans = whole_word_spans(text, names)
    if not spans:
        return True
    if _any_aliased(text, spans):
        return False
    if "class" in text and any(prefilter(bases, names) for bases in _class_bases(text)):
        return False
    loose = [start for start, end in spans if not _CALL_OPEN.match(text, end)]
    return _inside_imports(text, loose)


def _inside_imports(text: str, positions: list[int]) -> bool:
    """Whether every one of ``positions`` (ascending) lies inside an import statement
    (``_IMPORT_SPAN``). The statements are found in text order only as far as the
    positions need: the first position outside one answers."""
    statements = _IMPORT_SPAN.finditer(text)
    start = end = -1
    for position in positions:
        while end <= position:
            statement = next(statements, None)
            if statement is None:
                return False
            start, end = statement.span()
        if position < start:
            return False
    return True


def _inert_by_regex(text: str, names: frozenset[str]) -> bool:
    """``inert``'s test of the mentions of ``names`` (not all runs of word characters)
    by regex scans of the whole text."""
    if _names_gate(names).search(text) is None:
        return True
    if _aliased(names).search(text):
        return False
    if "class" in text and any(prefilter(bases, names) for bases in _class_bases(text)):
        return False
    loose = [m.start() for m in _not_called(names).finditer(text)]
    if not loose:
        return True
    spans = [(m.start(), m.end()) for m in _IMPORT_SPAN.finditer(text)]
    starts = [start for start, _ in spans]
    for position in loose:
        i = bisect.bisect_right(starts, position) - 1
        if i < 0 or position >= spans[i][1]:
            return False
    return True


@functools.lru_cache(maxsize=32)
def _dotted(names: frozenset[str]) -> re.Pattern[str]:
    """``a.b.X`` for X in ``names``; group 1 is ``a.b``."""
    return names_pattern(r"(?<![\w.])(\w+(?:\.\w+)*)\.(?:{names})(?!\w)", names)


def dotted_chains(text: str, names: frozenset[str]) -> list[str]:
    """``a.b`` of every ``a.b.X`` in ``text`` with X one of ``names``, in text order:
    group 1 of each match of ``_dotted(names)``.

    Such a match lies within one run of word characters and dots and starts where the
    run does (``(?<![\\w.])``), and its X is a whole-word mention after a dot; so the
    pattern is tried only at the start of the runs that hold such a mention (one match
    at most per run, as ``finditer`` gives), not at every position of the text.
    """
    if not names or not _may_mention(text, names):
        return []
    pattern = _dotted(names)
    if _word_gates(names) is None:
        return [match.group(1) for match in pattern.finditer(text)]
    run_starts: set[int] = set()
    for start, _end in whole_word_spans(text, names):
        if start and text[start - 1] == ".":
            run_start = start - 1
            while run_start and (text[run_start - 1] == "." or _is_word(text[run_start - 1])):
                run_start -= 1
            run_starts.add(run_start)
    chains = []
    for run_start in sorted(run_starts):
        match = pattern.match(text, run_start)
        if match is not None:
            chains.append(match.group(1))
    return chains
