"""The planner's decisions on relays: ``super().__init__`` passed other arguments.

A relay is converted when its super call can be followed statically: the classes after it
in the MRO are the same in every subclass, each positional argument fills a known
parameter, and what it reads of ``self`` there is present when its wrap runs. What stays
refused must say why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod import api
from codemod.planning.plan import Plan, build_plan
from codemod.types import Options, RefusalKind

HEAD = '''import torch
from torch.nn import Parameter


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader, scale=1):
        self._loader = loader
        self.scale = scale

    @property
    def loader(self):
        return self._loader


class Column(Base):
    def __init__(self, output_dim, **kwargs):
        self.output_dim = output_dim
        super().__init__(**kwargs)


class Row(Base):
    def __init__(self, input_dim, **kwargs):
        self.input_dim = input_dim
        super().__init__(**kwargs)


class Model(Column, Row):
    pass
'''


def _plan(tmp_path: Path, tail: str) -> Plan:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "params.py").write_text(HEAD + tail)
    result = api.read_tree([tmp_path], Options())
    return build_plan(api.analyse(result.sources, result))


def _by_name(plan: Plan, name: str):
    return next(p for p in plan.classes.values() if p.name == name)


def _refusal(plan: Plan, name: str) -> str:
    refusal = _by_name(plan, name).refusal
    assert refusal is not None, f"{name} was converted"
    return refusal.reason


def test_positional_and_literal_arguments_convert(tmp_path):
    plan = _plan(tmp_path, '''

class Packed(Model):
    def __init__(self, factor, dim, tile=None, **kwargs):
        self.factor = factor
        self.dim = dim
        self.tile = tile
        super().__init__(**kwargs)


class Nibble(Packed):
    def __init__(self, factor, dim, bits, **kwargs):
        super().__init__(factor, dim, None, **kwargs)
        self.bits = bits
''')
    assert not plan.refusals()
    nibble = _by_name(plan, "Nibble")
    assert nibble.relay is not None
    assert nibble.relay.arg_names == ("factor", "dim", "tile", None)
    assert [plan.classes[q].name for q in nibble.relay.chain] == [
        "Base", "Row", "Column", "Model", "Packed"]
    assert [plan.classes[q].name for q in nibble.wrap_chain] == ["Nibble"]
    # ``tile`` reaches Packed twice (the relay's None and the caller's): a TypeError.
    assert nibble.accepted_keywords == (
        "factor", "dim", "bits", "output_dim", "input_dim", "data", "loader", "scale")


def test_relay_in_a_diamond_position_is_refused(tmp_path):
    plan = _plan(tmp_path, '''

class Doubled(Base):
    def __init__(self, half, **kwargs):
        super().__init__(scale=half * 2, **kwargs)


class Both(Doubled, Row):
    pass
''')
    reason = _refusal(plan, "Doubled")
    assert "the classes it reaches depend on the subclass" in reason
    assert "after Doubled come Base in Doubled but Row, Base in Both" in reason


@pytest.mark.parametrize("init, expected", [
    ("def __init__(self, *dims, **kwargs):\n        super().__init__(*dims, **kwargs)",
     "positional-only or *args"),
    ("def __init__(self, dims, **kwargs):\n        super().__init__(*dims, **kwargs)",
     "super().__init__() is passed *dims, whose names are known only at run time"),
    ("def __init__(self, extra, **kwargs):\n        super().__init__(**extra, **kwargs)",
     "super().__init__() is passed **extra"),
    ("def __init__(self, d, **kwargs):\n        super().__init__(d, print, 2, 3, **kwargs)",
     "passes more positional arguments to Column.__init__ than it takes"),
    ("def __init__(self, **kwargs):\n        super().__init__(loader=self.loader, **kwargs)",
     "reads self.loader before or in its super().__init__() call"),
    ("def __init__(self, **kwargs):\n        super().__init__(unknown=1, **kwargs)",
     "passes 'unknown' to super().__init__(), which no __init__ after it takes"),
])
def test_relays_that_cannot_be_followed_stay_refused(tmp_path, init, expected):
    plan = _plan(tmp_path, f'''

class Odd(Model):
    {init}
''')
    assert expected in _refusal(plan, "Odd")


def test_relay_reading_a_subclass_constant_is_refused(tmp_path):
    plan = _plan(tmp_path, '''

class Scaled(Row):
    def __init__(self, **kwargs):
        super().__init__(scale=self.DEFAULT, **kwargs)


class Tenfold(Scaled):
    DEFAULT = 10
''')
    assert "reads self.DEFAULT" in _refusal(plan, "Scaled")


def test_root_relay_passing_to_torch_is_refused(tmp_path):
    plan = _plan(tmp_path, '''

class Alone(Parameter):
    def __init__(self, data):
        super().__init__(data)
''')
    assert "torch's own Parameter.__init__, which takes none" in _refusal(plan, "Alone")


def test_forwarder_keeping_a_name_its_relay_passes_is_refused(tmp_path):
    plan = _plan(tmp_path, '''

class Relay(Model):
    def __init__(self, **kwargs):
        super().__init__(scale=3, **kwargs)


class Keeper(Relay):
    def __init__(self, scale, **kwargs):
        self.mine = scale
        super().__init__(**kwargs)
''')
    assert "keeps 'scale' to itself" in _refusal(plan, "Keeper")
    relay = _by_name(plan, "Relay").refusal
    assert relay is None or relay.kind is RefusalKind.KEPT


def test_keyword_reaching_torch_init_is_rejected(tmp_path):
    """A ``**kwargs`` passed on to torch's own ``__init__`` rejected every keyword."""
    plan = _plan(tmp_path, '''

class Leaf(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data)

    def __init__(self, data, width, **kwargs):
        self.width = width
        super().__init__(**kwargs)
''')
    assert _by_name(plan, "Leaf").accepted_keywords == ("data", "width")


