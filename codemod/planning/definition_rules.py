"""Class rules about how a class is defined: what Python's class statement gives that a
factory and module-level functions would not.

Each rule is a function ``(facts, inputs) -> Refuse | None``, asked in the order
``class_rules.CLASS_RULES`` lists them: a class its module defines twice (and what such
a definition derives from), a name its body binds twice, a method reading the class's
own ``__class__`` cell, a ``__new__``/``__init__`` parameter named like a name the
generated code reads.
"""

from __future__ import annotations

import libcst as cst

from codemod.analysis.classes import ClassFacts
from codemod.analysis.index import ClassIndex
from codemod.planning.refuse import Refuse
from codemod.planning.rule_inputs import RuleInputs
from codemod.runtime.emit import FEATURES_NAME
from codemod.runtime.helpers import CHECK_PARAM_KWARGS, INIT_PARAM_KIND, SET_PARAM_FIELD


def defined_twice(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A class its module defines twice (``class Col`` again below, or in two branches),
    or a class such a definition derives from. Each definition is a class of its own to
    Python (an instance of the first is no instance of the second); the index knows the
    name by its last definition only, so the conversion would make one factory and one
    kind of both, and keep the earlier definition deriving from a converted base."""
    for ff in inputs.index.files.values():
        lines: dict[str, list[ClassFacts]] = {}
        for found in ff.classes:
            lines.setdefault(found.qualname, []).append(found)
        for qualname, same in lines.items():
            if len(same) < 2:
                continue
            where = ", ".join(str(c.line) for c in same)
            if qualname == facts.qualname:
                return Refuse(f"its module defines class {facts.name} twice (lines {where}); "
                              "each definition is a class of its own")
            if any(facts.qualname in _ancestors(c, inputs.index) for c in same):
                return Refuse(f"{qualname}, which {ff.module_name} defines twice (lines {where}), "
                              "derives from it")
    return None


def _ancestors(facts: ClassFacts, index: ClassIndex) -> set[str]:
    """The Parameter classes ``facts`` derives from (its bases and their MROs)."""
    found: set[str] = set()
    for base in facts.base_qualnames:
        canonical = index.canonical(base)
        if canonical is not None and canonical in index.param_classes:
            found |= {canonical, *index.mros.get(canonical, ())}
    return found


def binds_a_name_twice(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A name the class body binds twice (two ``def load``, a constant then a method, two
    ``__init__``): Python keeps the last binding, while the conversion reads each member
    once. A property's ``@x.setter``, ``@x.deleter`` or ``@x.getter`` is the same member."""
    seen: set[str] = set()
    for stmt in class_body(facts):
        for name in names_bound_by_statement(stmt, bare_annotations=False):
            if name in seen:
                line = facts.file.line_of(stmt) if facts.file is not None else 0
                return Refuse(f"binds {name!r} twice in its body; Python keeps the last binding, "
                              "the conversion reads each member once", line)
            seen.add(name)
    return None


def class_body(facts: ClassFacts) -> tuple[cst.BaseStatement, ...]:
    """The statements of the class's body (none for a one-line body)."""
    body = facts.node.body
    return tuple(body.body) if isinstance(body, cst.IndentedBlock) else ()


def names_bound_by_statement(stmt: cst.BaseStatement, bare_annotations: bool) -> list[str]:
    """The names a statement of a class body binds: a ``def`` (not a property's
    ``@x.setter``/``@x.deleter``/``@x.getter``, which is the same member), a nested
    ``class``, a plain name assigned or augmented; annotated, with a value, or also
    without one (``bare_annotations``)."""
    if isinstance(stmt, cst.FunctionDef):
        accessor = any(isinstance(d.decorator, cst.Attribute) and isinstance(d.decorator.value, cst.Name)
                       and d.decorator.value.value == stmt.name.value
                       and d.decorator.attr.value in ("setter", "deleter", "getter")
                       for d in stmt.decorators)
        return [] if accessor else [stmt.name.value]
    if isinstance(stmt, cst.ClassDef):
        return [stmt.name.value]
    names: list[str] = []
    for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
            [small.target] if isinstance(small, cst.AugAssign) or (
                isinstance(small, cst.AnnAssign) and (bare_annotations or small.value is not None)) else []
        names += [t.value for t in targets if isinstance(t, cst.Name)]
    return names


class _ClassCell(cst.CSTVisitor):
    """Whether a function reads ``__class__``, the cell of the class it is defined in."""

    def __init__(self) -> None:
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # ``x.__class__`` is an attribute, not the cell
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value == "__class__"


def reads_class_cell(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A method that reads ``__class__`` by itself (``__class__.__name__``): Python gives
    a function defined in a class that cell; the same function at module level has none
    (``NameError``)."""
    text = facts.file.text if facts.file is not None else ""
    if text and "__class__" not in text:
        return None
    for stmt in class_body(facts):
        if isinstance(stmt, cst.FunctionDef):
            cell = _ClassCell()
            stmt.visit(cell)
            if cell.found:
                line = facts.file.line_of(stmt) if facts.file is not None else 0
                return Refuse(f"{stmt.name.value}() reads `__class__`, the class's own cell, which "
                              "a module-level function has not", line)
    return None


#: Names the generated factory and wraps read at module level: ``Features``, the
#: runtime's helpers they call, the spellings of ``Parameter``; each family's ``wrap_*``
#: functions too (a prefix). Other helpers a rewritten body calls are imported under
#: another name where a parameter holds theirs (``transforms/refs.py``).
_GENERATED_READS = frozenset({FEATURES_NAME, CHECK_PARAM_KWARGS, INIT_PARAM_KIND, SET_PARAM_FIELD,
                              "Parameter", "nn", "torch"})
#: The first parameter of every wrap: an ``__init__`` keyword of that name reaches the
#: wraps of its bases through ``**kwargs`` (the factory renames a ``__new__``'s own).
_WRAP_TARGET = "param"


def names_a_parameter_as_generated_code_reads(facts: ClassFacts, inputs: RuleInputs) -> Refuse | None:
    """A ``__new__`` or ``__init__`` parameter named like a name the generated factory or
    wrap reads (``Features``, ``init_param_kind``, ``nn``, ``wrap_base``), or an
    ``__init__`` parameter named ``param``: the factory and wraps take those parameters,
    so inside them the name would be the argument (``Features=None``: every build raised
    ``AttributeError``; ``param=None``: ``wrap_base() got multiple values``)."""
    for function in (facts.new, facts.init):
        if function is None:
            continue
        params = function.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params,
                 *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param))]
        for param in every:
            name = param.name.value
            if name in _GENERATED_READS or name.startswith("wrap_") or (
                    function is facts.init and name == _WRAP_TARGET):
                line = facts.file.line_of(function) if facts.file is not None else 0
                return Refuse(f"{function.name.value}() has a parameter named {name!r}, a name the "
                              "generated factory or wrap reads", line)
    return None
