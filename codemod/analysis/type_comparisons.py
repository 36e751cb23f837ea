"""The comparisons of two objects' types, found on the text and on CPython's tree: the one
rule ``apply``'s rewrite (``transforms/type_compares.py``) and ``check``'s CM006
(``check/type_findings.py``) share.

A comparison of two operands that are each ``type(x)`` (the builtin called with one
argument) or ``x.__class__``, with ``is``, ``is not``, ``==`` or ``!=``; or a membership
test of one such operand in a tuple, list or set written out (``type(a) in (type(b),
int)``) that holds another, or torch's ``Parameter``. ``type`` is taken
as the builtin wherever it stands (a superset where the code rebinds it; the transform
decides that per scope). No LibCST here: ``check`` reads these without the conversion
machinery.
"""

from __future__ import annotations

import ast
import re
from typing import TypeGuard

from codemod.analysis import python_trees
from codemod.analysis.held_types import held_types, names_parameter, parameter_aliases
from codemod.analysis.scope_values import binds, walk_scope
from codemod.analysis.text_search import lines_matching, nfkc_text, nodes_on_lines, unjoined
from codemod.runtime.helpers import PARAM_TYPE

#: What a rewritten comparison calls on each operand (the runtime's helper).
HELPER = PARAM_TYPE


def may_compare_types(text: str) -> bool:
    """Whether ``text`` may hold a comparison ``TypeCompareTransformer`` rewrites: a cheap
    text test before any parse (``compares_types`` then decides).

    True when a ``type(`` call follows ``is``, ``not``, ``==`` or ``!=`` (over blanks,
    line breaks, backslashes, opening brackets and comments: the right operand), or when
    ``__class__`` is followed by one of them (over the same and closing brackets), or
    one stands on its line or ends the code line before (the operator of a comparison
    whose right operand ends in ``.__class__``, unless the expression before
    ``.__class__`` spans more lines). In a text naming ``Parameter``, also when a
    comparison operator follows the call's closing parenthesis (``type(p) is
    nn.Parameter``: ``compares_with_parameter``). Also when a membership test in a
    bracket that spells ``type``, ``__class__`` or ``Parameter`` follows the call's closing
    parenthesis or ``__class__`` (``type(p) in (type(q), int)``: ``_membership_after``).
    Also when a line binds a name to ``type(...)`` or to an expression ending in
    ``.__class__`` (``t = type(p)``, then ``t is nn.Parameter``: ``analysis/held_types.py``;
    a value that starts on a later line is not seen, and such a name is left as it is)."""
    if _binds_type(text):
        return True
    parameter = "Parameter" in text
    at = text.find("__class__")
    while at >= 0:
        end = at + len("__class__")
        if _operator_after(text, end) or _membership_after(text, end):
            return True
        line_start = text.rfind("\n", 0, at) + 1
        if any(_holds_operator(code) for code in _code_variants(text[line_start:at])) or \
                _operator_before(text, line_start - 1):
            return True
        at = text.find("__class__", end)
    for call in unjoined(text, _TYPE_CALL, "."):  # not ``dtype(``, nor an attribute
        at, after = call.start(), call.end() - 1
        closing = _closing(text, after) + 1
        if _operator_before(text, at - 1) or _membership_after(text, closing) or (
                parameter and _operator_after(text, closing)):
            return True
    return False


#: A line that binds a name to an object's type: ``t = type(...`` or ``t = ....__class__``,
#: also annotated (``t: type = ...``) or with several targets (``u = t = ...``); the value
#: is the whole rest of the line (a comment aside): ``type(`` with an argument holding no
#: brackets or one level of them, and its ``)``, or ending in ``.__class__``. Or a walrus
#: binding one (``(t := type(p))``).
_BINDS_TYPE = re.compile(
    r"^[ \t]*(?:[^\W\d]\w*(?:[ \t]*:[^=\n]+)?[ \t]*=[ \t]*)+"
    r"(?:type[ \t]*\((?:[^()\n]|\([^()\n]*\))*\)|[^=\n#]*\.__class__)[ \t]*(?:#.*)?$"
    r"|\([ \t]*[^\W\d]\w*[ \t]*:=[ \t]*type[ \t]*\(",
    re.MULTILINE)

#: ``type``, blanks, an opening parenthesis (``unjoined``: starting no longer name).
_TYPE_CALL = re.compile(r"type[ \t]*\(")

#: What every match of ``_BINDS_TYPE`` holds on its line: a call of ``type`` or
#: ``.__class__`` (each a pattern that starts with a literal: searched for by it).
_BINDS_TYPE_HINTS = (_TYPE_CALL, re.compile(r"\.__class__"))


