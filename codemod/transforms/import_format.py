"""Lay out the import statements a rewrite added or changed like the rest of the file.

What it does
    ``AddImportsVisitor`` merges new names into an existing ``from m import (...)`` on one
    line, and ``RemoveImportsVisitor`` may leave a parenthesised list ragged. Every
    top-level ``from ... import`` that is new or changed is laid out again: on one line
    when it fits the line length the file's own imports were laid out for
    (``_line_limit``: ruff's default, 88, unless they say otherwise), else one name per
    line in parentheses with a trailing comma (the layout ruff/black produce); an
    import that spanned lines before keeps one name per line, and so does one with
    comments between its brackets (each stays with its name: ``name_comments``). Names
    the file already imported keep their order, and the names the tool added follow
    them.
Why
    Generated code is code people will own (docs/ARCHITECTURE.md, "Generated code").
Fix safety
    Only the layout of import statements that already differ from the original changes:
    the same names, aliases, comments and order of statements; untouched statements keep
    every byte. A line of the file's that only gained lines above it (those of an import
    that went, import_edits) is untouched: it is compared without them (``own_code``).
    An import whose comments the layout would not keep (one around ``as``) stays as it
    was.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from codemod.analysis.names import dotted

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")


def own_code(code: str, stmt: cst.BaseStatement) -> str:
    """``code`` (a top-level statement's, as LibCST writes it) without the blank and
    comment lines above the statement (its ``leading_lines``, one line each)."""
    at = 0
    for _ in stmt.leading_lines:  # type: ignore[attr-defined]
        line = _LINE.match(code, at)
        if line is None:
            break
        at = line.end()
    return code[at:]


#: The line length of ruff's and black's defaults, where a file's imports do not say.
DEFAULT_LINE_LENGTH = 88
#: No formatter wraps at fewer columns (PEP 8's 79): an import wrapped although its one
#: line fits in as many was wrapped by choice, and says nothing of the line length.
_SHORTEST_LIMIT = 79


def _line_limit(module: cst.Module, codes: list[str]) -> int:
    """The line length the file's own ``from`` imports were laid out for, as isort (or
    ruff's ``I`` rules) wraps them: at least its longest one-line import, less than the
    one-line form of any import it wrapped (in brackets, no comment; longer than 79
    columns, else the wrap was a choice, kept by its trailing comma). Within what they
    allow, ruff's default (88); a file whose imports say nothing more gets that too. (Its
    longest line of any kind says more about its comments and strings than about its
    imports.) ``codes``: the code of each top-level statement."""
    fits, wrapped = 0, None
    for stmt, code in zip(module.body, codes):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
                or not isinstance(stmt.body[0], cst.ImportFrom):
            continue
        own = own_code(code, stmt).rstrip("\r\n")
        if "\n" not in own:
            fits = max(fits, len(own))
        elif "#" not in own and "(" in own:
            one_line = " ".join(own.replace("(", " ").replace(")", " ").split()).rstrip(",")
            length = len(one_line.replace(" ,", ","))
            if length > _SHORTEST_LIMIT:  # shorter: wrapped by choice (a trailing comma)
                wrapped = length if wrapped is None else min(wrapped, length)
    limit = max(fits, DEFAULT_LINE_LENGTH)
    if wrapped is not None and wrapped - 1 >= fits:
        limit = min(limit, wrapped - 1)
    return limit


def _one_line(node: cst.ImportFrom) -> cst.ImportFrom:
    names = list(node.names)  # type: ignore[arg-type]
    names = [
        alias.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        for alias in names[:-1]
    ] + [names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    return node.with_changes(names=names, lpar=None, rpar=None)


@dataclass
class NameComments:
    """The comments between the brackets of a ``from m import (...)``: the one after
    ``(`` on its line, each name's own-line comments above it and comment after it on its
    line (by ``id`` of its ``ImportAlias``), the own-line comments before ``)``."""

    opening: cst.Comment | None = None
    above: dict[int, list[cst.Comment]] = field(default_factory=dict)
    trailing: dict[int, cst.Comment] = field(default_factory=dict)
    closing: list[cst.Comment] = field(default_factory=list)

    def count(self) -> int:
        return (self.opening is not None) + sum(map(len, self.above.values())) \
            + len(self.trailing) + len(self.closing)


def _gap(spaces: list[cst.BaseParenthesizableWhitespace]) -> tuple[cst.Comment | None, list[cst.Comment]]:
    """The comment on the line where ``spaces`` start, and the own-line comments in them."""
    trailing: cst.Comment | None = None
    own: list[cst.Comment] = []
    for space in spaces:
        if isinstance(space, cst.ParenthesizedWhitespace):
            comment = space.first_line.comment
            if comment is not None:
                if trailing is None and not own:
                    trailing = comment
                else:
                    own.append(comment)
            own += [line.comment for line in space.empty_lines if line.comment is not None]
    return trailing, own


def name_comments(node: cst.ImportFrom) -> NameComments:
    """The comments between the brackets of ``node`` (none without brackets)."""
    comments = NameComments()
    if node.lpar is None or isinstance(node.names, cst.ImportStar):
        return comments
    comments.opening, pending = _gap([node.lpar.whitespace_after])
    for i, alias in enumerate(node.names):
        comments.above[id(alias)] = pending
        spaces = [alias.comma.whitespace_before, alias.comma.whitespace_after] \
            if isinstance(alias.comma, cst.Comma) else []
        if i == len(node.names) - 1 and node.rpar is not None:
            spaces.append(node.rpar.whitespace_before)
        trailing, pending = _gap(spaces)
        if trailing is not None:
            comments.trailing[id(alias)] = trailing
    comments.closing = pending
    return comments


def comment_count(node: cst.CSTNode) -> int:
    """How many comments ``node`` holds."""
    counter = _CommentCounter()
    node.visit(counter)
    return counter.count


class _CommentCounter(cst.CSTVisitor):
    def __init__(self) -> None:
        self.count = 0

    def visit_Comment(self, node: cst.Comment) -> None:
        self.count += 1


def one_per_line(node: cst.ImportFrom, indent: str,
                 comments: NameComments | None = None) -> cst.ImportFrom:
    """``node`` with one name per line in brackets, a trailing comma, ``)`` on a line of
    its own; ``comments`` (``name_comments`` of the names ``node`` holds) where they were:
    each name's above it and after it on its line."""
    comments = comments or NameComments()

    def space(after: cst.Comment | None, own: list[cst.Comment], last_line: str) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(
            first_line=cst.TrailingWhitespace(
                whitespace=cst.SimpleWhitespace("  " if after is not None else ""), comment=after),
            empty_lines=[cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(indent), comment=c)
                         for c in own],
            indent=True,
            last_line=cst.SimpleWhitespace(last_line),
        )

    names = list(node.names)  # type: ignore[arg-type]
    laid = [
        alias.with_changes(comma=cst.Comma(whitespace_after=space(
            comments.trailing.get(id(alias)),
            comments.above.get(id(names[i + 1]), []) if i < len(names) - 1 else comments.closing,
            indent if i < len(names) - 1 else "")))
        for i, alias in enumerate(names)
    ]
    return node.with_changes(
        names=laid,
        lpar=cst.LeftParen(whitespace_after=space(comments.opening, comments.above.get(id(names[0]), []),
                                                  indent)),
        rpar=cst.RightParen(),
    )


