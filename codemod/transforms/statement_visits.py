"""Run a transformer only over the statements that name what it rewrites.

What it does
    ``visit_mentioning`` is ``module.visit(transformer)`` for a transformer that can only
    change code naming one of a set of names: a top-level statement that names none is
    kept as it is, unvisited. With ``descend``, a ``class`` or ``def`` whose header
    (decorators, bases, parameters, annotations) names none is not visited whole either:
    its transformer hooks run, and only the statements of its body that name one are
    visited (the same way, one level further down). Which statement names what is read
    from the statement's own lines (CPython's line numbers for the body), never from
    generated code.
Why
    A LibCST transformer rebuilds every node it walks, and generating a changed
    statement's code costs as much again: a 60 KB class with three ``isinstance`` checks
    to rewrite was rebuilt, generated and parsed again whole. Now its unchanged methods
    stay the same nodes, and its code is its old text with the changed body statements'
    code put in (``Made``): LibCST emits a statement's code the same wherever it stands,
    given the indentation it stands at, so the text is the one generating the whole
    class gives.
Fix safety
    The output is the same: a statement that names none of the names cannot change
    (the premise of skipping top-level ones already), the transformer's ``class`` and
    ``def`` hooks still run for every ``class`` and ``def`` in a visited body (they keep
    the enclosing-scope context of ``UseSiteTransformer``), and a spliced text is used only
    where the old code of each replaced statement is found exactly where its lines say;
    anything else is visited or generated whole, as before.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from codemod.prefilters import prefilter


@dataclass
class Made:
    """Codes of the statements a ``visit_mentioning`` rebuilt by splicing: id of the new
    statement -> (the statement, its code, the parts of it that were generated, each a
    module LibCST can parse). The statement is held so that its id stays its own."""

    codes: dict[int, tuple[cst.CSTNode, str, list[str]]] = field(default_factory=dict)

    def get(self, stmt: cst.CSTNode) -> tuple[str, list[str]] | None:
        """(code, generated parts) of ``stmt`` if it was spliced here, else None."""
        known = self.codes.get(id(stmt))
        return (known[1], known[2]) if known is not None and known[0] is stmt else None


Compound = cst.ClassDef | cst.FunctionDef


def visit_mentioning(module: cst.Module, transformer: cst.CSTTransformer,
                     names: frozenset[str], codes: list[str] | None = None,
                     descend: bool = False, made: Made | None = None,
                     may_change: Callable[[str], bool] | None = None) -> cst.Module:
    """``module.visit(transformer)`` for a transformer that can only change code that
    names one of ``names`` (see the module doc). ``codes``: the top-level statements'
    source, if known (``FileFacts.statement_codes``). ``descend``: also skip the body
    statements of a ``class`` or ``def`` that name none, for a transformer whose hooks
    of other statements only act on code naming one; the spliced codes go to ``made``.
    ``may_change``: a narrower test of a statement's code than naming one of ``names``
    (a top-level or body statement it rejects is not visited; it must hold for the
    lines of any statement the transformer can change)."""
    hooks = ("visit_Module", "leave_Module")
    if any(getattr(type(transformer), hook, None) is not getattr(cst.CSTTransformer, hook, None)
           for hook in hooks):
        return module.visit(transformer)  # it wants the whole module: give it
    body: list[cst.BaseStatement] = []
    for index, stmt in enumerate(module.body):
        code = codes[index] if codes is not None else module.code_for_node(stmt)
        if not prefilter(code, names) or (may_change is not None and not may_change(code)):
            body.append(stmt)
            continue
        new: cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel
        outline = _outline(stmt, code) if descend else None
        if outline is None:
            new = stmt.visit(transformer)
        else:
            descent = _Descent(transformer, names, code, outline, may_change)
            new = descent.visit(stmt, outline.tree, descent.replaced)
            if made is not None and isinstance(new, (cst.ClassDef, cst.FunctionDef)) and \
                    new is not stmt and isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
                spliced = _splice(stmt, new, descent.replaced, code, outline, module)
                if spliced is not None:
                    made.codes[id(new)] = (new, spliced[0], spliced[1])
        if isinstance(new, cst.FlattenSentinel):
            body.extend(new.nodes)
        elif not isinstance(new, cst.RemovalSentinel):
            body.append(new)
    return module.with_changes(body=body)


@dataclass
class _Outline:
    """Where the statements of a top-level ``class``/``def`` stand in its code: the
    offset of each line, and its CPython tree."""

    starts: list[int]
    tree: ast.stmt


def _outline(stmt: cst.BaseStatement, code: str) -> _Outline | None:
    """The outline of a top-level ``class`` or ``def`` with an indented body, if CPython
    reads its code as that one statement (else None: it is visited whole)."""
    if not isinstance(stmt, (cst.ClassDef, cst.FunctionDef)) or \
            not isinstance(stmt.body, cst.IndentedBlock) or "\r" in code:
        return None
    try:
        parsed = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(parsed.body) != 1 or not _same_kind(stmt, parsed.body[0]):
        return None
    starts = [0]
    position = code.find("\n")
    while position != -1:
        starts.append(position + 1)
        position = code.find("\n", position + 1)
    return _Outline(starts, parsed.body[0])


def _same_kind(node: cst.BaseStatement, tree: ast.stmt) -> bool:
    if isinstance(node, cst.ClassDef):
        return isinstance(tree, ast.ClassDef)
    if isinstance(node, cst.FunctionDef):
        return isinstance(tree, ast.AsyncFunctionDef if node.asynchronous else ast.FunctionDef)
    return False


def _first_line(tree: ast.stmt) -> int:
    """The first line of a statement, its decorators included."""
    decorators = getattr(tree, "decorator_list", None) or []
    return min([tree.lineno, *(d.lineno for d in decorators)])


def _children(node: Compound, tree: ast.stmt) -> list[tuple[int, int, ast.stmt | None]] | None:
    """Per statement of ``node``'s body: (first line, last line, its CPython statement
    when it is one compound statement), read from ``tree``; None when the two bodies do
    not line up."""
    assert isinstance(node.body, cst.IndentedBlock)
    pending = list(getattr(tree, "body", []))
    out: list[tuple[int, int, ast.stmt | None]] = []
    for child in node.body.body:
        if isinstance(child, cst.SimpleStatementLine):
            count = len(child.body)
            if count == 0 or count > len(pending):
                return None
            part, pending = pending[:count], pending[count:]
            out.append((_first_line(part[0]), part[-1].end_lineno or part[-1].lineno, None))
        else:
            if not pending:
                return None
            one = pending.pop(0)
            if isinstance(child, (cst.ClassDef, cst.FunctionDef)) and \
                    not _same_kind(child, one):
                return None
            out.append((_first_line(one), one.end_lineno or one.lineno, one))
    return out if not pending else None


class _Descent:
    """One top-level statement's visit, skipping the body statements that name none of
    ``names`` inside every ``class``/``def`` whose header names none."""

    def __init__(self, transformer: cst.CSTTransformer, names: frozenset[str], code: str,
                 outline: _Outline, may_change: Callable[[str], bool] | None = None) -> None:
        self.transformer = transformer
        self.names = names
        self.may_change = may_change
        self.code = code
        self.starts = outline.starts
        #: Of the top-level statement: index of a replaced body statement -> what replaced it.
        self.replaced: dict[int, list[cst.BaseStatement]] = {}

    def lines(self, first: int, last: int) -> str:
        """The text of lines ``first``..``last`` (1-based, inclusive) of the code."""
        end = self.starts[last] if last < len(self.starts) else len(self.code)
        return self.code[self.starts[first - 1]:end]

    def visit(self, stmt: cst.BaseStatement, tree: ast.stmt | None,
              replaced: dict[int, list[cst.BaseStatement]] | None = None) -> cst.BaseStatement \
            | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        """``stmt.visit(transformer)``, descending into its body when it may; the body
        statements replaced go to ``replaced`` (by index), if given."""
        children = self._descendable(stmt, tree)
        if children is None:
            return stmt.visit(self.transformer)
        assert isinstance(stmt, (cst.ClassDef, cst.FunctionDef))
        assert isinstance(stmt.body, cst.IndentedBlock)
        updated: cst.BaseStatement = stmt
        if self.transformer.on_visit(stmt):
            body: list[cst.BaseStatement] = []
            changed = False
            for index, (child, (first, last, child_tree)) in enumerate(zip(stmt.body.body, children)):
                lines = self.lines(first, last)
                if prefilter(lines, self.names) and (self.may_change is None or self.may_change(lines)):
                    new = self.visit(child, child_tree)
                else:
                    new = child
                    if isinstance(child, (cst.ClassDef, cst.FunctionDef)):
                        # Its hooks keep the transformer's scope context, as a whole visit would.
                        self.transformer.on_visit(child)
                        self.transformer.on_leave(child, child)
                if isinstance(new, cst.FlattenSentinel):
                    nodes = list(new.nodes)
                elif isinstance(new, cst.RemovalSentinel):
                    nodes = []
                else:
                    nodes = [new]
                body.extend(nodes)
                if len(nodes) != 1 or nodes[0] is not child:
                    changed = True
                    if replaced is not None:
                        replaced[index] = nodes
            if changed:
                updated = stmt.with_changes(body=stmt.body.with_changes(body=body))
        return self.transformer.on_leave(stmt, updated)

    def _descendable(self, stmt: cst.BaseStatement,
                     tree: ast.stmt | None) -> list[tuple[int, int, ast.stmt | None]] | None:
        """The body statements' lines of a ``class``/``def`` whose header names none of
        the names, else None (visit it whole)."""
        if tree is None or not isinstance(stmt, (cst.ClassDef, cst.FunctionDef)) or \
                not isinstance(stmt.body, cst.IndentedBlock) or not stmt.body.body:
            return None
        children = _children(stmt, tree)
        if children is None:
            return None
        header_end = children[0][0] - 1
        if header_end < _first_line(tree) or \
                prefilter(self.lines(_first_line(tree), header_end), self.names):
            return None
        return children


def _splice(old: Compound, new: Compound, replaced: dict[int, list[cst.BaseStatement]],
            code: str, outline: _Outline, module: cst.Module) -> tuple[str, list[str]] | None:
    """The code of ``new``: ``old`` with the body statements at the indices of
    ``replaced`` replaced by the statements listed there, made from ``old``'s ``code``.
    Each replaced statement's old code, generated at its indentation, must be found where
    its lines start; the new statements' code goes there. Also the generated parts, each
    a module LibCST can parse (``if True:`` and the statements). None when more than the
    body's statements changed, the body became empty, or an old code is not where its
    lines say."""
    assert isinstance(old.body, cst.IndentedBlock) and isinstance(new.body, cst.IndentedBlock)
    if not new.body.body or not _same_but_body(old, new):
        return None
    children = _children(old, outline.tree)
    if children is None:
        return None
    indent = module.default_indent if old.body.indent is None else old.body.indent
    generate = _generator(module, indent)
    parts: list[str] = []
    generated: list[str] = []
    position = 0
    for index in sorted(replaced):
        child = old.body.body[index]
        start_line = children[index][0] - len(child.leading_lines)  # type: ignore[attr-defined]
        if start_line < 1 or start_line > len(outline.starts):
            return None
        start = outline.starts[start_line - 1]
        old_code = generate(child)
        if start < position or not code.startswith(old_code, start):
            return None
        new_code = "".join(generate(stmt) for stmt in replaced[index])
        parts.append(code[position:start])
        parts.append(new_code)
        if new_code:
            generated.append(f"{PART_HEADER}{module.default_newline}{new_code}")
        position = start + len(old_code)
    parts.append(code[position:])
    return "".join(parts), generated


#: The line above a spliced part's statements, so that LibCST parses them as a module
#: with their own indentation.
PART_HEADER = "if True:"


def part_statements(code: str) -> str | None:
    """The statements of a part ``_splice`` generated (as they stand in the new text), or
    None for any other generated code."""
    if not code.startswith(PART_HEADER):
        return None
    rest = code[len(PART_HEADER):]
    for newline in ("\r\n", "\n", "\r"):
        if rest.startswith(newline):
            return rest[len(newline):]
    return None


def _same_but_body(old: Compound, new: Compound) -> bool:
    """Whether ``new`` is ``old`` with only its body's statements replaced."""
    assert isinstance(old.body, cst.IndentedBlock) and isinstance(new.body, cst.IndentedBlock)
    if type(old) is not type(new):
        return False
    for name in old.__dataclass_fields__:
        if name == "body":
            continue
        if getattr(old, name) is not getattr(new, name):
            return False
    return all(getattr(old.body, name) is getattr(new.body, name)
               for name in old.body.__dataclass_fields__ if name != "body")


def _generator(module: cst.Module, indent: str) -> Callable[[cst.CSTNode], str]:
    """The code LibCST gives a statement of a top-level statement's indented body."""
    def generate(node: cst.CSTNode) -> str:
        state = CodegenState(default_indent=module.default_indent,
                             default_newline=module.default_newline, indent_tokens=[indent])
        node._codegen(state)
        return "".join(state.tokens)
    return generate
