"""``analysis/held_types.py``: which names holding an object's type the rewrite covers.

Each row is one function body; the answer is, per name bound to ``type(x)`` or
``x.__class__``, whether every read is covered (None) or the start of the reason why not.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from codemod.analysis.held_types import held_types

HEADER = "import torch\nfrom torch import nn\nfrom pkg.params import X, Y\nLIMIT = 3\n"


def _verdicts(body: str, header: str = HEADER) -> dict[str, str | None]:
    tree = ast.parse(header + "\n\ndef f(p, q, cls):\n" + textwrap.indent(textwrap.dedent(body), "    "))
    return {name: held.why_not for name, held in held_types(tree).get("f", {}).items()}


@pytest.mark.parametrize(("body", "expected"), [
    # covered: comparisons with classes written out, types, literals, other held names
    ("t = type(p)\nreturn t == X or t is nn.Parameter or t != None", {"t": None}),
    ("t = p.__class__\nreturn t in (X, torch.nn.Parameter, type(q))", {"t": None}),
    ("a = type(p)\nb = type(q)\nreturn a is b", {"a": None, "b": None}),
    ("t = type(p)\nif t == X:\n    return 1\nraise ValueError(f'{t=}')", {"t": None}),
    ("t = type(p)\nreturn (lambda: t == X)()", {"t": None}),
    ("t = type(p)\nreturn [t is Y for _ in range(2)]", {"t": None}),
    # not covered: other reads
    ("t = type(p)\nreturn t.__name__", {"t": "`t.__name__`"}),
    ("t = type(p)\nreturn t(p.data)", {"t": "`t(p.data)`"}),
    ("t = type(p)\nreturn issubclass(t, X)", {"t": "`issubclass(t, X)`"}),
    ("t = type(p)\nprint(f'{t}')\nreturn t == X", {"t": "`"}),
    ("t = type(p)\nreturn t == X == Y", {"t": "`t == X == Y`"}),
    ("t = type(p)\nreturn t in [*cls]", {"t": "`t in [*cls]`"}),
    ("t = type(p)\nreturn X in (t, Y)", {"t": "`(t, Y)`"}),
    # not covered: the other side may hold a type, or any value
    ("t = type(p)\nreturn t == cls", {"t": "`t == cls`"}),
    ("t = type(p)\nreturn t == cls.kind", {"t": "`t == cls.kind`"}),
    ("t = type(p)\nk = X\nreturn t == k", {"t": "`t == k`"}),
    ("t = type(p)\nreturn t == LIMIT", {"t": None}),  # a module-level value that is no type
    # a string may equal a kind's name; a format spec raised TypeError for a class
    ("t = type(p)\nreturn t == 'pkg.params.X'", {"t": "`t == 'pkg.params.X'`"}),
    ("t = type(p)\nreturn t in (X, 'pkg.params.X')", {"t": "`t in (X, 'pkg.params.X')`"}),
    ("t = type(p)\nif t == X:\n    return 1\nraise ValueError(f'{t:>5}')", {"t": "`"}),
    ("a = type(p)\nb = type(q)\nb.x\nreturn a == b", {"a": "compared with `b`", "b": "`b.x`"}),
])
def test_which_reads_are_covered(body: str, expected: dict[str, str | None]) -> None:
    found = _verdicts(body)
    assert set(found) == set(expected)
    for name, why in expected.items():
        if why is None:
            assert found[name] is None, found[name]
        else:
            assert found[name] is not None and found[name].startswith(why), found[name]


@pytest.mark.parametrize("body", [
    "t = type(p)\nt = type(q)\nreturn t == X",  # bound twice
    "t = type(p)\nfor t in q:\n    pass\nreturn t == X",  # bound another way
    "t = type(p)\ndel t",
    "t = type(p)\ndef g():\n    nonlocal t\n    t = int\nreturn t == X",  # rebound inside
    "t = type(p)\nreturn [t for t in q]",  # a comprehension's own t
    "global t\nt = type(p)\nreturn t == X",
    "t = type(p)\nt = type(p, (), {})\nreturn t == X",  # also the three-argument type(): a new class
    "t: type = type(p)\nreturn t == X",  # annotated: not followed
    "t = type(p)\nclass C:\n    t = type(q)\n    ok = t == X\nreturn t == X",  # a class body's own t
])
def test_names_not_bound_once_to_a_type_are_not_covered(body: str) -> None:
    """Left as they are; each bound to a type is listed (not covered), so that a
    comparison of it with types is reported."""
    assert _verdicts(body).get("t", "not listed") is not None


@pytest.mark.parametrize("body", [
    "t: type = type(p)\nreturn t is nn.Parameter",
    "u = t = type(p)\nreturn t is nn.Parameter",
    "if (t := type(p)) is nn.Parameter:\n    return 1",
    "t = type(p)\nif q:\n    t = None\nreturn t is nn.Parameter",
])
def test_names_bound_otherwise_are_reported_where_compared_with_types(body: str) -> None:
    held = held_types(ast.parse(HEADER + "\n\ndef f(p, q, cls):\n" + textwrap.indent(body, "    ")))["f"]["t"]
    assert held.why_not is not None and held.why_not.startswith("bound to a type more than once or otherwise")
    assert held.compares_types


def test_a_parameter_is_not_held() -> None:
    assert _verdicts("cls = type(p)\nreturn cls == X")["cls"] is not None


def test_a_module_that_rebinds_type_holds_no_call() -> None:
    header = HEADER + "type = lambda obj: obj\n"
    assert _verdicts("t = type(p)\nk = p.__class__\nreturn t == X or k == X", header) == {"k": None}


def test_a_star_import_may_bring_type() -> None:
    header = HEADER + "from pkg.helpers import *\n"
    assert _verdicts("t = type(p)\nk = p.__class__\nreturn t == X or k == X", header) == {"k": None}


def test_the_sides_a_caller_must_find_to_be_parameter_classes() -> None:
    """``classes``: names and attribute chains (no ``Parameter`` under any of its
    names, no builtin class, no other held name); ``compares_types``: a type or
    ``Parameter`` among the sides."""
    header = HEADER + "from torch.nn import Parameter as P\nParam = nn.Parameter\nimport pkg.params as params\n"
    tree = ast.parse(header + textwrap.dedent("""
        def f(p, q):
            t = type(p)
            k = type(q)
            return t in (X, params.Y, int, P, Param, torch.nn.Parameter, None) or t == k

        def g(p):
            t = type(p)
            return t == X
    """))
    found = held_types(tree)
    held = found["f"]["t"]
    assert held.why_not is None and held.compares_types
    assert [ast.unparse(side) for side in held.classes] == ["X", "params.Y"]
    assert found["g"]["t"].why_not is None and not found["g"]["t"].compares_types


def test_a_module_level_name_holding_a_type_is_no_class() -> None:
    header = HEADER + "PLAIN = type(torch.zeros(1))\n"
    assert _verdicts("t = type(p)\nreturn t == PLAIN", header)["t"] == "`t == PLAIN` at line 10"
    header = HEADER + "KIND = None\n\n\ndef reset(p):\n    global KIND\n    KIND = p\n"
    assert _verdicts("t = type(p)\nreturn t == KIND", header)["t"] is not None


def test_functions_are_keyed_by_their_path_and_shared_paths_dropped() -> None:
    tree = ast.parse(textwrap.dedent("""
        class C:
            def m(self, p):
                t = type(p)
                def inner(q):
                    k = q.__class__
                    return k == t
                return t == C

            @property
            def v(self):
                t = type(self)
                return t == C

            @v.setter
            def v(self, value):
                t = type(value)
                return t == C
    """))
    found = held_types(tree)
    assert sorted(found) == ["C.m", "C.m.inner"]
    # ``k`` is the inner function's: ``k == t`` compares ``t`` with a value that may be
    # a type, for ``t`` as for ``k`` (a name of the function around is not followed).
    assert found["C.m"]["t"].why_not == "`k == t` at line 7"
    assert found["C.m.inner"]["k"].why_not == "`k == t` at line 7"


def test_a_function_with_no_binding_still_shares_its_path() -> None:
    """Only the functions whose lines hold a binding to a type are read, but every
    function counts for a shared path: a getter with no binding drops its setter's names;
    a binding in a nested function does not make the outer one hold it."""
    tree = ast.parse(textwrap.dedent("""
        class C:
            @property
            def v(self):
                return 1

            @v.setter
            def v(self, value):
                t = type(value)
                return t == C

            def outer(self, p):
                x = 1
                def inner(q):
                    k = type(q)
                    return k == C
                return inner
    """))
    assert held_types(tree) == {"C.outer.inner": held_types(tree)["C.outer.inner"]}
    assert list(held_types(tree)["C.outer.inner"]) == ["k"]
    assert held_types(ast.parse("def f(p):\n    return p\n")) == {}


def _functions_reference(node, enclosing, names):
    """The walk over every node that ``held_types._functions`` replaced."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child, enclosing, ".".join((*names, child.name))
            yield from _functions_reference(child, (*enclosing, child), (*names, child.name))
        elif isinstance(child, ast.ClassDef):
            yield from _functions_reference(child, enclosing, (*names, child.name))
        elif isinstance(child, ast.Lambda):
            yield from _functions_reference(child, (*enclosing, child), (*names, "<lambda>"))
        else:
            yield from _functions_reference(child, enclosing, names)


