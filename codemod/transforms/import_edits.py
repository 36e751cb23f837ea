"""Import edits of a conversion: add what the rewrites need, remove what they consumed.

What it does
    ``add_imports`` and ``remove_imports`` run LibCST's ``AddImportsVisitor`` and
    ``RemoveImportsVisitor`` on a converted module; ``request_import_removals`` asks for the
    removal of imports of names a rewrite consumed (``isinstance(p, X)`` -> a feature check).
Why
    Run as codemods on a whole module, both visitors deep-copy it and walk it several times
    (RemoveImportsVisitor also computes scope and qualified-name metadata): on a large file
    that is most of the conversion time. Both only ever change top-level import
    statements, so they run here on a small module with the same top-level import
    statements (the other statements stand in as placeholders), with the same result
    (tests/speed prove it), except for the comments that LibCST loses (below).
Fix safety
    An import is removed only when nothing uses it any more; one that was unused before
    the conversion is never asked for. Its comments: what stood above a removed statement
    stays, what stood inside it goes with it. LibCST drops a removed statement with its
    leading lines; here the comment lines above it (and the blank lines around them, at
    most one blank line where the statement stood, ``carried_lines``) stay above the next
    statement, or at the end of the block. The comment after it on its line
    (``# noqa: F401``) and those between its brackets go with it. Of an import that keeps
    some names, each name that stays keeps its comments, the own-line comments above a
    name that goes stay, and the comment after a name that goes goes
    (``names_kept_with_comments``; LibCST dropped the comma, and with it the comment, of
    the last name kept). The import layout (import_format) leaves a line that only gained
    lines above it as it was. docs/fix-safety.md, "Imports that go".
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeGuard, TypeVar

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from codemod.analysis import python_trees
from codemod.analysis.classes import FileFacts
from codemod.analysis.statement_text import same_lines
from codemod.transforms.import_format import NameComments, module_path, name_comments, one_per_line

_PLACEHOLDER = "__codemod_placeholder_{}__"
_Statement = TypeVar("_Statement", bound=cst.BaseStatement)


def is_import_line(stmt: cst.BaseStatement) -> TypeGuard[cst.SimpleStatementLine]:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body
    )


def add_imports(tree: cst.Module, context: CodemodContext) -> cst.Module:
    """``AddImportsVisitor(context).transform_module(tree)``, without walking the bodies.

    The visitor reads the top-level statements (the import block, the docstring, the
    first statement after the block, whose leading blank line it may add); it never
    looks inside a compound statement, and of any other statement it only asks whether
    it is the first one (a docstring or ``__strict__`` flag) and whether it is a line of
    imports. Each compound statement, and each later line that imports nothing, is
    replaced by a one-line placeholder with the same leading lines (itself a line that
    imports nothing), and put back afterwards. Of an import line it only reads the
    modules: one that imports (absolutely) none of the requested modules, nor
    ``__future__``, can neither satisfy a request nor receive a name, and stands in as
    ``import <placeholder>`` (still a line of imports).

    Of the statements the visitor sees it reads only the first (a docstring or
    ``__strict__`` flag, skipped), the lines of one import each that follow, and the
    statement after them, which may receive a blank line above it (``_split_module``,
    ``_GatherTopImportsBeforeStatements``, ``leave_ImportFrom`` only edits those
    imports): it is given the statements up to the first one after the first that is
    not such a line, and the others follow unchanged.
    """
    if not context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
        return tree  # nothing requested: the visitor would return the tree unchanged
    requested = {item.resolve_relative(context.full_package_name).module
                 for item in AddImportsVisitor._get_imports_from_context(context)}
    shallow: list[cst.BaseStatement] = []
    for index, stmt in enumerate(tree.body):
        placeholder = cst.Name(_PLACEHOLDER.format(index))
        if isinstance(stmt, cst.BaseCompoundStatement) or (index and not _has_import(stmt)):
            stmt = cst.SimpleStatementLine(body=[cst.Expr(placeholder)], leading_lines=stmt.leading_lines)
        elif index and not _may_serve(stmt, requested):
            stmt = cst.SimpleStatementLine(body=[cst.Import(names=[cst.ImportAlias(placeholder)])],
                                           leading_lines=stmt.leading_lines)
        shallow.append(stmt)
        if index and not one_import(stmt):
            break  # the first statement after the imports at the top: the last one read
    done = AddImportsVisitor(context).transform_module(tree.with_changes(body=shallow))
    body: list[cst.BaseStatement] = []
    for stmt in done.body:
        original = _placeholder_for(stmt, tree)
        if original is None:
            body.append(stmt)
        elif same_lines(original.leading_lines, stmt.leading_lines):  # type: ignore[attr-defined]
            body.append(original)
        else:
            body.append(original.with_changes(leading_lines=stmt.leading_lines))
    body.extend(tree.body[len(shallow):])
    return done.with_changes(body=body)


def one_import(stmt: cst.BaseStatement) -> bool:
    """A line of one ``import`` statement: what ``AddImportsVisitor`` counts as an import
    at the top (``m.SimpleStatementLine(body=[m.ImportFrom() | m.Import()])``)."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))


