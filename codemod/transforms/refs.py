"""How one file spells the names the rewrites need, adding imports where they are missing.

Every generated reference goes through ``FileRefs`` so that imports are requested once,
with ``AddImportsVisitor``, and never shadow a name the file already binds.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from codemod.analysis import python_trees
from codemod.analysis.classes import FileFacts
from codemod.analysis.scope_values import names_bound_by
from codemod.planning.plan import FEATURES_NAME, Plan
from codemod.runtime.emit import ADDED_ANYWHERE, gained_by_rewrites
from codemod.types import PARAMETER_QUALNAMES


def _bound_in_any_scope(text: str, added: frozenset[str] | set[str]) -> set[str]:
    """The names of ``added`` that ``text`` binds in any scope (a function's local or
    parameter, a loop target, a ``global`` in a function): an added import of that name
    would be replaced there, so it is imported under another name. Read only where the
    text spells one of them (CPython's tree; none when it does not parse)."""
    spelled = {name for name in added if name in text}
    if not spelled:
        return set()
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return spelled
    return spelled & names_bound_by(ast.walk(tree))


def _star_imports_from_outside(text: str, top_package: str) -> bool:
    """Whether ``text`` star-imports a module outside its own top package (whose names
    the tree does not show; a star import of the tree's own modules is ``Plan.star_held``'s)."""
    if "*" not in text or "import" not in text:
        return False
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, ast.ImportFrom) and not node.level and node.module is not None
               and node.module.partition(".")[0] != top_package and any(a.name == "*" for a in node.names)
               for node in ast.walk(tree))


class FileRefs:
    """Expressions for features, runtime helpers, generated functions and ``Parameter``."""

    def __init__(self, ff: FileFacts, plan: Plan, context: CodemodContext) -> None:
        self.ff = ff
        self.plan = plan
        self.context = context
        self.module = ff.module_name
        self._taken = set(ff.globals) | set(ff.bindings) | _bound_in_any_scope(
            ff.text, ADDED_ANYWHERE | {m.rpartition(".")[2] for m in plan.runtime_modules})
        if _star_imports_from_outside(ff.text, ff.module_name.partition(".")[0]):
            # ``from extlib import *`` may give any name, after the helper's import.
            self._taken |= ADDED_ANYWHERE
        if plan.star_held is not None:
            # A name added here reaches the modules that star-import this one, and may
            # replace one this one's own star imports gave it.
            helpers = gained_by_rewrites(len(plan.runtime_modules))
            self._taken |= set(plan.star_held(self.module, lambda _: helpers))
        self._imported: dict[tuple[str, str], str] = {}
        #: Names this file defines after conversion (wraps, method functions...).
        self.local_defs: set[str] = set()
        #: Whether this file is a runtime module (never: ``apply`` writes those itself).
        self.is_runtime = self.module in plan.runtime_modules

    def _import(self, module: str, name: str) -> str:
        key = (module, name)
        if key in self._imported:
            return self._imported[key]
        local = name
        bound = self.ff.bindings.get(name)
        if bound == f"{module}.{name}":
            self._imported[key] = name
            return name
        if name in self._taken and name == FEATURES_NAME and "." in module:
            # A second family's (or a name the file binds): ``parameter_features.Features``.
            package, _, last = module.rpartition(".")
            if last not in self._taken:
                AddImportsVisitor.add_needed_import(self.context, package, last)
                self._taken.add(last)
                self._imported[key] = local = f"{last}.{name}"
                return local
        if name in self._taken:
            local = f"{name}_{module.rsplit('.', 1)[-1]}"
            while local in self._taken:
                local += "_"
            AddImportsVisitor.add_needed_import(self.context, module, name, local)
        else:
            AddImportsVisitor.add_needed_import(self.context, module, name)
        self._taken.add(local)
        self._imported[key] = local
        return local

    def name_in(self, module: str, name: str) -> cst.Name | cst.Attribute:
        """A module-level name of ``module`` (or ``Class.member``) as this file can spell it."""
        head, _, rest = name.partition(".")
        local = head if module == self.module else self._import(module, head)
        if not rest and "." not in local:
            return cst.Name(local)
        return cst.parse_expression(f"{local}.{rest}" if rest else local)  # type: ignore[return-value]

    def feature(self, qualname: str) -> cst.Attribute:
        """``Features.X`` for the converted class ``qualname`` (from its family's runtime module)."""
        plan = self.plan.classes[qualname]
        return cst.Attribute(
            value=self.name_in(plan.runtime_module, FEATURES_NAME),
            attr=cst.Name(self.plan.feature_name(qualname)),
        )

    def helper(self, name: str, qualname: str | None = None) -> cst.Name:
        """A runtime helper (``has_param_feature`` ...), local or imported."""
        if self.is_runtime:
            return cst.Name(name)
        if qualname is not None:
            module = self.plan.classes[qualname].runtime_module
        else:
            module = sorted(self.plan.runtime_modules)[0]
        return self.name_in(module, name)  # type: ignore[return-value]

    def parameter(self) -> cst.BaseExpression:
        """``torch.nn.Parameter`` as this file spells it."""
        for local, qual in sorted(self.ff.bindings.items()):
            if qual in PARAMETER_QUALNAMES:
                return cst.Name(local)
        for local, qual in sorted(self.ff.bindings.items()):
            if qual == "torch.nn":
                return cst.Attribute(value=cst.Name(local), attr=cst.Name("Parameter"))
        for local, qual in sorted(self.ff.bindings.items()):
            if qual == "torch":
                return cst.parse_expression(f"{local}.nn.Parameter")
        return cst.Name(self._import("torch.nn", "Parameter"))

    def parameter_code(self) -> str:
        """The spelling of ``Parameter`` as source text."""
        return cst.Module(body=[]).code_for_node(self.parameter())


class FStringQuotes(cst.CSTTransformer):
    """Knows the quotes of the f-strings around the node being visited, so that a string
    literal a rewrite writes there is valid: before Python 3.12 an expression inside an
    f-string cannot reuse the f-string's quote (``f"{param_field(p, '_f')}"``)."""

    def __init__(self) -> None:
        super().__init__()
        #: Quote of each f-string around the node being visited, innermost last.
        self._fstring_quotes: list[str] = []

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._fstring_quotes.append(node.quote)

    def leave_FormattedString(
        self, original_node: cst.FormattedString, updated_node: cst.FormattedString
    ) -> cst.FormattedString:
        self._fstring_quotes.pop()
        return updated_node

    def quote(self) -> str:
        """``"``, or ``'`` inside an f-string quoted with ``"``."""
        return "'" if any('"' in q for q in self._fstring_quotes) else '"'

    def literal(self, text: str) -> cst.SimpleString:
        """``text`` as a string literal, quoted as ``quote`` says."""
        return cst.SimpleString(f"{self.quote()}{text}{self.quote()}")
