"""Uses and classes turned into ``codemod check`` findings (CM001-CM005 texts; CM006's
are in ``type_findings``), the class-only uses of a factory the use visitor does not see,
and suppression comments."""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from collections.abc import Mapping
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.classes import ClassFacts
from codemod.analysis.names import module_name_for
from codemod.analysis.nested_classes import NestedClass
from codemod.analysis.source_lines import char_column, physical_lines
from codemod.analysis.text_search import alternation, word_after
from codemod.analysis.use_rules import USE_RULES, UseKind
from codemod.check.converted import Target
from codemod.check.locate import Locator
from codemod.check.rules import Finding
from codemod.pipeline.indexing import file_import_targets
from codemod.pipeline.nested_parameters import kept_message
from codemod.pipeline.results import RunResult
from codemod.planning.plan import Plan
from codemod.planning.safety_net import SafetyNet
from codemod.prefilters import prefilter
from codemod.runtime.helpers import HAS_PARAM_FEATURE, PARAM_KIND_IS
from codemod.types import PARAMETER_QUALNAMES


def other_class_only_uses(run: RunResult, factories: dict[str, Target],
                           findings: list[Finding], mentioning: list[Path]) -> list[Finding]:
    """CM003/CM004 for the class-only uses of ``factories`` that ``ClassStyleUses`` does
    not report: attribute reads (not of what every function has: ``X.__doc__``), unions,
    ``except``, ``case``, ``super()``,
    ``register()``, subscripts; and checks or bases that reach a factory through a star
    import, ``getattr(module, "X")`` or ``globals()["X"]``. One finding per line and name."""
    names = frozenset(t.name for t in factories.values())
    net = SafetyNet({path: source.text for path, source in run.sources.items()})
    reported = {(f.path, f.line) for f in findings if f.code in ("CM003", "CM004")}
    out: list[Finding] = []
    failed = {f.path for f in run.failed()}
    other_forms = _other_forms(names)
    for path in mentioning:
        source = run.sources[path]
        if path in failed or not prefilter(source.text, names):
            continue
        if not (any(form.search(source.text) for form in other_forms) or net.own_escape(path, names) or (
                net.any_star() and any(local in names and target not in factories for local, target
                                       in file_import_targets(path, source.text) or ()))):
            continue  # only what ``ClassStyleUses`` looks at can be in it
        unions: set[int] | None = None
        attributes: dict[int, str] | None = None
        for node, kind, direct, qual, how in net.uses(path, names, lambda q: q in factories, reexports=True):
            if kind is UseKind.ANNOTATION:
                if unions is None:
                    unions = evaluated_annotation_unions(python_trees.parse(source.text))
                if id(node) in unions:
                    kind = UseKind.UNION  # ``X | None`` evaluated at definition: raises
            if kind is UseKind.ATTRIBUTE:
                if attributes is None:
                    attributes = _attributes_read(python_trees.parse(source.text))
                if attributes.get(id(node)) in FUNCTION_ATTRIBUTES:
                    continue  # every function has it: reading it off a factory raises nothing
            rule = USE_RULES[kind]
            if rule.factory_code is None or (direct and rule.converted_code is not None):
                continue  # still valid, or ``ClassStyleUses`` reports it
            if kind.endswith(" union") and (path, node.lineno) in reported:  # type: ignore[attr-defined]
                continue  # already reported as a check against the factory
            target = factories[qual]
            code = ast.unparse(node)
            via = "" if direct else f" ({how.split(',')[0]})"
            what = f"`{code}`{via} is" if code == target.name else f"`{code}`{via} is `{target.name}`,"
            line, col = node.lineno, node.col_offset + 1  # type: ignore[attr-defined]
            col = len(source.text.splitlines()[line - 1].encode("utf-8")[:col - 1].decode(
                "utf-8", errors="replace")) + 1
            out.append(Finding(
                rule.factory_code,
                f"{what} a factory function now (converted by `codemod apply`): {rule.factory_fails}",
                path, line, col, False,
            ))
    return out