def _binds_type(text: str) -> bool:
    """``_BINDS_TYPE.search(text)``, asked only of the lines that call ``type`` or spell
    ``.__class__``. Either alternative of the pattern matches within one line (no part
    of it crosses a line feed) and holds one of them, so the answer is the same; but a
    pattern without a literal to look for is tried at every offset, which on vLLM
    0.34's 56 MB took 1.8 s, against 0.08 s for the lines the hints find."""
    for hint in _BINDS_TYPE_HINTS:
        found = hint.search(text)
        while found is not None:
            start = text.rfind("\n", 0, found.start()) + 1
            end = text.find("\n", found.start())
            if end < 0:
                end = len(text)
            if _BINDS_TYPE.search(text, start, end):
                return True
            found = hint.search(text, end)
    return False



def _closing(text: str, opening: int) -> int:
    """The offset of the parenthesis closing the one at ``opening`` (brackets counted,
    strings not told apart: a bracket inside one may end it early, and the operator
    test after it then sees other code); the text's end when none does."""
    depth = 0
    for at in range(opening, len(text)):
        char = text[at]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return at
    return len(text)


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
    """Whether a comparison operator (``is``, ``==``, ``!=``) follows offset ``at``, over
    blanks, closing brackets, backslashes, line breaks and comments."""
    at = _code_after(text, at, ")")
    if text.startswith(("==", "!="), at):
        return True
    return _word_at(text, at, "is")


def _membership_after(text: str, at: int) -> bool:
    """Whether a membership test in a container written out follows offset ``at`` (over
    what ``_operator_after`` passes over): ``in``/``not in``, then a bracket whose content
    spells ``type``, ``__class__`` or ``Parameter`` (what ``is_type_membership`` and
    ``compares_with_parameter`` need among the elements)."""
    at = _code_after(text, at, ")")
    if _word_at(text, at, "not"):
        at = _code_after(text, at + len("not"), "")
    if not _word_at(text, at, "in"):
        return False
    at = _code_after(text, at + len("in"), "")
    if at >= len(text) or text[at] not in "([{":
        return False
    container = text[at:_closing(text, at) + 1]
    return "type" in container or "__class__" in container or "Parameter" in container


def _word_at(text: str, at: int, word: str) -> bool:
    """Whether ``word`` stands at offset ``at`` as a whole word."""
    end = at + len(word)
    return text.startswith(word, at) and (end >= len(text) or not (text[end].isalnum() or text[end] == "_"))


def _code_after(text: str, at: int, passed: str) -> int:
    """The offset of the first code character at or after ``at``, over blanks,
    backslashes, line breaks, comments and the characters of ``passed`` (closing
    brackets); the text's length when none."""
    size = len(text)
    while at < size:
        char = text[at]
        if char in " \t\r\n\\" or char in passed:
            at += 1
        elif char == "#":
            newline = text.find("\n", at)
            if newline < 0:
                return size
            at = newline + 1
        else:
            return at
    return size


def compares_types(text: str) -> bool:
    """Whether ``text`` holds a comparison of two objects' types as the transformer
    rewrites it (``type`` taken as the builtin wherever it is: a superset), or a name
    holding one that it compares with another object's type or ``Parameter``
    (``HeldType.compares_types``: rewritten; or, compared with ``Parameter``, reported where it
    is read otherwise too);
    True for a text CPython cannot parse."""
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    # Either operand of such a comparison spells ``type`` or ``__class__`` on a line the
    # comparison spans: the nodes spanning none of those lines are not entered.
    lines = lines_matching(nfkc_text(text), _TYPE_WORDS)
    aliases = parameter_aliases(tree)
    if any(is_type_comparison(node) or is_type_membership(node) or compares_with_parameter(node, aliases)
           for node in nodes_on_lines(tree, lines)):
        return True
    return any((held.convertible and held.compares_types) or held.compares_parameter
               for names in held_types(tree).values() for held in names.values())


#: The words an operand of a comparison of types spells (``dtype`` too: a superset).
_TYPE_WORDS = re.compile(r"type|__class__")


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
    aliases = parameter_aliases(tree)
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack += [*node.decorator_list, *node.args.defaults,
                      *(d for d in node.args.kw_defaults if d is not None)]
            continue
        if is_type_comparison(node) or is_type_membership(node) or compares_with_parameter(node, aliases):
            lines.append(node.lineno)
        stack.extend(ast.iter_child_nodes(node))
    return sorted(lines)


def type_comparisons(tree: ast.AST) -> list[ast.Compare]:
    """Every comparison of two objects' types in ``tree`` (membership tests included), in
    source order, as ``TypeCompareTransformer`` finds them (``type`` taken as the builtin
    wherever it is: a superset where the code rebinds it)."""
    found = [node for node in python_trees.nodes(tree)
             if is_type_comparison(node) or is_type_membership(node)]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def compared_objects(node: ast.Compare) -> tuple[ast.expr, ast.expr]:
    """``(a, b)`` of a comparison of two objects' types (``is_type_comparison``)."""
    return _object_of(node.left), _object_of(node.comparators[0])


def _object_of(operand: ast.expr) -> ast.expr:
    return operand.args[0] if isinstance(operand, ast.Call) else operand.value  # type: ignore[attr-defined]