def test_keyword_only_relay_reading_self_data_converts_in_order(tmp_path):
    """The shape of a placeholder parameter: it sets its own table, then passes up what
    the chain has set so far (``self.data``); its wrap does the same, in that order."""
    from codemod.cli import main

    plan = _plan(tmp_path, '''

class Holder(Base):
    def __init__(self, data, *, loader):
        self.pieces: dict[str, object] = {}
        super().__init__(data=self.data, loader=loader)
        self.pieces["first"] = self.scale
''')
    assert _by_name(plan, "Holder").relay.arg_names == ("data", "loader")
    main(["apply", str(tmp_path)])
    text = (tmp_path / "pkg" / "params.py").read_text()
    wrap = text[text.index("def wrap_holder("):]
    wrap = wrap[:wrap.index("\n\n\n")]
    assert wrap.splitlines()[1:] == [
        "    param.pieces: dict[str, object] = {}",
        "    wrap_base(param, data=param.data, loader=loader)",
        '    param.pieces["first"] = param.scale',
    ]
    assert 'check_param_kwargs("Holder", kwargs, ("loader",))' in text


def test_statements_with_calls_before_the_super_call_keep_their_order(tmp_path):
    """A call before ``super().__init__()`` (a log, a counter) ran before the bases'
    bodies; the class becomes a relay, whose wrap runs it before the bases' wraps (before,
    every wrap ran whole in reverse MRO order: the base's body first). In a diamond
    position that is refused, saying why."""
    plan = _plan(tmp_path, '''

LOG = []


class Noisy(Base):
    def __init__(self, **kwargs):
        LOG.append("noisy")
        super().__init__(**kwargs)


class NoisyColumn(Base):
    def __init__(self, output_dim, **kwargs):
        LOG.append(output_dim)
        super().__init__(**kwargs)


class Both(NoisyColumn, Row):
    pass
''')
    assert _by_name(plan, "Noisy").refusal is None
    assert _by_name(plan, "Noisy").init.relays
    assert _by_name(plan, "Column").refusal is None and not _by_name(plan, "Column").init.relays
    reason = _refusal(plan, "NoisyColumn")
    assert "runs statements before super().__init__() that the bases' bodies must follow" in reason


def test_a_forwarded_parameter_rebound_before_the_call_is_a_relay(tmp_path):
    """``scale = scale * 2; super().__init__(scale=scale, **kwargs)`` passed the new value
    (before, the factory gave the base wrap the caller's value)."""
    plan = _plan(tmp_path, '''

class Twice(Base):
    def __init__(self, scale=1, **kwargs):
        scale = scale * 2
        super().__init__(scale=scale, **kwargs)
''')
    twice = _by_name(plan, "Twice")
    assert twice.refusal is None and twice.relay is not None


@pytest.mark.parametrize("line", [
    'kwargs["scale"] = 9', 'self.dim = kwargs.pop("dim", 0)', 'kwargs.setdefault("scale", 9)',
    'self.seen = sorted(kwargs)'])
def test_an_init_that_reads_its_kwargs_is_refused(tmp_path, line):
    """The keywords such an ``__init__`` takes are known only at run time (before,
    ``kwargs.pop("dim")`` made the factory's keyword check reject ``dim=``, and
    ``kwargs["scale"] = 9`` never reached the base)."""
    plan = _plan(tmp_path, f'''

class Reads(Base):
    def __init__(self, **kwargs):
        {line}
        super().__init__(**kwargs)
''')
    assert "uses **kwargs before passing it on to super().__init__()" in _refusal(plan, "Reads")


def test_an_init_that_keeps_or_reads_its_kwargs_after_the_call_is_refused(tmp_path):
    """Each wrap receives the caller's keywords, not what the old call left in
    ``**kwargs``: the factory's own parameter (``data``) is not among them, and keywords a
    subclass took are (``tests/robustness/test_adversarial_chains.py``: ``sorted(kwargs)``
    answered otherwise). Before 2026-12-04 (second session) these converted."""
    plan = _plan(tmp_path, '''

class Collects(Base):
    def __init__(self, data, loader, **extra):
        super().__init__(data, loader)
        self.extra = extra


class After(Base):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seen = sorted(kwargs)
''')
    for name in ("Collects", "After"):
        assert "reads **" in _refusal(plan, name) and "after super().__init__()" in _refusal(plan, name)


def test_a_relay_to_a_refused_base_says_why_the_base_stays(tmp_path):
    """A relay whose next ``__init__`` belongs to a refused class names that refusal
    (before: only "Pinned.__init__ cannot be followed")."""
    plan = _plan(tmp_path, '''

class Pinned(Base):
    def __init__(self, data, **kwargs):
        super().__init__(data, **kwargs)

    @property
    def data(self):
        return super().data


class Relaying(Pinned):
    def __init__(self, data, **kwargs):
        super().__init__(data, scale=2, **kwargs)
''')
    reason = _refusal(plan, "Relaying")
    assert reason.startswith("Pinned.__init__ cannot be followed: Pinned stays a class (overrides `data`"), reason