#: Attributes every Python function has: ``X.__doc__`` of a factory is valid code (the
#: class's own ``__name__``, ``__qualname__``, ``__module__`` are ``use_rules``' concern).
FUNCTION_ATTRIBUTES = frozenset({
    "__doc__", "__defaults__", "__kwdefaults__", "__code__", "__globals__", "__closure__",
    "__annotations__", "__dict__", "__call__", "__get__",
})


def _attributes_read(tree: ast.Module) -> dict[int, str]:
    """id of each expression read an attribute of (``X`` of ``X.attr``) -> the attribute."""
    return {id(node.value): node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def evaluated_annotation_unions(tree: ast.Module) -> set[int]:
    """ids of the names and attributes that are operands of a ``|`` in an annotation
    Python evaluates when the code runs: a function's parameters and return, and a
    module's or class body's annotated assignment, unless the module starts with ``from
    __future__ import annotations`` (then none is). A union with a function there raises
    ``TypeError`` when the module is imported; ``apply`` rewrites the ones it converts."""
    if any(isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
           and any(alias.name == "annotations" for alias in stmt.names) for stmt in tree.body):
        return set()
    out: set[int] = set()
    stack: list[tuple[ast.AST, bool]] = [(tree, True)]  # (node, in a module or class body)
    while stack:
        node, evaluated_body = stack.pop()
        annotations: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            annotations = [a.annotation for a in (*arguments.posonlyargs, *arguments.args,
                                                  arguments.vararg, *arguments.kwonlyargs,
                                                  arguments.kwarg) if a is not None]
            if not isinstance(node, ast.Lambda):
                annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign) and evaluated_body:
            annotations = [node.annotation]
        for annotation in annotations:
            if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
                out |= _union_operands(annotation)
        inner = isinstance(node, (ast.Module, ast.ClassDef)) or (
            evaluated_body and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                     ast.Lambda)))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend((child, inner) for child in node.orelse)  # the body never runs
            continue
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return out


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``: false when the code runs."""
    return (python_trees.dotted_expr(test) or "").rpartition(".")[2] == "TYPE_CHECKING"


def _union_operands(expr: ast.expr) -> set[int]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return _union_operands(expr.left) | _union_operands(expr.right)
    return {id(expr)} if isinstance(expr, (ast.Name, ast.Attribute)) else set()


@functools.lru_cache(maxsize=8)
def _other_forms(names: frozenset[str]) -> tuple[re.Pattern[str], ...]:
    r"""Text of a use ``ClassStyleUses`` does not report: ``X.attr``, ``X[``, ``X |``,
    ``| X``, ``except ... X``, ``super(X``, ``register(X``, ``has_param_feature(``,
    ``param_kind_is(`` (a cheap gate: the AST decides). A text holds one if any of the
    patterns matches. Each starts with its literal words (``text_search.word_after``: a
    pattern that starts with a look-behind or ``\b`` took 3 ms a file on vLLM 0.34's
    converted tree, where these are asked of every file that names a factory). No names, no pattern (the caller's prefilter passes no file
    then; the one pattern matched a bracket or dot after a non-word character)."""
    if not names:
        return ()
    words = alternation(names)
    starting = "|".join(word_after(name) for name in sorted(names))
    return (re.compile(rf"(?:{starting})\s*[.\[|]"),
            re.compile(rf"\|\s*[\w.]*(?<!\w)(?:{words})(?!\w)"),
            re.compile(rf"{word_after('except')}\b[^\n:]*(?<!\w)(?:{words})(?!\w)"),
            re.compile(rf"{word_after('super')}\s*\(\s*(?:{words})(?!\w)"),
            re.compile(rf"{word_after('register')}\s*\(\s*[\w.]*(?<!\w)(?:{words})(?!\w)"),
            re.compile(rf"(?:{word_after(HAS_PARAM_FEATURE)}|{word_after(PARAM_KIND_IS)})\s*\("))


def _names(named: list[tuple[str, Target]]) -> str:
    return ", ".join(f"`{spelling}`" for spelling, _ in named)


def use_findings(path: Path, place: tuple[int, int], kind: UseKind, label: str,
                 named: list[tuple[str, Target]]) -> list[Finding]:
    """CM002 for names ``apply`` rewrites, CM003/CM004 for what it left behind, by the
    rule of ``kind`` (``label`` names the check, as ``type() is``, or the class statement).

    A kept class (shadow) stays a class: only ``isinstance`` against it changes meaning
    (its converted subclasses are plain Parameters now); ``type(p) is Kept`` and class
    bases are unaffected (a subclass of it is a Parameter class: CM001).
    """
    line, col = place
    rule = USE_RULES[kind]
    is_base = kind is UseKind.BASE
    out = []
    classes = [(s, t) for s, t in named
               if t.kind == "class" or (t.kind == "kept" and rule.kept_changes)]
    factories = [(s, t) for s, t in named if t.kind == "factory"]
    shadows = [(s, t) for s, t in named if t.kind == "shadow" and rule.kept_changes]
    if classes and rule.converted_code is not None:
        what = f"{label} derives from" if is_base else f"`{label}` check against"
        out.append(Finding(
            rule.converted_code,
            f"{what} Parameter class {_names(classes)}; `codemod apply` rewrites it",
            path, line, col, True,
        ))
    if factories and is_base:
        spelled, target = factories[0]
        own = label.removeprefix("class ")
        out.append(Finding(
            "CM003",
            f"{label} derives from {_names(factories)}, a factory function now "
            f"(converted by `codemod apply`): subclassing a function fails at import; "
            f"write what `apply` writes for a subclass: a factory `{own}` that builds a "
            f"`Parameter`, calls `init_param_kind(param, Features.{own})`, the wraps of "
            f"`{spelled}`'s chain and then its own, and below it "
            f"`register_param_kind(Features.{own}, bases=(Features.{target.feature},))`",
            path, line, col, False,
        ))
    elif factories and rule.factory_code is not None:
        target = factories[0][1]
        feature = f"Features.{target.feature}"
        if kind is not UseKind.TYPE_COMPARISON:
            effect = "raises TypeError"
            instead = (f"`has_param_feature(obj, {feature})` (both from `{target.helpers_module}`)"
                       if kind is UseKind.ISINSTANCE else
                       "a feature check on an instance (`has_param_feature`)")
        else:
            # A comparison with a function never matches a type.
            negated = label.endswith((" is not", " !=", " not in"))
            effect = "is always true" if negated else "is always false"
            instead = f"`param_kind_is(obj, {feature})` (both from `{target.helpers_module}`)"
        out.append(Finding(
            rule.factory_code,
            f"`{label}` check against {_names(factories)}, a factory function now "
            f"(converted by `codemod apply`): it {effect}; write {instead}",
            path, line, col, False,
        ))
    if shadows:
        spelled, target = shadows[0]
        out.append(Finding(
            "CM004",
            f"`isinstance` check against {_names(shadows)}, a class `codemod apply` kept whose "
            f"converted subclasses are plain Parameters now: it misses them; write "
            f"`has_param_feature(obj, Features.{target.feature}) or isinstance(obj, {spelled})` "
            f"(`Features`, `has_param_feature` from `{target.helpers_module}`)",
            path, line, col, False,
        ))
    return out


def class_place(run: RunResult, locator: Locator, facts: ClassFacts) -> tuple[int, int]:
    if facts.file is None:
        return facts.line, 1
    return locator.place_class(facts.file, run.sources[facts.path].text, facts.node)


def class_finding(plan: Plan, qualname: str, place: tuple[int, int]) -> Finding:
    """CM001 for one Parameter class of the plan."""
    cp = plan.classes[qualname]
    facts = cp.facts
    bases = plan.index.param_bases(qualname)
    via = ""
    if bases and not any(q in PARAMETER_QUALNAMES for q in plan.index.base_qualnames(qualname)):
        via = f" (through `{plan.classes[bases[0]].name}`)" if bases[0] in plan.classes else ""
    if cp.converted:
        tail = "`codemod apply` turns it into a factory function"
    else:
        reason = cp.refusal.reason if cp.refusal is not None else "refused"
        tail = f"`codemod apply` keeps it a class: {reason}"
    return Finding(
        "CM001",
        f"`{facts.name}` derives from torch.nn.Parameter{via}; {tail}",
        facts.path, place[0], place[1], cp.converted,
    )


def allowed(plan: Plan, qualname: str, allow: tuple[str, ...]) -> bool:
    facts = plan.classes[qualname].facts
    return facts.name in allow or facts.qualname in allow


def nested_finding(path: Path, nested: NestedClass, text: str) -> Finding:
    """CM001 for a Parameter class below a module's top level (``apply`` cannot fix it)."""
    line = nested.node.lineno
    lines = physical_lines(text)
    column = char_column(lines[line - 1], nested.node.col_offset) if line <= len(lines) else 1
    return Finding("CM001", kept_message(nested), path, line, column, False)


def nested_allowed(path: Path, nested: NestedClass, allow: tuple[str, ...]) -> bool:
    """Allow-listed by its name or its qualified name (``pkg.mod.make.<locals>.Local``)."""
    return nested.node.name in allow or f"{module_name_for(path)}.{nested.qualname}" in allow


#: ``# codemod: ignore`` or ``# codemod: ignore[CM001, CM004]`` (case-insensitive, blanks
#: allowed around the codes). ``ignore-this``, ``ignored`` and an unclosed ``ignore[CM006``
#: are no marker; text after the closing bracket does not widen the codes.
_SUPPRESSION = re.compile(
    r"#\s*codemod\s*:\s*ignore(?:\s*\[(?P<codes>[^\]]*)\]|(?!\s*\[)(?![\w-]))", re.IGNORECASE)


def is_suppressed(finding: Finding, comments: Mapping[int, str]) -> bool:
    """Whether the finding's line carries a suppression comment that covers its code
    (``comments``: ``comments_by_line`` of its file)."""
    comment = comments.get(finding.line)
    if comment is None:
        return False
    for match in _SUPPRESSION.finditer(comment):
        codes = match.group("codes")
        if codes is None:
            return True
        if finding.code in {c.strip().upper() for c in codes.split(",")}:
            return True
    return False


def comments_by_line(text: str) -> dict[int, str]:
    """The comments of ``text`` that mention ``codemod`` (any case), by line, read by
    Python's tokenizer: a marker inside a string, one-line or triple-quoted, is no
    comment. A text the tokenizer rejects is read line by line (``comment_of``)."""
    if "codemod" not in text.lower():
        return {}
    found: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and "codemod" in token.string.lower():
                found[token.start[0]] = token.string
    except (tokenize.TokenError, SyntaxError, ValueError):
        found = {}
        for number, line in enumerate(physical_lines(text), 1):
            comment = comment_of(line.rstrip("\r\n"))
            if comment is not None and "codemod" in comment.lower():
                found[number] = comment
    return found


def comment_of(line: str) -> str | None:
    """The comment ending ``line`` (from its ``#``), None when it has none: quotes are
    followed, single and triple, with backslash escapes (the reading of a file Python's
    tokenizer rejects; a line that closes a string opened earlier is misread)."""
    quote = ""
    i = 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
        elif char == "#":
            return line[i:]
        elif char in "'\"":
            quote = char * 3 if line.startswith(char * 3, i) else char
            i += len(quote)
            continue
        i += 1
    return None