FUNCTION_LAYOUTS = '''
def top(a=lambda: 1):
    def inner():
        async def deepest(): pass
    class Local:
        def method(self): pass
    return lambda x: x

@decorate(lambda f: f)
class A:
    if flag:
        def f(self): pass
    else:
        def f(self): pass
    try:
        def g(self): pass
    except ValueError:
        def h(self): pass
    else:
        def i(self): pass
    finally:
        def j(self): pass
    for x in y:
        def k(self): pass
    else:
        def k2(self): pass
    while c:
        def w(self): pass
    with m as n:
        def v(self): pass
    match q:
        case 1:
            def u(self): pass
        case _:
            def t(self): pass

async def outer():
    async for a in b:
        def loop(): pass
    async with c:
        def ctx(): pass
    try:
        pass
    except* OSError:
        def star(): pass
'''


def test_the_functions_are_those_of_a_walk_over_every_node_in_the_same_order() -> None:
    """``_functions`` enters only blocks of statements (a ``def`` stands nowhere else):
    the same functions, paths and enclosing functions, in the same order, as a walk over
    every node, in every kind of block."""
    from codemod.analysis import held_types as module

    tree = ast.parse(FUNCTION_LAYOUTS)
    expected = [(f, e, p) for f, e, p in _functions_reference(tree, (), ())]
    assert [(f, e, p) for f, e, p in module._functions(tree, (), ())] == expected
    assert [p for _, _, p in expected] == [
        "top", "top.inner", "top.inner.deepest", "top.Local.method", "A.f", "A.f", "A.g", "A.h",
        "A.i", "A.j", "A.k", "A.k2", "A.w", "A.v", "A.u", "A.t", "outer", "outer.loop", "outer.ctx",
        "outer.star"]