def _source(module: cst.Module, node: cst.ImportFrom) -> str:
    dots = "." * len(node.relative)
    return dots + (module_path(node.module) if node.module is not None else "")


def format_imports(original: cst.Module, tree: cst.Module, codes: list[str] | None = None) -> cst.Module:
    """``tree`` with its new or changed top-level ``from`` imports laid out (see module doc).

    ``codes``: ``original.code_for_node`` of each of its top-level statements, when the
    caller knows them."""
    if codes is None:
        codes = [original.code_for_node(stmt) if isinstance(stmt, cst.SimpleStatementLine) else ""
                 for stmt in original.body]
    before = {
        code for stmt, code in zip(original.body, codes)
        if isinstance(stmt, cst.SimpleStatementLine)
    }
    # The file's imports without the lines above them: one that only gained lines above
    # it (those of an import that went, import_edits.carried_lines) is not changed.
    own = {own_code(code, stmt) for stmt, code in zip(original.body, codes) if imported_module(stmt) is not None}
    # The same import as it was: its names (in order) and whether it spanned lines.
    was: dict[str, tuple[list[str], bool]] = {}
    for stmt in original.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            node = stmt.body[0]
            if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
                key = _source(original, node)
                own_lines = original.code_for_node(stmt.with_changes(leading_lines=[]))
                was[key] = ([_alias_text(original, a) for a in node.names],
                            "\n" in own_lines.rstrip("\r\n"))
    limit = _line_limit(original, codes)
    indent = original.default_indent
    body: list[cst.BaseStatement] = []
    changed = False
    for stmt in tree.body:
        body.append(stmt)
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        node = stmt.body[0]
        if not isinstance(node, cst.ImportFrom) or isinstance(node.names, cst.ImportStar):
            continue
        code = tree.code_for_node(stmt)
        if code in before or own_code(code, stmt) in own:
            continue
        old_names, multiline = was.get(_source(tree, node), ([], False))
        comments = name_comments(node)  # they stay with their names
        added: list[cst.ImportAlias] = []
        if old_names:
            # Keep the file's names where they were; the added ones follow.
            def rank(alias: cst.ImportAlias, old_names: list[str] = old_names) -> tuple[int, int]:
                text = _alias_text(tree, alias)
                return (0, old_names.index(text)) if text in old_names else (1, 0)

            names = sorted(node.names, key=rank)
            if old_names == sorted(old_names, key=member_order) and not any(
                    a.asname is not None for a in node.names):
                # The file's names were in isort's order: the added ones go among them
                # (with an alias among them, they go on a line of their own, below).
                names = sorted(node.names, key=lambda alias: member_order(_alias_text(tree, alias)))
            kept = [a for a in names if rank(a)[0] == 0]
            if any(a.asname is not None for a in kept) and len(kept) < len(names):
                # isort keeps ``import X as Y`` on a line of its own: the added names
                # go on a line of their own just below.
                added = names[len(kept):]
                names = kept
            node = node.with_changes(names=names)
        body[-1] = _laid_out(stmt, node, tree, multiline, limit, indent, comments)
        if added:
            extra = stmt.with_changes(body=[node.with_changes(names=added)], leading_lines=[])
            body.append(_laid_out(extra, extra.body[0], tree, False, limit, indent,  # type: ignore[arg-type]
                                  comments))
        if comments.count():
            laid_out = body[-2:] if added else body[-1:]
            counts = [comment_count(line.body[0]) for line in laid_out]  # type: ignore[attr-defined]
            if comment_count(stmt.body[0]) > sum(counts):
                # A comment where the layout does not know it (around ``as``): as it was.
                del body[-len(laid_out):]
                body.append(stmt)
                added = []
        changed = changed or added != [] or not body[-1].deep_equals(stmt)
    return tree.with_changes(body=body) if changed else tree


