"""Facts about one file's top-level classes: bases, ``__new__``/``__init__``, members.

Only facts are gathered here; whether a class can be converted is the planner's decision.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from codemod.analysis import python_trees
from codemod.analysis.names import dotted, import_bindings, module_name_for, resolve
from codemod.analysis.statement_text import CodesMade, splice_code, statement_spans


@dataclass
class PropertyFacts:
    """A ``@property`` with optional setter and deleter."""

    name: str
    getter: cst.FunctionDef | None = None
    setter: cst.FunctionDef | None = None
    deleter: cst.FunctionDef | None = None


@dataclass
class ClassFacts:
    """What one class statement says, with the CST nodes the transforms reuse."""

    name: str
    qualname: str
    module: str
    path: Path
    _line: int
    node: cst.ClassDef
    base_exprs: tuple[cst.BaseExpression, ...]
    base_qualnames: tuple[str | None, ...]
    keywords: tuple[str, ...]
    has_decorators: bool
    docstring: cst.SimpleStatementLine | None = None
    new: cst.FunctionDef | None = None
    init: cst.FunctionDef | None = None
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    properties: dict[str, PropertyFacts] = field(default_factory=dict)
    class_attrs: list[tuple[str, cst.SimpleStatementLine]] = field(default_factory=list)
    #: (statement, description) of members the converter has no rule for.
    unsupported: list[tuple[cst.CSTNode, str]] = field(default_factory=list)
    #: Member name -> its decorator kind, e.g. {"loader": "staticmethod"}.
    decorated: dict[str, str] = field(default_factory=dict)
    staticmethods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    classmethods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    file: FileFacts | None = None

    @property
    def line(self) -> int:
        """1-based line of the ``class`` statement."""
        if not self._line and self.file is not None:
            self._line = self.file.class_line(self.node)
        return self._line


@dataclass
class FileFacts:
    """One parsed file: its module name, import bindings, globals, classes, positions."""

    path: Path
    module_name: str
    is_package: bool
    module: cst.Module
    bindings: dict[str, str]
    globals: frozenset[str]
    classes: list[ClassFacts]
    _positions: dict[cst.CSTNode, CodeRange] | None = None
    _statement_codes: list[str] | None = None
    #: Where ``statement_codes`` were cut from ``text``, if they were.
    _spans: list[tuple[int, int]] | None = None
    #: The source text (the same string the caller holds; empty when not known).
    text: str = field(default="", repr=False)
    _class_lines: dict[int, int] | None = None
    _statement_indices: dict[int, int] | None = field(default=None, repr=False)

    @property
    def _statement_index(self) -> dict[int, int]:
        """id of each top-level statement -> its index in the module body."""
        if self._statement_indices is None:
            self._statement_indices = {id(stmt): i for i, stmt in enumerate(self.module.body)}
        return self._statement_indices

    def class_line(self, node: cst.ClassDef) -> int:
        """``line_of`` a class statement, without position metadata for a top-level one:
        CPython's parser numbers the ``class`` keyword's line the same way, and the n-th
        top-level class of both trees is the same statement."""
        if self._class_lines is None:
            self._class_lines = {}
            tops = [s for s in self.module.body if isinstance(s, cst.ClassDef)]
            try:
                lines = [n.lineno for n in python_trees.parse(self.text).body
                         if isinstance(n, ast.ClassDef)] if self.text else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                lines = None
            if lines is not None and len(lines) == len(tops):
                self._class_lines = {id(top): line for top, line in zip(tops, lines)}
        return self._class_lines.get(id(node)) or self.line_of(node)

    @property
    def statement_codes(self) -> list[str]:
        """The source of each top-level statement, its leading comments and blank lines
        included (computed on first use: cut from the text where ``statement_spans``
        can place every statement, else one code generation of the module)."""
        if self._statement_codes is None:
            spans = statement_spans(self.text, self.module) if self.text else None
            if spans is not None:
                self._statement_codes = [self.text[start:end] for start, end in spans]
                self._spans = spans
            else:
                self._statement_codes = [self.module.code_for_node(s) for s in self.module.body]
        return self._statement_codes

    @property
    def codes_cut_from_text(self) -> bool:
        """Whether ``statement_codes`` are cut from ``text`` (not generated)."""
        _ = self.statement_codes
        return self._spans is not None

    def source_code(self) -> str:
        """``module.code``: the text itself where ``statement_codes`` were cut from it
        (LibCST gives such a text back unchanged), else generated."""
        _ = self.statement_codes  # cuts the text into statements, if it can
        return self.text if self._spans is not None else self.module.code

    def code_of(self, module: cst.Module, made: CodesMade | None = None) -> str:
        """``module.code`` for a module made from this file's by replacing some top-level
        statements: the statements kept (the same nodes) and the header and footer are
        taken from the text when ``statement_codes`` were cut from it, and the code of a
        statement ``made`` knows from there."""
        return self.code_and_generated(module, made)[0]

    def statement_code(self, module: cst.Module, stmt: cst.BaseStatement,
                       made: CodesMade | None = None) -> str:
        """``module.code_for_node(stmt)`` for a top-level statement of a module made from
        this file's: a statement kept (the same node) is cut from the text, one ``made``
        spliced is known, any other is generated."""
        if self._spans is not None:
            index = self._statement_index.get(id(stmt))
            if index is not None and self.module.body[index] is stmt:
                return self.statement_codes[index]
        spliced = made.get(stmt) if made is not None else None
        return spliced[0] if spliced is not None else module.code_for_node(stmt)

    def code_and_generated(self, module: cst.Module,
                           made: CodesMade | None = None) -> tuple[str, list[str] | None]:
        """``code_of(module)``, and the code of the statements generated for it (None:
        the whole text was generated). The rest of the text is this file's own, cut at
        statement boundaries, so LibCST has already parsed it, or a statement ``made``
        spliced, whose generated parts it gives. A header or footer that a codemod copied
        (equal node by node) is this file's own too."""
        codes = self.statement_codes
        spans = self._spans
        return splice_code(self.module, self.text, spans, codes, module, made)

    def statement_positions(self, index: int) -> dict[cst.CSTNode, CodeRange]:
        """Positions of the nodes of top-level statement ``index``, as ``positions``
        gives them, computed on that statement alone (a large module needs only a few).

        Lines are shifted by the lines of the module header and of the statements before
        it; columns need no shift (a top-level statement starts a line). Falls back to the
        whole module's positions when the source holds a carriage return (a lone ``\\r``
        ends a line for the parser but not for the line count here).
        """
        codes = self.statement_codes
        if self._positions is not None or any("\r" in code for code in codes):
            return self.positions
        offset = len(self.module.header) + sum(code.count("\n") for code in codes[:index])
        alone = self.module.with_changes(body=[self.module.body[index]], header=[], footer=[],
                                         has_trailing_newline=True)
        wrapper = MetadataWrapper(alone, unsafe_skip_copy=True)
        return {
            node: CodeRange((r.start.line + offset, r.start.column), (r.end.line + offset, r.end.column))
            for node, r in wrapper.resolve(PositionProvider).items()
        }

    @property
    def positions(self) -> dict[cst.CSTNode, CodeRange]:
        """Node positions, computed on first use (PositionProvider costs about a parse)."""
        if self._positions is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = dict(wrapper.resolve(PositionProvider))
        return self._positions

    def line_of(self, node: cst.CSTNode) -> int:
        """1-based line of ``node`` (0 when unknown, e.g. a node made by a transform)."""
        rng = self.positions.get(node)
        return rng.start.line if rng is not None else 0

    def col_of(self, node: cst.CSTNode) -> int:
        """1-based column of ``node``."""
        rng = self.positions.get(node)
        return rng.start.column + 1 if rng is not None else 1

    def resolve(self, expr: cst.BaseExpression) -> str | None:
        """Qualified name of a Name/Attribute chain in this file."""
        return resolve(expr, self.bindings, self.module_name, self.globals)