def is_type_comparison(node: ast.AST) -> TypeGuard[ast.Compare]:
    return isinstance(node, ast.Compare) and len(node.ops) == 1 \
        and isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) \
        and _python_type_of(node.left) and _python_type_of(node.comparators[0])


def membership_elements(node: ast.AST) -> list[ast.expr] | None:
    """The elements of ``node`` when it tests an object's type for membership in a
    tuple, list or set written out (``type(p) in (A, B)``, ``not in``, no ``*x``); else
    None."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.In, ast.NotIn)) and _python_type_of(node.left)):
        return None
    container = node.comparators[0]
    if not isinstance(container, (ast.Tuple, ast.List, ast.Set)) or \
            any(isinstance(element, ast.Starred) for element in container.elts):
        return None
    return container.elts


def is_type_membership(node: ast.AST) -> TypeGuard[ast.Compare]:
    """Whether ``node`` tests an object's type for membership in a tuple, list or set
    written out that holds another object's type (``type(a) in (type(b), int)``; not a
    literal's, ``type(None)``): each is compared as ``param_type``, as in ``type(a) is
    type(b)``."""
    elements = membership_elements(node)
    return elements is not None and any(is_type_element(element) for element in elements)


def is_type_element(element: ast.expr) -> bool:
    """Whether an element of a membership test is an object's type a parameter may be:
    ``type(x)`` or ``x.__class__``, but not the type of a literal (``type(None)``)."""
    return _python_type_of(element) and not isinstance(_object_of(element), ast.Constant)


def compared_operands(node: ast.Compare) -> list[ast.expr]:
    """The operands of a one-operator comparison: both sides, or for a membership test
    in a container written out (``membership_elements``) its subject and elements."""
    elements = membership_elements(node)
    return [node.left, node.comparators[0]] if elements is None else [node.left, *elements]


def compares_with_parameter(node: ast.AST, aliases: frozenset[str] = frozenset()) -> TypeGuard[ast.Compare]:
    """Whether ``node`` compares an object's type with ``Parameter`` (``type(p) is
    nn.Parameter``, ``Parameter == p.__class__``, ``type(p) in (nn.Parameter, T)``): a
    lexical superset, any name or attribute ``Parameter`` or a name of ``aliases`` (the
    module's other names for it, ``held_types.parameter_aliases``; the transform resolves
    it to torch's)."""
    elements = membership_elements(node)
    if elements is not None:
        return any(names_parameter(element, aliases) for element in elements)
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq))):
        return False
    left, right = node.left, node.comparators[0]
    return (_python_type_of(left) and names_parameter(right, aliases)) or \
        (_python_type_of(right) and names_parameter(left, aliases))


def compared_with_parameter(node: ast.AST) -> ast.expr | None:
    """The object whose type ``node`` compares with ``Parameter`` (``p`` of ``type(p) is
    nn.Parameter``), when ``compares_with_parameter``; else None."""
    if not compares_with_parameter(node):
        return None
    left, right = node.left, node.comparators[0]
    if membership_elements(node) is not None:
        return _object_of(left)
    return _object_of(left if _python_type_of(left) and names_parameter(right) else right)


def _python_type_of(operand: ast.expr) -> bool:
    """Whether an operand is ``type(x)`` (one positional argument) or ``x.__class__``."""
    if isinstance(operand, ast.Call):
        return isinstance(operand.func, ast.Name) and operand.func.id == "type" \
            and len(operand.args) == 1 and not operand.keywords \
            and not isinstance(operand.args[0], ast.Starred)
    return isinstance(operand, ast.Attribute) and operand.attr == "__class__"


def held_type(side: ast.expr, scope_body: list[ast.stmt]) -> ast.expr | None:
    """The ``type(x)``/``x.__class__`` that ``side`` of a comparison may hold: one inside
    it (``type(p).__mro__``, ``(t := type(p))``), or, for a name, one in a value the
    scope whose statements are ``scope_body`` binds the name to (an assignment,
    annotated, augmented or walrus, or a ``for`` target); None when there is none."""
    found = _type_inside(side)
    if found is not None or not isinstance(side, ast.Name):
        return found
    for node in walk_scope(scope_body):
        value: ast.AST | None = None
        if isinstance(node, ast.Assign) and any(binds(t, side.id) for t in node.targets):
            value = node.value
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) \
                and binds(node.target, side.id):
            value = node.value
        elif isinstance(node, (ast.For, ast.AsyncFor)) and binds(node.target, side.id):
            value = node.iter
        held = _type_inside(value) if value is not None else None
        if held is not None:
            return held
    return None


def _type_inside(node: ast.AST) -> ast.expr | None:
    """The first ``type(x)``/``x.__class__`` in ``node``."""
    return next((n for n in ast.walk(node) if isinstance(n, ast.expr) and is_type_of(n)), None)


def is_type_of(expr: ast.expr) -> bool:
    """``type(...)`` (any arguments) or ``x.__class__`` (as ``value_flow._is_type_of`` sees
    them on LibCST's nodes): a side of a type comparison."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "type":
        return True
    return isinstance(expr, ast.Attribute) and expr.attr == "__class__"
