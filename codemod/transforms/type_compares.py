"""Comparisons of two objects' types: ``type(a) is type(b)`` -> ``param_type(a) is param_type(b)``.

What it does
    In a comparison of two operands that are each ``type(x)`` (the builtin, one argument)
    or ``x.__class__``, with ``is``, ``is not``, ``==`` or ``!=``, each operand becomes
    ``param_type(x)``, from the family's runtime module.
Why
    Every converted parameter is a plain ``Parameter``: left as it is, ``type(a) is
    type(b)`` would hold for parameters of two former classes, and for a converted
    parameter and a plain one. Engines ask it: vLLM's ``replace_parameter`` keeps the old
    parameter in place when the types match (it registers a fresh plain one when they
    differ), ``QKVCrossParallelLinear._is_same_param`` tells a weight from a scale of the
    same shape. ``param_type`` answers the former class's kind for a converted parameter
    and ``type(x)`` for anything else, so the comparison answers as before for every pair
    of objects.
Fix safety
    Rewritten wherever such a comparison stands, in any file of the tree: a parameter can
    reach any function, and for objects that are no converted parameter the answer is the
    same. ``x`` is evaluated once, in the same order. Left as they are: a ``type`` the
    code rebinds (``BuiltinScopes``), a chained comparison (``type(a) is type(b) is C``),
    other uses of a parameter's type (``type(p).__name__``, ``type(p)`` as a dict key),
    and, in a file the runtime module loads while it is imported, a comparison outside a
    function body, decorators and default values included (the helper cannot be imported
    there without a cycle; inside a function it is imported at the top of the function):
    each is reported as a warning (``module_level_comparisons``). ``codemod check``
    reports the comparisons written into a converted tree afterwards (CM006), found by
    the same rule (``type_comparisons``).
"""

from __future__ import annotations

import ast
from typing import TypeGuard

import libcst as cst

from codemod.analysis import python_trees
from codemod.analysis.bound_names import names_bound
from codemod.transforms.builtin_scopes import BuiltinScopes, Comprehension
from codemod.transforms.import_edits import with_import_first
from codemod.transforms.refs import FileRefs

HELPER = "param_type"


