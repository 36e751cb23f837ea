"""``cst_patterns`` answers as ``libcst.matchers`` for every form the analysis and planning
use: the same nodes, in the same order, on the fixture engine's modules."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import libcst.matchers as lm
import pytest

from codemod.analysis import cst_patterns as m

ENGINE = Path(__file__).resolve().parents[2] / "fixtures" / "engine" / "minivllm"

#: Every form in each of ``PAIRS``, at least once (and the fixture engine's parameters).
SAMPLE = '''
class P(Parameter):
    def __new__(cls, data=None, *, scale=-1.5, flag=True, tag="t", n=-2):
        self = torch.Tensor._make_subclass(cls, data, False)
        return super().__new__(cls, data, **{})

    def __init__(self, data, **kwargs):
        if kwargs is None:
            kwargs = {}
        if self._x is None:
            raise AttributeError("x")
        super().__init__(data=data, **kwargs)
        self._x = data
        type(self)
        pass

    @property
    def x(self):
        return self._x

    @x.deleter
    def x(self):
        del self._x

    def gen(self):
        yield self.data
'''

#: One maker per form that init_shapes, pre_statements, new_chain and model use; each is
#: called with our module and with LibCST's.
PAIRS = [
    (lambda p: p.Attribute(value=p.Name("self"))),
    (lambda p: p.Attribute(value=p.Name("self"), attr=p.Name("data"))),
    (lambda p: p.Call(func=p.Attribute(value=p.Call(func=p.Name("super"), args=[])))),
    (lambda p: p.Call(func=p.Attribute(value=p.Call(func=p.Name("super"), args=[]),
                                       attr=p.Name("__init__")))),
    (lambda p: p.SimpleStatementLine(body=[p.Expr(value=p.Call())])),
    (lambda p: p.SimpleStatementLine(body=[p.Pass()])),
    (lambda p: p.SimpleStatementLine(body=[p.Return(value=p.Attribute(value=p.Name("self")))])),
    (lambda p: p.SimpleStatementLine(body=[p.Assign(targets=[p.AssignTarget(p.Attribute(
        value=p.Name("self")))], value=p.Name())])),
    (lambda p: p.Call(args=[p.Arg(value=p.Name(), keyword=None, star=""), p.ZeroOrMore()])),
    (lambda p: p.Call(func=p.Name("type"), args=[p.Arg(p.Name("self"))])),
    (lambda p: p.Call(args=[])),
    (lambda p: p.Return() | p.Yield()),
    (lambda p: p.SimpleString() | p.Integer() | p.Float() | p.Name("None") | p.Name("True")
     | p.UnaryOperation(expression=p.Integer() | p.Float())),
    (lambda p: p.If(test=p.Comparison(left=p.Name(), comparisons=[
        p.ComparisonTarget(operator=p.Is(), comparator=p.Name("None"))]), orelse=None)),
    (lambda p: p.IndentedBlock(body=[p.SimpleStatementLine(body=[p.Raise(exc=p.Call())])])),
    (lambda p: p.Dict(elements=[])),
    (lambda p: p.Del(target=p.Attribute())),
]


def _trees() -> list[cst.Module]:
    return [cst.parse_module(SAMPLE),
            cst.parse_module((ENGINE / "model_executor" / "parameter.py").read_text())]


@pytest.mark.parametrize("make", PAIRS)
def test_findall_gives_libcsts_nodes_in_its_order(make):
    total = 0
    for tree in _trees():
        ours, theirs = m.findall(tree, make(m)), lm.findall(tree, make(lm))
        assert [id(n) for n in ours] == [id(n) for n in theirs]
        total += len(ours)
    assert total, "the form never occurs: the comparison proves nothing"


def test_matches_agrees_node_by_node():
    nodes = [n for tree in _trees() for n in lm.findall(tree, lm.DoNotCare())]
    for make in PAIRS:
        ours, theirs = make(m), make(lm)
        assert [m.matches(n, ours) for n in nodes] == [lm.matches(n, theirs) for n in nodes]


def test_a_list_matches_a_sequence_of_the_same_length_unless_it_ends_in_zero_or_more():
    call = cst.parse_expression("f(a, b)")
    assert not m.matches(call, m.Call(args=[m.Arg()]))
    assert m.matches(call, m.Call(args=[m.Arg(), m.Arg()]))
    assert m.matches(call, m.Call(args=[m.Arg(m.Name("a")), m.ZeroOrMore()]))
    assert not m.matches(call, m.Call(args=[m.Arg(m.Name("b")), m.ZeroOrMore()]))
    assert not m.matches(cst.parse_expression("f()"), m.Call(args=[m.Arg(), m.ZeroOrMore()]))


def test_a_pattern_takes_one_positional_field_at_most():
    with pytest.raises(TypeError):
        m.Name("a", "b")
    with pytest.raises(TypeError):
        m.Name("a", value="b")
