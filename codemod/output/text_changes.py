"""What changed in one file's text, read with CPython's parser for the migration report:
the names its import statements bring in (``imports``, compared old against new), and the
feature checks that replaced class checks (``check_changes``).

Only the statements that can hold them are parsed (found by a text search first), since
the report reads the old and new text of every changed file.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from codemod.prefilters import import_spans
from codemod.runtime.helpers import HAS_PARAM_FEATURE, ISINSTANCE_OR_PARAM_FEATURE, PARAM_KIND_IS

#: ``owner(member, runtime module)``: the qualified name of the class whose feature
#: ``Features.<member>`` is, or None.
FeatureOwner = Callable[[str, str | None], str | None]

#: Runtime helpers a class check becomes, and the kind of check each stands for.
_CHECK_HELPERS = {
    HAS_PARAM_FEATURE: "isinstance",
    ISINSTANCE_OR_PARAM_FEATURE: "isinstance",
    PARAM_KIND_IS: "type-check",
}


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


#: An ``import`` keyword (to tell whether ``import_spans`` found every import statement).
#: (The literal comes first, so that the regex engine skips from one ``import`` to the next.)
_IMPORT_KEYWORD = re.compile(r"import(?<=(?<![\w.])import)(?!\w)")
#: A call of a check helper, for finding the statements worth walking.
_HELPER_CALL = re.compile(rf"(?<![\w]){'|'.join(_CHECK_HELPERS)}\s*\(")


def _import_statements(text: str) -> list[ast.stmt]:
    """The import statements of ``text``: parsed from ``import_spans`` alone when it finds
    them all (as many as ``import`` keywords), else from the whole text."""
    if "import" not in text:
        return []
    spans = import_spans(text)
    if len(spans) == len(_IMPORT_KEYWORD.findall(text)):
        try:  # one statement a line: parsed as one module
            return ast.parse("\n".join(span.strip() for span in spans)).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    tree = _parse(text)
    if tree is None:
        return []
    return [n for stmt in _statements_at(tree, _lines_of(_IMPORT_KEYWORD, text))
            for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _lines_of(pattern: re.Pattern[str], text: str) -> set[int]:
    """The 1-based lines where ``pattern`` matches in ``text``."""
    lines: set[int] = set()
    line, position = 1, 0
    for match in pattern.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        lines.add(line)
    return lines


def _statements_at(tree: ast.Module, lines: set[int]) -> list[ast.stmt]:
    """The top-level statements of ``tree`` that span one of ``lines`` (only those can
    hold what a text search found there)."""
    return [stmt for stmt in tree.body
            if any(stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for line in lines)]


def imports(text: str) -> Counter[str]:
    """Every imported name of ``text`` as ``module.name`` (``.module.name`` for a relative
    import, ``name as alias`` when renamed), counted."""
    found: Counter[str] = Counter()
    for node in _import_statements(text):
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                spelled = f"{module}.{alias.name}" if module and not module.endswith(".") \
                    else f"{module}{alias.name}"
                found[spelled + (f" as {alias.asname}" if alias.asname else "")] += 1
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.name + (f" as {alias.asname}" if alias.asname else "")] += 1
    return found


def _feature_checks(text: str) -> list[tuple[int, str, tuple[str, ...], str | None]]:
    """(line, helper, Features members, runtime module) of every call of a check helper
    (``has_param_feature``, ``param_kind_is``...) naming ``Features`` members in ``text``.
    Only the top-level statements that hold such a call are walked."""
    if not any(helper in text for helper in _CHECK_HELPERS):
        return []
    lines = _lines_of(_HELPER_CALL, text)
    tree = _parse(text) if lines else None
    if tree is None:
        return []
    features_from = {alias.asname or alias.name: node.module
                     for node in _import_statements(text)
                     if isinstance(node, ast.ImportFrom) and node.module
                     for alias in node.names if alias.name == "Features"}
    found = []
    for stmt in _statements_at(tree, lines):
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else None)
            if name not in _CHECK_HELPERS:
                continue
            named = [(a.value.id, a.attr) for a in node.args if isinstance(a, ast.Attribute)
                     and isinstance(a.value, ast.Name) and a.value.id in features_from]
            if named:
                runtime = features_from[min(head for head, _ in named)]
                found.append((node.lineno, name, tuple(attr for _, attr in named), runtime))
    return sorted(found)


def check_changes(old: str, new: str, owner: FeatureOwner) -> list[dict[str, Any]]:
    """The feature checks the new text has and the old one had not (a resumed run leaves
    those it finds in place): one located change each, on the new side of the diff."""
    before = Counter((helper, members) for _, helper, members, _ in _feature_checks(old))
    out: list[dict[str, Any]] = []
    for line, helper, members, runtime in _feature_checks(new):
        if before[(helper, members)] > 0:
            before[(helper, members)] -= 1
            continue
        spelled = ", ".join(f"Features.{m}" for m in members)
        kind = _CHECK_HELPERS[helper]
        what = "isinstance" if kind == "isinstance" else "type(...)"
        out.append({"lineNumber": line, "diffSide": "right", "kind": kind,
                    "description": f"{what} check became {helper}(..., {spelled})",
                    "classes": [q for q in (owner(m, runtime) for m in members) if q]})
    return out
