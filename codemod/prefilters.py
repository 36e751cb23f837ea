"""Cheap text prefilters: which files can be skipped without parsing them.

Parsing is the expensive step (docs/ARCHITECTURE.md, "Speed budget"), so these tests stay
on plain strings and let the engine skip files: ``may_define_root`` (can this file start a
Parameter hierarchy?), ``prefilter`` and ``mentioned`` (does it mention one of these
names?), ``inert`` (is every mention one that no rewrite touches?), ``import_spans``,
``defines_or_aliases`` and ``dotted_chains``. Each test is conservative: it may keep a
file that turns out not to matter, never the reverse. Most are a scan tuned for speed
beside the regex that defines it (``_mentioned_by_regex``, ``_inert_by_regex``); the tests
check each pair.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator

from codemod.analysis.text_search import alternation, names_pattern


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
#: ``Parameter`` bound to a name by an assignment (``P = nn.Parameter``, ``P, x =
#: nn.Parameter, 1``), not called.
_PARAMETER_ASSIGNED = re.compile(
    r"=[ \t]*(?:[\w.]*\.)?(?:Uninitialized)?Parameter[ \t]*(?:$|#|;|,)", re.MULTILINE)
_PARENS = re.compile(r"[()]")
#: Longest base list looked at; past it the rest of the file counts as the bases.
_MAX_BASES = 4000


def may_define_root(text: str) -> bool:
    """Whether ``text`` may define a class deriving directly from torch's Parameter.

    True when a class statement's bases mention ``Parameter`` (``nn.Parameter``,
    ``UninitializedParameter``, an alias such as ``parameter.Parameter``...) or the file
    binds ``Parameter`` to another name (``from torch.nn import Parameter as P``,
    ``P = nn.Parameter``).
    """
    if not any(word in text for word in _ROOT_WORDS):
        return False
    if _PARAMETER_ALIAS.search(text) or _PARAMETER_ASSIGNED.search(text):
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


def aliased(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` may import one of ``names`` under another name (``X as Y``)."""
    if not names or not _may_mention(text, names):
        return False
    if _word_gates(names) is None:
        return _aliased(names).search(text) is not None
    return _any_aliased(text, whole_word_spans(text, names))


def defines_or_aliases(text: str, names: frozenset[str]) -> bool:
    """Whether a class statement of ``text`` names one of ``names`` in its bases (a
    subclass, maybe), or ``text`` imports one under another name (``X as Y``)."""
    if aliased(text, names):
        return True
    if not names or not _may_mention(text, names):
        return False
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