def _laid_out(stmt: cst.SimpleStatementLine, node: cst.ImportFrom, tree: cst.Module,
              multiline: bool, limit: int, indent: str,
              comments: NameComments | None = None) -> cst.SimpleStatementLine:
    """``stmt`` holding ``node`` on one line if it fits (and did not span lines) and holds
    no comment, else one name per line, with its ``comments``."""
    if comments is None or not comments.count():
        flat = stmt.with_changes(body=[_one_line(node)])
        # Measured without the lines above it (blank lines, comments).
        line = tree.code_for_node(flat.with_changes(leading_lines=[])).rstrip("\r\n")
        if not multiline and len(line) <= limit:
            return flat
    return stmt.with_changes(body=[one_per_line(node, indent, comments)])


def member_order(text: str) -> tuple[int, str, str]:
    """Where isort (ruff's defaults: by type, case aside) puts an imported name (``name``
    or ``name as other``): constants, then classes, then the rest, each alphabetically."""
    name = text.split(" as ")[0]
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name.lower(), name


def _alias_text(module: cst.Module, alias: cst.ImportAlias) -> str:
    """``name`` or ``name as other``: an imported name without its comma and comments."""
    return module.code_for_node(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip()


def module_path(node: cst.BaseExpression) -> str:
    """``a.b`` of an imported module's name (a Name/Attribute chain), read off the nodes
    (generating its code for each import line was a tenth of a conversion's time)."""
    path = dotted(node)
    return cst.Module(body=[]).code_for_node(node) if path is None else path


def _plain_import_module(stmt: cst.BaseStatement) -> str | None:
    """``a.b`` of a top-level ``import a.b`` line (one name, no alias), else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        node = stmt.body[0]
        if isinstance(node, cst.Import) and len(node.names) == 1 and node.names[0].asname is None:
            return dotted(node.names[0].name)
    return None


def imported_module(stmt: cst.BaseStatement) -> str | None:
    """The (first) module an import line imports from; None for other statements."""
    if not isinstance(stmt, cst.SimpleStatementLine) or not stmt.body:
        return None
    node = stmt.body[0]
    if isinstance(node, cst.Import):
        return module_path(node.names[0].name)
    if isinstance(node, cst.ImportFrom):
        module = module_path(node.module) if node.module is not None else ""
        return "." * len(node.relative) + module
    return None


def import_section(module: str, first_party: str = "") -> int:
    """0: ``__future__``, 1: the standard library, 2: third party, 3: ``first_party`` (the
    file's own top-level package), 4: relative imports (isort's order)."""
    top = module.split(".")[0]
    if top == "__future__":
        return 0
    if not top:
        return 4
    if top == first_party:
        return 3
    return 1 if top in sys.stdlib_module_names else 2


def import_order(stmt: cst.BaseStatement) -> tuple[bool, str]:
    """isort's order inside a section: ``import m`` lines first, then by module name."""
    node = stmt.body[0]  # type: ignore[attr-defined]
    return isinstance(node, cst.ImportFrom), (imported_module(stmt) or "").lower()


def _added_line(stmt: cst.BaseStatement, tree: cst.Module, before: set[str],
                old_from: set[str], first_party: str, movable: frozenset[str],
                own: Callable[[], set[str]] = set) -> bool:
    """Whether ``stmt`` is an import line the rewrite added that may move: a plain
    ``import m``, or a ``from`` import of a module the file did not import from, either
    from outside the file's own package or one of ``movable`` (modules that import
    nothing of the tree: importing them earlier changes no import order that matters),
    or of ``movable`` modules from their package (``from pkg import runtime``).
    ``own()``: the file's import lines without the lines above them (one that only
    gained lines above it is the file's own)."""
    if _plain_import_module(stmt) is not None:
        code = tree.code_for_node(stmt)
        return code not in before and own_code(code, stmt) not in own()
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
            or not isinstance(stmt.body[0], cst.ImportFrom):
        return False  # not an import line: no need to generate its code
    code = tree.code_for_node(stmt)
    if code in before or own_code(code, stmt) in own():
        return False
    module = imported_module(stmt) or ""
    if module in old_from:
        return False
    if module in movable or import_section(module, first_party) < 3:
        return True
    # ``from pkg import runtime``: it imports what ``from pkg.runtime import ...`` does.
    names = stmt.body[0].names
    return not isinstance(names, cst.ImportStar) and all(
        isinstance(alias.name, cst.Name) and f"{module}.{alias.name.value}" in movable for alias in names)


def _blank_line_before(
    stmt: cst.SimpleStatementLine | cst.BaseCompoundStatement,
) -> cst.SimpleStatementLine | cst.BaseCompoundStatement:
    lines = list(stmt.leading_lines)
    if lines and lines[0].comment is None:
        return stmt
    return stmt.with_changes(leading_lines=[cst.EmptyLine(), *lines])


def _laid_out_alone(tree: cst.Module, added_at: set[int], first_party: str) -> cst.Module:
    """A file whose only imports the rewrite added: they stay where the visitor put them,
    in isort's order, a blank line between sections."""
    body = list(tree.body)
    at = min(added_at)
    head = body[at].leading_lines
    rest = [stmt for i, stmt in enumerate(body) if i not in added_at]
    if at == 0 and rest and _opens_with_string(rest[0]):
        # A docstring sharing its line with another statement (``"""Doc."""; X = 1``),
        # which the import visitor does not take for one: below it, or ``__doc__`` is lost.
        # Its leading lines are the blank line the visitor put below the import (a first
        # statement's own lines above it are the module's header).
        at = 1
        rest[0] = rest[0].with_changes(leading_lines=[])
    if at == 1 and _opens_with_string(rest[0]) and not (head and head[0].comment is None):
        head = [cst.EmptyLine(), *head]  # one blank line below the module docstring
    added = sorted((body[i] for i in added_at),
                   key=lambda stmt: (import_section(imported_module(stmt) or "", first_party), import_order(stmt)))
    block: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
    for i, stmt in enumerate(added):
        section = import_section(imported_module(stmt) or "", first_party)
        previous = import_section(imported_module(added[i - 1]) or "", first_party) if i else section
        lines = head if i == 0 else [cst.EmptyLine()] if section != previous else []
        block.append(stmt.with_changes(leading_lines=lines))
    if at < len(rest) and imported_module(rest[at]) is None:
        rest[at] = cast("cst.SimpleStatementLine | cst.BaseCompoundStatement", _spaced_after_imports(rest[at]))
    rest[at:at] = block
    return tree.with_changes(body=rest)


def _opens_with_string(stmt: cst.BaseStatement) -> bool:
    """A statement line whose first statement is a string literal (a module's docstring,
    when it is the module's first line), alone on its line or not."""
    return isinstance(stmt, cst.SimpleStatementLine) and bool(stmt.body) \
        and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _spaced_after_imports(stmt: cst.BaseStatement) -> cst.BaseStatement:
    """``stmt`` after an import block: two blank lines above a ``def`` or ``class`` (with
    its decorators), one above anything else, or more if it had them."""
    wanted = 2 if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else 1
    lines = list(stmt.leading_lines)  # type: ignore[attr-defined]
    blank = 0
    while blank < len(lines) and lines[blank].comment is None:
        blank += 1
    if blank >= wanted:
        return stmt
    return stmt.with_changes(leading_lines=[cst.EmptyLine()] * (wanted - blank) + lines)


def group_added_imports(original: cst.Module, tree: cst.Module,
                        codes: list[str] | None = None, first_party: str = "",
                        movable: frozenset[str] = frozenset()) -> cst.Module:
    """Move the plain ``import m`` lines a rewrite added into the file's import sections.

    ``codes``: ``original.code_for_node`` of each of its top-level statements, when the
    caller knows them.

    ``AddImportsVisitor`` appends them after the last import: ``import copy`` ended up
    below ``from torch import nn``. A standard-library module goes after the block's last
    standard-library import or, with none, before the first import of a later section
    (isort's order: ``__future__``, standard library, the rest); another module goes
    before the block's first import of its section. A blank line separates an added line
    from a neighbour of another section. The added lines are sorted among themselves; the
    file's own imports keep their order and their bytes (a blank line may be added
    before one, never removed).
    """
    if codes is None:
        codes = [original.code_for_node(stmt) for stmt in original.body]
    before = set(codes)
    own = functools.cache(lambda: {own_code(code, stmt) for stmt, code in zip(original.body, codes)
                                   if imported_module(stmt) is not None})
    old_from = {imported_module(stmt) or "" for stmt in original.body
                if isinstance(stmt, cst.SimpleStatementLine) and stmt.body
                and isinstance(stmt.body[0], cst.ImportFrom)}
    body = list(tree.body)
    added_at = {i for i, stmt in enumerate(body)
                if _added_line(stmt, tree, before, old_from, first_party, movable, own)}
    if not added_at:
        return tree
    added = sorted((body[i] for i in added_at), key=import_order)
    rest = [stmt for i, stmt in enumerate(body) if i not in added_at]
    first = next((i for i, stmt in enumerate(rest) if imported_module(stmt) is not None), None)
    if first is None:
        return _laid_out_alone(tree, added_at, first_party)
    end = first
    while end < len(rest) and imported_module(rest[end]) is not None:
        end += 1
    head = list(rest[first].leading_lines)
    # (section, statement, added by the tool)
    entries = [(import_section(imported_module(stmt) or "", first_party), stmt, False)
               for stmt in rest[first:end]]
    for stmt in added:
        mine = import_section(imported_module(stmt) or "", first_party)
        same = [i for i, (section, _, _) in enumerate(entries) if section == mine]
        if same:
            # Before the first line of the section that sorts after it (the file's own
            # lines keep their order), else after the section's last line.
            later = [i for i in same if import_order(entries[i][1]) > import_order(stmt)]
            at = later[0] if later else same[-1] + 1
        else:
            at = next((i for i, (section, _, _) in enumerate(entries) if section > mine), len(entries))
        entries.insert(at, (mine, stmt.with_changes(leading_lines=[]), True))
    block = [stmt for _, stmt, _ in entries]
    if entries[0][2]:
        # The blank lines before the block (after the docstring) stay before it; comments
        # stay with the line they were written above.
        blank = 0
        while blank < len(head) and head[blank].comment is None:
            blank += 1
        block[0] = block[0].with_changes(leading_lines=head[:blank])
        old_first = next(i for i, (_, _, new) in enumerate(entries) if not new)
        block[old_first] = block[old_first].with_changes(leading_lines=head[blank:])
    for i in range(1, len(entries)):
        (section, _, new), (previous, _, previous_new) = entries[i], entries[i - 1]
        if section == previous and previous_new and not new:
            # Added lines opened this file line's section: its blank lines go above them.
            j = i - 1
            while j > 0 and entries[j - 1][2] and entries[j - 1][0] == section:
                j -= 1
            lines = list(block[i].leading_lines)
            if lines and all(line.comment is None for line in lines) and j > 0:
                block[j] = block[j].with_changes(leading_lines=lines)
                block[i] = block[i].with_changes(leading_lines=[])
        elif section != previous and (new or previous_new):
            block[i] = _blank_line_before(block[i])
    rest[first:end] = block
    return tree.with_changes(body=rest)
