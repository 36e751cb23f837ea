"""The refusal rules that read one class on its own, before anything is planned for it.

Each rule is a function ``(facts, inputs) -> Refuse | None``: the verdict of that rule
alone. ``CLASS_RULES`` lists them in the order the planner asks them; the first verdict
is the class's refusal, so a class with two faults is always refused for the same one.
Rules that also record what the class keeps (dropped members, generated names) stay in
``Planner._check_own``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

import libcst as cst

from codemod.analysis.classes import ClassFacts
from codemod.analysis.init_shapes import code_of
from codemod.planning.definition_rules import (
    binds_a_name_twice,
    class_body,
    defined_twice,
    names_a_parameter_as_generated_code_reads,
    names_bound_by_statement,
    reads_class_cell,
)
from codemod.planning.model import feature_member
from codemod.planning.refuse import Refuse
from codemod.planning.rule_inputs import RuleInputs
from codemod.types import (
    TENSOR_DATA_DESCRIPTORS,
    UNINITIALIZED_QUALNAMES,
    RefusalKind,
)


def used_where_no_rewrite_reaches(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A use of the class elsewhere in the tree that converting it would break."""
    use = inputs.forced.get(facts.qualname)
    return Refuse(use.reason, kind=RefusalKind.USE_SITE, use=use) if use is not None else None