def may_compare_types(text: str) -> bool:
    """Whether ``text`` may hold a comparison ``TypeCompareTransformer`` rewrites: a cheap
    text test before any parse (``compares_types`` then decides).

    True when a ``type(`` call follows ``is``, ``not``, ``==`` or ``!=`` (over blanks,
    line breaks, backslashes, opening brackets and comments: the right operand), or when
    ``__class__`` is followed by one of them (over the same and closing brackets), or
    one stands on its line or ends the code line before (the operator of a comparison
    whose right operand ends in ``.__class__``, unless the expression before
    ``.__class__`` spans more lines)."""
    at = text.find("__class__")
    while at >= 0:
        end = at + len("__class__")
        if _operator_after(text, end):
            return True
        line_start = text.rfind("\n", 0, at) + 1
        if any(_holds_operator(code) for code in _code_variants(text[line_start:at])) or \
                _operator_before(text, line_start - 1):
            return True
        at = text.find("__class__", end)
    at = text.find("type")
    while at >= 0:
        after = at + 4
        while after < len(text) and text[after] in " \t":
            after += 1
        if after < len(text) and text[after] == "(" and (
                at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_.")) \
                and _operator_before(text, at - 1):
            return True
        at = text.find("type", at + 4)
    return False


_OPERATOR_WORDS = ("is", "not", "==", "!=")


def _ends_with_operator(code: str) -> bool:
    """Whether ``code`` (blanks, backslashes and opening brackets stripped) ends with an
    operator of the comparisons (a word one as a whole word)."""
    code = code.rstrip(" \t\r\\(")
    for operator in _OPERATOR_WORDS:
        if code.endswith(operator):
            start = len(code) - len(operator) - 1
            if operator[0] in "=!" or start < 0 or not (code[start].isalnum() or code[start] == "_"):
                return True
    return False


def _holds_operator(code: str) -> bool:
    return " is " in code or "==" in code or "!=" in code or code.lstrip().startswith("is ") \
        or _ends_with_operator(code)


def _code_variants(line: str) -> list[str]:
    """A line, and the line cut at each ``#`` (where a comment may start: a ``#`` inside a
    string gives a variant too, so no comment is missed)."""
    variants = [line]
    at = line.find("#")
    while at >= 0:
        variants.append(line[:at])
        at = line.find("#", at + 1)
    return variants


def _operator_before(text: str, at: int) -> bool:
    """Whether the code up to offset ``at`` (inclusive) ends with a comparison operator,
    over blanks, backslashes, opening brackets, line breaks, and blank and comment
    lines."""
    end = at + 1
    while end > 0:
        while end > 0 and text[end - 1] in "\r\n":
            end -= 1
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        variants = _code_variants(line)
        if any(_ends_with_operator(code) for code in variants):
            return True
        code = variants[1] if len(variants) > 1 else line
        if code.strip(" \t\r\\("):
            return False  # a line of code that does not end with one
        end = start
    return False


def _operator_after(text: str, at: int) -> bool:
    """Whether a comparison operator follows offset ``at``, over blanks, closing
    brackets, backslashes, line breaks and comments."""
    size = len(text)
    while at < size:
        char = text[at]
        if char in " \t\r\n\\)":
            at += 1
        elif char == "#":
            newline = text.find("\n", at)
            if newline < 0:
                return False
            at = newline + 1
        else:
            return text.startswith(("is", "==", "!="), at) and (
                not text.startswith("is", at) or at + 2 >= size or not (text[at + 2].isalnum() or text[at + 2] == "_"))
    return False


def compares_types(text: str) -> bool:
    """Whether ``text`` holds a comparison of two objects' types as the transformer
    rewrites it (``type`` taken as the builtin wherever it is: a superset); True for a
    text CPython cannot parse."""
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return any(_is_type_comparison(node) for node in ast.walk(tree))


def module_level_comparisons(text: str) -> list[int]:
    """The lines of the comparisons of two objects' types that run outside every
    function body (a ``lambda`` is not one; a ``def``'s decorators and default values
    run where the ``def`` does): what ``TypeCompareTransformer`` leaves as they are in a
    file that cannot import the helper at its top (``local``)."""
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines: list[int] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack += [*node.decorator_list, *node.args.defaults,
                      *(d for d in node.args.kw_defaults if d is not None)]
            continue
        if _is_type_comparison(node):
            lines.append(node.lineno)
        stack.extend(ast.iter_child_nodes(node))
    return sorted(lines)


def type_comparisons(tree: ast.AST) -> list[ast.Compare]:
    """Every comparison of two objects' types in ``tree``, in source order, as
    ``TypeCompareTransformer`` finds them (``type`` taken as the builtin wherever it is:
    a superset where the code rebinds it)."""
    found = [node for node in ast.walk(tree) if _is_type_comparison(node)]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def _is_type_comparison(node: ast.AST) -> TypeGuard[ast.Compare]:
    return isinstance(node, ast.Compare) and len(node.ops) == 1 \
        and isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) \
        and _python_type_of(node.left) and _python_type_of(node.comparators[0])


def _python_type_of(operand: ast.expr) -> bool:
    """Whether an operand is ``type(x)`` (one positional argument) or ``x.__class__``."""
    if isinstance(operand, ast.Call):
        return isinstance(operand.func, ast.Name) and operand.func.id == "type" \
            and len(operand.args) == 1 and not operand.keywords \
            and not isinstance(operand.args[0], ast.Starred)
    return isinstance(operand, ast.Attribute) and operand.attr == "__class__"


_OPERATORS = (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)