def _may_serve(stmt: cst.BaseStatement, requested: set[str]) -> bool:
    """Whether an import line may satisfy, or receive, one of the ``requested`` imports
    (every relative import, and ``__future__``, are kept to be safe)."""
    for small in stmt.body:  # type: ignore[attr-defined]
        if isinstance(small, cst.ImportFrom):
            if small.relative or small.module is None:
                return True
            module = module_path(small.module)
            if module in requested or module == "__future__":
                return True
        elif isinstance(small, cst.Import):
            if any(module_path(alias.name) in requested for alias in small.names):
                return True
    return False


def _placeholder_for(stmt: cst.BaseStatement, tree: cst.Module) -> cst.BaseStatement | None:
    """The statement of ``tree`` that ``stmt`` stands in for, if it is a placeholder."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    expr = stmt.body[0]
    if isinstance(expr, cst.Import) and len(expr.names) == 1 and isinstance(expr.names[0].name, cst.Name) \
            and expr.names[0].asname is None:
        name = expr.names[0].name.value
        index = _placeholder_index(name, tree)
        return tree.body[index] if index is not None and _has_import(tree.body[index]) else None
    if not (isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Name)):
        return None
    index = _placeholder_index(expr.value.value, tree)
    if index is None:
        return None
    original = tree.body[index]
    return original if isinstance(original, cst.BaseCompoundStatement) or (
        index and not _has_import(original)) else None


def _placeholder_index(name: str, tree: cst.Module) -> int | None:
    """The index in ``tree.body`` that the placeholder name ``name`` stands for."""
    prefix, _, suffix = _PLACEHOLDER.partition("{}")
    if not (name.startswith(prefix) and name.endswith(suffix)):
        return None
    index = name[len(prefix): -len(suffix)]
    if not index.isdigit() or int(index) >= len(tree.body):
        return None
    return int(index)


def _has_import(stmt: cst.BaseStatement) -> bool:
    """A simple statement line with an ``import`` among its statements."""
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body)


@functools.lru_cache(maxsize=256)
def _reference_word(name: str) -> re.Pattern[str]:
    """``name`` as a whole word that is not an attribute (``x.name`` never refers to it)."""
    return re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")


_IMPORT_WORD = re.compile(r"(?<![\w.])import(?!\w)")


def remove_imports(tree: cst.Module, names: set[str], context: CodemodContext,
                    code: str | None = None,
                    statement_code: Callable[[cst.Module, cst.BaseStatement], str] | None = None,
                    ) -> cst.Module:
    """``RemoveImportsVisitor(context).transform_module(tree)``, without scoping the whole file.

    The visitor removes a requested import when scope analysis finds no reference to its
    name (and no ``__all__`` entry or string annotation names it), and it edits each
    import statement on its own. So:

    * a name with no occurrence outside the top-level imports except as an attribute
      (``Features.X``) has no reference: its imports go;
    * for any other name the visitor decides on a module made of the top-level import
      statements and the statements that mention one of those names: all its bindings,
      references, exports and annotations are there, so the verdict is the same;
    * the import statements are then rewritten one by one, asking only for the
      removals decided above.

    A statement that mentions such a name and holds a nested import (which the visitor
    would edit too) sends the whole module to the visitor, as before.

    ``code``: ``tree.code``, when the caller has it without generating the whole module
    (``FileFacts.code_of``); ``statement_code(tree, stmt)``: ``tree.code_for_node(stmt)``
    of a top-level statement, likewise (``FileFacts.statement_code``).
    """
    code = tree.code if code is None else code
    code_for = statement_code or _generated_code
    import_code = {
        index: [tree.code_for_node(small) for small in stmt.body
                if isinstance(small, (cst.Import, cst.ImportFrom))]
        for index, stmt in enumerate(tree.body) if is_import_line(stmt)
    }
    unused: set[str] = set()
    present: set[str] = set()
    for name in names:
        word = _reference_word(name)
        inside = sum(len(word.findall(text)) for texts in import_code.values() for text in texts)
        (unused if len(word.findall(code)) == inside else present).add(name)
    if present:
        present -= _proven_used(tree, present, import_code, code_for)
    if present:
        kept: list[cst.BaseStatement] = []
        for index, stmt in enumerate(tree.body):
            if index in import_code:
                kept.append(stmt)
                continue
            text = code_for(tree, stmt)
            if any(_reference_word(name).search(text) for name in present):
                if _IMPORT_WORD.search(text):
                    return _CommentsKept(context).transform_module(tree)
                kept.append(stmt)
        decided = RemoveImportsVisitor(context).transform_module(tree.with_changes(body=kept))
        still = _top_level_imported(decided)
        unused |= {name for name in present if name not in still}
    if not unused:
        return tree
    only = CodemodContext(filename=context.filename, full_module_name=context.full_module_name,
                          full_package_name=context.full_package_name)
    for module, obj, asname in RemoveImportsVisitor._get_imports_from_context(context):
        local = asname or (obj if obj is not None else module.split(".")[0])
        if local in unused:
            RemoveImportsVisitor.remove_unused_import(only, module, obj=obj, asname=asname)
    body: list[cst.BaseStatement] = []
    # The lines above an import that goes (its comments, a section break) stay above the
    # next statement (carried_lines).
    above: list[cst.EmptyLine] = []
    for index, stmt in enumerate(tree.body):
        if index in import_code and any(
            _reference_word(name).search(text) for name in unused for text in import_code[index]
        ):
            alone = tree.with_changes(body=[stmt], header=(), footer=())
            kept_part = RemoveImportsVisitor(only).transform_module(alone).body
            if not kept_part:
                above = carried_lines(above, stmt.leading_lines)
                continue
            stmt = _with_name_comments(stmt, kept_part[0], tree.default_indent)
        if above:
            stmt = stmt.with_changes(leading_lines=carried_lines(above, stmt.leading_lines))
            above = []
        body.append(stmt)
    return tree.with_changes(body=body, footer=carried_to_footer(above, tree.footer))


def carried_lines(above: Sequence[cst.EmptyLine], below: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """The lines left between two statements once the statement between them goes:
    ``above`` stood above it, ``below`` above the next one.

    Every comment line stays, in its order, with the blank lines above it. Of the blank
    lines that stood between the last comment (or the statement before) and the
    statement that goes, at most one stays (a section break), and none when ``below``
    starts with a blank line: no break is doubled.
    """
    if not above:
        return list(below)
    last = max((i for i, line in enumerate(above) if line.comment is not None), default=-1)
    gap = [] if below and below[0].comment is None else list(above[last + 1:last + 2])
    return [*above[:last + 1], *gap, *below]


def carried_to_footer(above: Sequence[cst.EmptyLine],
                      footer: Sequence[cst.EmptyLine]) -> Sequence[cst.EmptyLine]:
    """The lines after a block's (a module's) last statement once the statement after
    them went: the comment lines of ``above`` stay (no blank line is added at the end)."""
    last = max((i for i, line in enumerate(above) if line.comment is not None), default=-1)
    return footer if last < 0 else [*above[:last + 1], *footer]


def _with_name_comments(original: cst.BaseStatement, kept: _Statement, indent: str) -> _Statement:
    """``kept``, LibCST's ``original`` less some of its names, with the comments between
    its brackets (``names_kept_with_comments``)."""
    if isinstance(original, cst.SimpleStatementLine) and isinstance(kept, cst.SimpleStatementLine) \
            and len(original.body) == len(kept.body) == 1:
        old, new = original.body[0], kept.body[0]
        if isinstance(old, cst.ImportFrom) and isinstance(new, cst.ImportFrom):
            return kept.with_changes(body=[names_kept_with_comments(old, new, indent)])
    return kept


def names_kept_with_comments(original: cst.ImportFrom, kept: cst.ImportFrom,
                             indent: str) -> cst.ImportFrom:
    """``kept`` (``RemoveImportsVisitor``'s ``original`` less some names), laid out one
    name per line with the comments between ``original``'s brackets, where LibCST drops
    or moves some (the comma that held a comment goes with the name before or after it):
    a name that stays keeps its comments; the own-line comments above a name that goes
    stay above the next name that stays (or before ``)``); the comment after a name that
    goes, on its line, goes with it. ``kept`` itself when ``original`` has no comment
    between brackets."""
    if isinstance(kept.names, cst.ImportStar) or isinstance(original.names, cst.ImportStar):
        return kept
    comments = name_comments(original)
    if not comments.count():
        return kept
    staying = {(alias.evaluated_name, alias.evaluated_alias) for alias in kept.names}
    names: list[cst.ImportAlias] = []
    result = NameComments(opening=comments.opening)
    carried: list[cst.Comment] = []
    for alias in original.names:
        above = carried + comments.above.get(id(alias), [])
        if (alias.evaluated_name, alias.evaluated_alias) not in staying:
            carried = above
            continue
        carried = []
        names.append(alias)
        result.above[id(alias)] = above
        if id(alias) in comments.trailing:
            result.trailing[id(alias)] = comments.trailing[id(alias)]
    result.closing = carried + comments.closing
    if len(names) != len(kept.names) or not result.count():
        return kept  # (no comment to keep: LibCST's layout)
    return one_per_line(original.with_changes(names=names), indent, result)


class _CommentsKept(RemoveImportsVisitor):
    """``RemoveImportsVisitor`` that leaves the lines above a statement it removes (their
    comments) above the next statement of the block, or at its end (``carried_lines``)."""

    def __init__(self, context: CodemodContext) -> None:
        super().__init__(context)
        self._emptied: set[int] = set()
        self._indent = "    "

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        if original_node.body and not updated_node.body:
            self._emptied.add(id(original_node))  # its parent drops it
        return updated_node

    def leave_ImportFrom(self, original_node: cst.ImportFrom,
                         updated_node: cst.ImportFrom) -> cst.ImportFrom | cst.RemovalSentinel:
        result = super().leave_ImportFrom(original_node, updated_node)
        if isinstance(result, cst.ImportFrom) and result is not updated_node:
            return names_kept_with_comments(updated_node, result, self._indent)
        return result

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._indent = node.default_indent

    def _carried(self, original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement],
                 footer: Sequence[cst.EmptyLine],
                 ) -> tuple[list[cst.BaseStatement], Sequence[cst.EmptyLine]] | None:
        gone = [stmt for stmt in original if id(stmt) in self._emptied]
        if not gone or len(original) - len(gone) != len(updated):
            return None
        body: list[cst.BaseStatement] = []
        kept = iter(updated)
        above: list[cst.EmptyLine] = []
        for stmt in original:
            if id(stmt) in self._emptied:
                above = carried_lines(above, stmt.leading_lines)  # type: ignore[attr-defined]
                continue
            new = next(kept)
            if above:
                new = new.with_changes(
                    leading_lines=carried_lines(above, new.leading_lines))  # type: ignore[attr-defined]
                above = []
            body.append(new)
        return body, carried_to_footer(above, footer)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.BaseSuite:
        carried = self._carried(original_node.body, updated_node.body, updated_node.footer)
        if carried is None:
            return updated_node
        return updated_node.with_changes(body=carried[0], footer=carried[1])

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        updated_node = super().leave_Module(original_node, updated_node)
        carried = self._carried(original_node.body, updated_node.body, updated_node.footer)
        if carried is None:
            return updated_node
        return updated_node.with_changes(body=carried[0], footer=carried[1])


class _LoadsOnly(cst.CSTVisitor):
    """Counts the Names ``name`` that are certainly read (a callee, an argument, an
    attribute chain's head, anything in an annotation) and every other Name ``name``
    (a binding, a keyword, a parameter, a decorator...)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loads = 0
        self.others = 0
        self._loaded: set[int] = set()
        self._attrs: set[int] = set()
        self._annotations = 0

    def visit_Call(self, node: cst.Call) -> None:
        self._loaded.add(id(node.func))

    def visit_Arg(self, node: cst.Arg) -> None:
        self._loaded.add(id(node.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._loaded.add(id(node.value))
        self._attrs.add(id(node.attr))

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._annotations += 1

    def leave_Annotation(self, original_node: cst.Annotation) -> None:
        self._annotations -= 1

    def visit_Name(self, node: cst.Name) -> None:
        if node.value != self.name or id(node) in self._attrs:
            return
        if id(node) in self._loaded or self._annotations:
            self.loads += 1
        else:
            self.others += 1


def _generated_code(tree: cst.Module, stmt: cst.BaseStatement) -> str:
    return tree.code_for_node(stmt)


def _proven_used(tree: cst.Module, names: set[str], import_code: dict[int, list[str]],
                 code_for: Callable[[cst.Module, cst.BaseStatement], str] = _generated_code,
                 ) -> set[str]:
    """The names that some top-level statement certainly reads from the module scope.

    Proof: a statement where every Name ``n`` is read (``n(...)``, ``f(n)``, ``n.x``, an
    annotation), at least one. Nothing in it can bind ``n`` (a binding is another kind
    of Name), so those reads resolve to the module scope, where scope analysis links
    them to every binding of ``n``, the import included: the visitor keeps the import.
    """
    proven: set[str] = set()
    statements = sorted(
        ((code_for(tree, stmt), stmt) for index, stmt in enumerate(tree.body)
         if index not in import_code),
        key=lambda pair: len(pair[0]),
    )
    for name in names:
        word = _reference_word(name)
        for text, stmt in statements:
            if not word.search(text):
                continue
            counter = _LoadsOnly(name)
            stmt.visit(counter)
            if counter.loads and not counter.others:
                proven.add(name)
                break
    return proven


def _top_level_imported(module: cst.Module) -> set[str]:
    """Local names bound by the top-level import statements of ``module``."""
    bound: set[str] = set()
    for stmt in filter(is_import_line, module.body):
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                bound.update(a.evaluated_alias or a.evaluated_name for a in small.names)
            elif isinstance(small, cst.Import):
                bound.update(a.evaluated_alias or a.evaluated_name.split(".")[0] for a in small.names)
    return bound


def request_import_removals(ff: FileFacts, heads: set[str], context: CodemodContext,
                            imported_elsewhere: Callable[[Path, str, str], bool] | None) -> set[str]:
    """Ask ``RemoveImportsVisitor`` to drop imports of names a rewrite consumed.

    It removes one only if nothing uses it any more, so an import the tool did not make
    unused is kept (and so is one that was unused before: it never reaches this list).
    An import another file reaches through this module (``imported_elsewhere(path,
    module, name)``: ``from this_module import name``, a star import of it, ``.name``), a
    name a module-level statement about ``__all__`` spells (``__all__.extend(["X"])``,
    ``__all__ = [...] + ["X"]``: what the module exports) and ``from m import X as X`` (a
    re-export by convention) are never asked for; without ``imported_elsewhere``, none
    is. Returns the local names whose imports were requested.
    """
    if imported_elsewhere is None:
        return set()
    exported = _all_strings(ff.source_code())
    heads = {local for local in heads if local not in exported
             and not imported_elsewhere(ff.path, ff.module_name, local)}
    requested: set[str] = set()
    for stmt in ff.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    local = alias.evaluated_alias or alias.evaluated_name
                    if alias.evaluated_alias == alias.evaluated_name:
                        continue  # ``X as X``: an explicit re-export
                    if local in heads and local in ff.bindings:
                        module = ff.bindings[local].rpartition(".")[0]
                        RemoveImportsVisitor.remove_unused_import(
                            context, module, obj=alias.evaluated_name, asname=alias.evaluated_alias
                        )
                        requested.add(local)
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    local = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                    if local in heads:
                        RemoveImportsVisitor.remove_unused_import(
                            context, alias.evaluated_name, asname=alias.evaluated_alias
                        )
                        requested.add(local)
    return requested


def _all_strings(text: str) -> frozenset[str]:
    """The strings in the module-level statements of ``text`` that name ``__all__``
    (all of them when the text does not parse)."""
    if "__all__" not in text:
        return frozenset()
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(re.findall(r"[\"'](\w+)[\"']", text))
    found: set[str] = set()
    for stmt in tree.body:
        nodes = list(ast.walk(stmt))
        if any(isinstance(n, ast.Name) and n.id == "__all__" for n in nodes):
            found |= {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return frozenset(found)