def _module_globals(module: cst.Module) -> frozenset[str]:
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets: list[cst.BaseExpression] = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                for target in targets:
                    if isinstance(target, cst.Name):
                        names.add(target.value)
    return frozenset(names)


def _decorator_name(dec: cst.Decorator) -> str:
    expr = dec.decorator
    if isinstance(expr, cst.Call):
        expr = expr.func
    return dotted(expr) or "<expr>"


def is_docstring(stmt: cst.BaseStatement) -> bool:
    """A statement that is only a string literal (a docstring when it comes first)."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def docstring_and_body(fn: cst.FunctionDef) -> tuple[
    cst.SimpleStatementLine | None, tuple[cst.BaseStatement, ...]
]:
    """``fn``'s docstring (None without one) and its other statements; a one-line body
    (``def f(): return x``) is one statement line."""
    suite = fn.body
    if isinstance(suite, cst.SimpleStatementSuite):
        body: tuple[cst.BaseStatement, ...] = (cst.SimpleStatementLine(body=list(suite.body)),)
    else:
        body = tuple(cst.ensure_type(suite, cst.IndentedBlock).body)
    if body and is_docstring(body[0]):
        return body[0], body[1:]  # type: ignore[return-value]
    return None, body


def _class_facts(node: cst.ClassDef, ff: FileFacts) -> ClassFacts:
    qualname = f"{ff.module_name}.{node.name.value}" if ff.module_name else node.name.value
    facts = ClassFacts(
        name=node.name.value,
        qualname=qualname,
        module=ff.module_name,
        path=ff.path,
        _line=0,
        node=node,
        file=ff,
        base_exprs=tuple(arg.value for arg in node.bases),
        base_qualnames=tuple(
            ff.resolve(arg.value) if arg.star == "" else None for arg in node.bases
        ),
        keywords=tuple(
            arg.keyword.value if arg.keyword else "**" for arg in node.keywords
        ),
        has_decorators=bool(node.decorators),
    )
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for index, stmt in enumerate(body):
        if index == 0 and is_docstring(stmt):
            facts.docstring = stmt  # type: ignore[assignment]
            continue
        line = stmt  # resolved to a line number only if the class is refused
        if isinstance(stmt, cst.FunctionDef):
            _add_function(facts, stmt, line)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Pass) or (
                    isinstance(small, cst.Expr) and isinstance(small.value, cst.Ellipsis)
                ):
                    continue
                target = None
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    target = small.target
                elif isinstance(small, cst.AnnAssign):
                    continue  # a bare annotation binds nothing at run time
                if isinstance(target, cst.Name) and len(stmt.body) == 1:
                    facts.class_attrs.append((target.value, stmt))
                else:
                    facts.unsupported.append((line, "a class-level statement"))
        else:
            kind = type(stmt).__name__
            facts.unsupported.append((line, f"a nested {kind} statement in the class body"))
    return facts


def _add_function(facts: ClassFacts, fn: cst.FunctionDef, line: cst.CSTNode) -> None:
    name = fn.name.value
    decorators = [_decorator_name(d) for d in fn.decorators]
    if not decorators:
        if name == "__new__":
            facts.new = fn
        elif name == "__init__":
            facts.init = fn
        else:
            facts.methods[name] = fn
        return
    if decorators == ["property"]:
        facts.properties.setdefault(name, PropertyFacts(name)).getter = fn
        return
    if len(decorators) == 1 and decorators[0] in (f"{name}.setter", f"{name}.deleter"):
        prop = facts.properties.setdefault(name, PropertyFacts(name))
        if decorators[0].endswith(".setter"):
            prop.setter = fn
        else:
            prop.deleter = fn
        return
    if decorators == ["staticmethod"]:
        facts.staticmethods[name] = fn
        return
    if decorators == ["classmethod"]:
        facts.classmethods[name] = fn
        return
    facts.decorated[name] = ",".join(decorators)
    facts.unsupported.append((line, f"method {name!r} decorated with @{decorators[0]}"))


def analyse_file(path: Path, text: str, parsed: str | None = None) -> FileFacts:
    """Parse ``text`` (the contents of ``path``) and gather its facts. ``parsed``: the
    text LibCST parses instead, when not ``text`` (``transforms.skeleton``).

    Raises ``libcst.ParserSyntaxError`` when the text does not parse.
    """
    module = cst.parse_module(text if parsed is None else parsed)
    module_name = module_name_for(path)
    is_package = path.name == "__init__.py"
    ff = FileFacts(
        path=path,
        module_name=module_name,
        is_package=is_package,
        module=module,
        bindings=import_bindings(module, module_name, is_package),
        globals=_module_globals(module),
        classes=[],
        text=text,
    )
    ff.classes = [
        _class_facts(stmt, ff) for stmt in module.body if isinstance(stmt, cst.ClassDef)
    ]
    return ff