def allow_listed(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """Listed in ``[tool.codemod] allow-classes``."""
    if facts.name in inputs.allow or facts.qualname in inputs.allow:
        return Refuse("allowed to stay a Parameter subclass by [tool.codemod] allow-classes",
                      kind=RefusalKind.ALLOWED)
    return None


def mro_fails(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """An MRO Python itself would reject."""
    error = inputs.index.mro_errors.get(facts.qualname)
    return Refuse(f"its MRO cannot be computed: {error}") if error is not None else None


def base_not_convertible(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A base that is not statically known, one that may be a Parameter class through
    a binding the index does not follow (``unsure_bases``), a lazy
    ``UninitializedParameter``, or a mixin that is not a Parameter class (the first such
    base)."""
    index = inputs.index
    unsure = index.unsure.get(facts.qualname)
    if unsure is not None:
        return Refuse(unsure)
    for base in index.base_qualnames(facts.qualname)[:len(facts.base_exprs)]:
        if base is None:
            return Refuse("has a dynamic base (not a name the tool can resolve statically)")
        if base in UNINITIALIZED_QUALNAMES:
            return Refuse(f"derives from {base}, whose lazy shape a plain Parameter cannot hold")
        if base not in index.param_classes and not index.is_param_root_base(base):
            return Refuse(f"mixes in {base}, which is not a Parameter class")
    return None


def has_class_keywords(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """Class keywords such as ``metaclass=``."""
    if facts.keywords:
        return Refuse(f"has class keywords ({', '.join(facts.keywords)}), e.g. a metaclass")
    return None


def is_decorated(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A class decorator, which may depend on it being a class."""
    return Refuse("is decorated; a decorator may depend on it being a class") \
        if facts.has_decorators else None


def overrides_tensor_attribute(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A member named like one of the tensor's C-level data descriptors."""
    members = [*facts.methods, *facts.properties, *facts.staticmethods, *facts.classmethods,
               *facts.decorated, *(name for name, _ in facts.class_attrs)]
    overridden = next((n for n in members if n in TENSOR_DATA_DESCRIPTORS), None)
    if overridden is not None:
        return Refuse(f"overrides `{overridden}`, the tensor's C-level attribute; "
                      "a plain Parameter cannot")
    return None


def has_unsupported_statement(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A statement in the class body the converter has no rule for (the first one)."""
    for stmt, what in facts.unsupported:
        line = facts.file.line_of(stmt) if facts.file is not None else 0
        return Refuse(f"has {what}, which the converter has no rule for", line)
    return None


def defines_special_method(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A special method (``__x__``) among the methods: a plain Parameter cannot carry it."""
    for name in facts.methods:
        if name.startswith("__") and name.endswith("__"):
            return Refuse(f"defines {name}, a special method a plain Parameter cannot carry")
    return None


def reads_own_class_names(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A class-level expression (a constant's value, a method's default or annotation) that
    reads a name the class body bound before it (``DOUBLE = SCALE * 2``, ``def load(self,
    w=SCALE)``): in the class body it is the class's own member; the converted constant or
    function is at module level, where the name is the module's (another value, or none).
    """
    bound: set[str] = set()
    for stmt in class_body(facts):
        read = _class_scope_reads(stmt) & bound
        if read:
            line = facts.file.line_of(stmt) if facts.file is not None else 0
            return Refuse(f"reads its own class-level name {sorted(read)[0]!r} in the class body; "
                          "at module level that name is the module's", line)
        bound.update(names_bound_by_statement(stmt, bare_annotations=True))
    return None


def _class_scope_reads(stmt: cst.CSTNode) -> set[str]:
    """Names ``stmt`` reads in the class's own scope: a statement's expressions, a
    function's defaults and annotations; not inside a function body, a
    ``lambda`` or a comprehension (after its first iterable), which see the module."""
    names: set[str] = set()

    class Reads(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # ``m.SCALE`` reads ``m`` only
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)  # ``f(SCALE=1)``: a keyword, not a read
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            node.params.visit(self)
            return False

        def _comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp) -> bool:
            node.for_in.iter.visit(self)
            return False

        visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    if isinstance(stmt, cst.FunctionDef):
        signature = stmt.params
        params = [*signature.posonly_params, *signature.params, *signature.kwonly_params]
        star = [p for p in (signature.star_arg, signature.star_kwarg) if isinstance(p, cst.Param)]
        # Decorators are left out: ``@weight_loader.setter`` names the property the
        # body bound before, which the property rules handle.
        parts: list[cst.CSTNode | None] = [
            stmt.returns, *(p.default for p in params), *(p.annotation for p in [*params, *star])]
        for part in parts:
            if part is not None:
                part.visit(Reads())
        return names
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                small.value.visit(Reads())
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and small.value is not None:
                small.value.visit(Reads())
    return names


#: A word starting with two underscores (``__tag``, also in ``self.__tag``): a file whose
#: text holds none that does not also end with two has no private name (no walk).
_DOUBLE_UNDERSCORE = re.compile(r"(?<!\w)__\w*")


def _text_of(facts: ClassFacts) -> str:
    """The text of the class's file ("" when not known: then every class is walked)."""
    return facts.file.text if facts.file is not None else ""


def feature_member_mangled(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A ``Features`` member named like a private name (``__Hidden``, or ``_Column``
    under ``feature-prefix = "_"``): defined in ``class Features``, Python would mangle
    it (``_Features__Hidden``), and ``Features.__Hidden`` would raise ``AttributeError``
    when the module defining the class is imported."""
    member = feature_member(inputs.feature_prefix, facts.name)
    if member.startswith("__") and not member.endswith("__"):
        prefix = f' (`feature-prefix = "{inputs.feature_prefix}"`)' if inputs.feature_prefix else ""
        return Refuse(f"its `Features` member `{member}`{prefix} starts with two underscores: "
                      "Python would mangle it inside `class Features`")
    return None


def uses_private_names(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A private name (``self.__tag``, ``def __helper``) in the class body: Python mangles it
    per class (``_Base__tag``, ``_Column__tag``: two attributes); in the module-level
    functions of the conversion it would be one unmangled ``__tag``."""
    text = _text_of(facts)
    if text and all(word.endswith("__") for word in _DOUBLE_UNDERSCORE.findall(text)):
        return None
    private: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value.startswith("__") and not node.value.endswith("__"):
                private.append(node)

    facts.node.body.visit(Names())
    if not private:
        return None
    line = facts.file.line_of(private[0]) if facts.file is not None else 0
    return Refuse(f"uses the private name {private[0].value!r}, which Python mangles per class; "
                  "a module-level function would not", line)


def uses_names_read_otherwise(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A name in the class body that is not in NFKC form (``self._ｗ = w``): CPython reads
    it as its NFKC form (``_w``), while the conversion writes member and field names into
    strings (``setattr``, the field table), which keep the spelling: the converted code
    would store one attribute and read another."""
    text = _text_of(facts)
    if text and text.isascii():
        return None  # every name is ASCII, its own NFKC form
    odd: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if not node.value.isascii() and unicodedata.normalize("NFKC", node.value) != node.value:
                odd.append(node)

    facts.node.visit(Names())
    if not odd:
        return None
    line = facts.file.line_of(odd[0]) if facts.file is not None else 0
    normal = unicodedata.normalize("NFKC", odd[0].value)
    return Refuse(f"uses the name {odd[0].value!r}, which Python reads as {normal!r}; the "
                  "conversion names attributes in strings, which would keep the spelling", line)


def module_not_importable(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A class in a file whose module name is not made of identifiers (``run-model.py``):
    no import statement can name it, nor the runtime module written beside it."""
    if facts.module and not all(part.isidentifier() for part in facts.module.split(".")):
        return Refuse(f"is defined in {facts.module}, a module name no import statement can "
                      "name; neither it nor a runtime module beside it could be imported")
    return None


def class_attribute_not_plain_data(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A class attribute whose value may be a function or a descriptor (``scale = _scale``,
    ``double = lambda self: ...``, ``v = property(...)``, ``h = staticmethod(f)``, any call
    or name). A converted parameter holds the value as its own attribute, where Python no
    longer binds it (``p.scale(2)`` misses ``self``, ``p.v`` is the property object). Only
    literal data is certain to be neither: numbers, strings, bytes, ``None``/``True``/
    ``False``, tuples, lists, sets, dicts (displays and comprehensions), and operators and
    conditional expressions of them (a registry ``{}`` stays one object shared by every
    parameter). A special name (``__module__ = ...``) set in the body is the class's,
    never an instance's."""
    for name, stmt in facts.class_attrs:
        if name.startswith("__") and name.endswith("__"):
            line = facts.file.line_of(stmt) if facts.file is not None else 0
            return Refuse(f"sets {name}, a special attribute of the class; on a plain Parameter "
                          "it would be an attribute of each parameter", line)
        small = stmt.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign)) else None
        if value is not None and not _plain_data(value):
            line = facts.file.line_of(stmt) if facts.file is not None else 0
            code = code_of(value)
            shown = code if len(code) <= 40 else code[:37] + "..."
            return Refuse(f"class attribute {name!r} holds `{shown}`, which may be a function or a "
                          "descriptor; as a parameter's own attribute it would not be bound", line)
    return None


def _plain_data(node: cst.BaseExpression) -> bool:
    """Literal data: what a class attribute holds the same way on an instance."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                         cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and _plain_data(e.value) for e in node.elements)
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp)):
        return True  # a new list, set or dict: never a function or a descriptor
    if isinstance(node, cst.IfExp):
        return _plain_data(node.body) and _plain_data(node.orelse)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _plain_data(e.key) and _plain_data(e.value)
                   for e in node.elements)
    if isinstance(node, cst.UnaryOperation):
        return _plain_data(node.expression)
    if isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)):
        return _plain_data(node.left) and _plain_data(node.right)
    return False


#: The class rules, in the order they are asked.
CLASS_RULES: tuple[Callable[[ClassFacts, RuleInputs], Refuse | None], ...] = (
    used_where_no_rewrite_reaches,
    allow_listed,
    mro_fails,
    module_not_importable,
    base_not_convertible,
    has_class_keywords,
    is_decorated,
    overrides_tensor_attribute,
    has_unsupported_statement,
    defined_twice,
    binds_a_name_twice,
    defines_special_method,
    reads_class_cell,
    names_a_parameter_as_generated_code_reads,
    reads_own_class_names,
    class_attribute_not_plain_data,
    uses_private_names,
    uses_names_read_otherwise,
    feature_member_mangled,
)