class TypeCompareTransformer(BuiltinScopes):
    """Rewrites each comparison of two objects' types to compare ``param_type`` of each.

    ``runtime``: the runtime module to take ``param_type`` from. ``local``: this file must
    not import it at module level (the runtime module loads this file while it is
    imported); the helper is then imported at the top of each function that compares,
    and a comparison outside every function is left alone (``skipped``).
    """

    def __init__(self, refs: FileRefs, runtime: str, local: bool = False) -> None:
        super().__init__()
        self.refs = refs
        self.runtime = runtime
        self.local = local and not refs.is_runtime
        self.count = 0
        self.skipped = 0
        #: Per enclosing function: whether a comparison in it needs the local import.
        self._functions: list[bool] = []
        #: The entries of ``_functions`` set aside while a ``def``'s header is visited.
        self._held: list[bool] = []
        #: Per enclosing class body (whether it binds ``type``) or other scope (None):
        #: code right in a class body that binds ``type`` calls that binding.
        self._bodies: list[bool | None] = []
        ff = refs.ff
        self.track_builtins(ff.text or ff.module.code, {*ff.globals, *ff.bindings})

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bodies.append("type" in names_bound([node.body]))  # type: ignore[list-item]

    def leave_ClassDef(self, original_node: cst.ClassDef,
                       updated_node: cst.ClassDef) -> cst.ClassDef:
        self._bodies.pop()
        return updated_node

    def visit_Lambda(self, node: cst.Lambda) -> None:
        super().visit_Lambda(node)
        self._bodies.append(None)

    def leave_Lambda(self, original_node: cst.Lambda, updated_node: cst.Lambda) -> cst.BaseExpression:
        self._bodies.pop()
        return super().leave_Lambda(original_node, updated_node)

    def _visit_comprehension(self, node: Comprehension) -> None:
        super()._visit_comprehension(node)
        self._bodies.append(None)

    def _leave_comprehension(self, original_node: Comprehension,
                             updated_node: Comprehension) -> cst.BaseExpression:
        self._bodies.pop()
        return super()._leave_comprehension(original_node, updated_node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.enter_function(node)
        self._functions.append(False)
        self._bodies.append(None)

    # A ``def``'s decorators, parameters (their defaults and annotations) and return
    # annotation run where the ``def`` does, before the body's import of the helper:
    # while they are visited, the function is not entered yet.
    def _visit_header(self, node: cst.FunctionDef) -> None:
        self._held.append(self._functions.pop())

    def _leave_header(self, node: cst.FunctionDef) -> None:
        self._functions.append(self._held.pop())

    visit_FunctionDef_decorators = visit_FunctionDef_params = visit_FunctionDef_returns = _visit_header
    leave_FunctionDef_decorators = leave_FunctionDef_params = leave_FunctionDef_returns = _leave_header

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.leave_scope()
        self._bodies.pop()
        if not self._functions.pop():
            return updated_node
        return with_import_first(updated_node, self.runtime, [HELPER])

    def leave_Comparison(self, original_node: cst.Comparison,
                         updated_node: cst.Comparison) -> cst.BaseExpression:
        if len(updated_node.comparisons) != 1:
            return updated_node
        target = updated_node.comparisons[0]
        if not isinstance(target.operator, _OPERATORS):
            return updated_node
        left, right = self._type_of(updated_node.left), self._type_of(target.comparator)
        if left is None or right is None:
            return updated_node
        helper = self._helper()
        if helper is None:
            return updated_node
        self.count += 1
        return updated_node.with_changes(
            left=_called(helper, left, updated_node.left),
            comparisons=[target.with_changes(comparator=_called(helper, right, target.comparator))])

    def _type_of(self, operand: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` of an operand ``type(x)`` (the builtin) or ``x.__class__``; else None."""
        if isinstance(operand, cst.Call) and isinstance(operand.func, cst.Name) \
                and operand.func.value == "type" and len(operand.args) == 1:
            arg = operand.args[0]
            if arg.keyword is None and not arg.star and not self.shadowed("type") \
                    and not (self._bodies and self._bodies[-1]):
                return arg.value
        if isinstance(operand, cst.Attribute) and operand.attr.value == "__class__":
            return operand.value
        return None

    def _helper(self) -> cst.BaseExpression | None:
        """``param_type`` as this place can call it (None: counted as ``skipped``)."""
        if self.refs.is_runtime:
            if not self._functions:
                self.skipped += 1  # the runtime's own module level may run before it
                return None
            return cst.Name(HELPER)
        if self.local:
            if not self._functions:
                self.skipped += 1
                return None
            self._functions[-1] = True
            return cst.Name(HELPER)
        return self.refs.name_in(self.runtime, HELPER)


def _called(helper: cst.BaseExpression, obj: cst.BaseExpression,
            operand: cst.BaseExpression) -> cst.Call:
    """``helper(obj)`` in the place of ``operand``, keeping its parentheses."""
    return cst.Call(func=helper, args=[cst.Arg(obj)], lpar=operand.lpar, rpar=operand.rpar)
