"""Constructor chains an adversarial review (2026-12-04, second session) found converted
with a different outcome: the factory ran the bases' wraps before statements the old
``__init__`` ran first, dropped a subclass's default passed on by name, or let a wrap read
``**kwargs`` that held other keywords than the old call left in it. Each case is a package
of our own; the probe must answer the same before and after ``apply`` (converted faithfully)
or the class is refused with the reason given.
"""

from __future__ import annotations

import pytest

from .test_issue12_adversarial import same_behaviour

torch = pytest.importorskip("torch")

#: A subclass's own default passed on by name (``scale=0.5``, then
#: ``super().__init__(scale=scale)``) reached the base only when the caller gave it: the
#: base's default won, or a required base parameter was missing.
SUBCLASS_DEFAULT_PASSED_ON_BY_NAME = {
    'params.py': '''
import torch
from torch.nn import Parameter


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader=None, scale=1):
        self.loader = loader
        self.scale = scale


class Half(Base):
    def __init__(self, scale=0.5, **kwargs):
        super().__init__(scale=scale, **kwargs)


class Loaded(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, weight_loader):
        self.weight_loader = weight_loader


class OptionalLoader(Loaded):
    def __init__(self, weight_loader=None, **kwargs):
        super().__init__(weight_loader=weight_loader, **kwargs)
''',
    'probe.py': '''
import torch
from advpkg import params as m


def run():
    out = [m.Half(data=torch.zeros(2)).scale, m.Half(data=torch.zeros(2), scale=4).scale]
    try:
        out.append(m.OptionalLoader(data=torch.zeros(2)).weight_loader)
    except TypeError as exc:
        out.append(("TypeError", str(exc)))
    return out
''',
}


#: ``**kwargs`` read after the super call held the keywords the factory passed every
#: wrap, not what the old call left in it.
KWARGS_READ_AFTER_SUPER = {
    'params.py': '''
import torch
from torch.nn import Parameter


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader=None):
        self.loader = loader


class Col(Base):
    def __init__(self, output_dim, **kwargs):
        super().__init__(**kwargs)
        self.output_dim = output_dim
        self.passed_on = sorted(kwargs)


class Packed(Col):
    def __init__(self, packed_dim, **kwargs):
        super().__init__(**kwargs)
        self.packed_dim = packed_dim


class Filled(Parameter):
    def __new__(cls, *, weight_loader, fill=0.0):
        return super().__new__(cls, torch.full((2,), fill), requires_grad=False)

    def __init__(self, *, weight_loader, **kwargs):
        self.weight_loader = weight_loader
        self.options = dict(kwargs)
''',
    'probe.py': '''
import torch
from advpkg import params as m


def run():
    c = m.Col(data=torch.zeros(2), output_dim=0, loader=1)
    p = m.Packed(data=torch.zeros(2), output_dim=0, packed_dim=1, loader=1)
    f = m.Filled(weight_loader=None, fill=2.0)
    return c.passed_on, p.passed_on, f.options
''',
}


#: An early ``return`` skipped the bases' ``__init__``; the factory ran their wraps
#: first.
RETURN_BEFORE_SUPER = {
    'params.py': '''
import torch
from torch.nn import Parameter

LOG = []


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader=None):
        LOG.append("base")
        self.loader = loader


class Lazy(Base):
    def __init__(self, skip, **kwargs):
        if skip:
            return
        super().__init__(**kwargs)
        self.ready = True
''',
    'probe.py': '''
import torch
from advpkg import params as m


def run():
    out = []
    for skip in (True, False):
        m.LOG.clear()
        p = m.Lazy(data=torch.zeros(2), skip=skip, loader=1)
        out.append((skip, list(m.LOG), getattr(p, "loader", "missing"), getattr(p, "ready", "missing")))
    return out
''',
}


#: A relay returning before its call lost its class constants and static methods.
RELAY_RETURNS_BEFORE_ITS_CALL = {
    'params.py': '''
import torch
from torch.nn import Parameter


class Base(Parameter):
    KIND = "base"

    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader=None, scale=1):
        self.loader = loader
        self.scale = scale


class Early(Base):
    TAG = "early"

    @staticmethod
    def convert(x):
        return x + 1

    def __init__(self, data, loader, flag):
        if flag:
            return
        super().__init__(data, loader, 7)
''',
    'probe.py': '''
import torch
from advpkg import params as m


def run():
    out = []
    for flag in (True, False):
        p = m.Early(torch.zeros(2), loader=1, flag=flag)
        try:
            conv = p.convert(1)
        except AttributeError as e:
            conv = "AttributeError"
        out.append((flag, getattr(p, "TAG", "missing"), getattr(p, "KIND", "missing"), conv))
    return out
''',
}


#: A store into a module's dict or object, or a ``global``, before the super call: the
#: bases' bodies read the old state.
STATE_CHANGED_BEFORE_SUPER = {
    'params.py': '''
import torch
from torch.nn import Parameter

import types

STATE = {"built": 0}
CFG = types.SimpleNamespace(mode="none")
LAST = None


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader=None):
        self.index = STATE["built"]
        self.mode = CFG.mode
        self.last = LAST
        self.loader = loader


class Counted(Base):
    def __init__(self, **kwargs):
        STATE["built"] += 1
        super().__init__(**kwargs)


class Moded(Base):
    def __init__(self, **kwargs):
        CFG.mode = "moded"
        super().__init__(**kwargs)


class Global(Base):
    def __init__(self, **kwargs):
        global LAST
        LAST = "global"
        super().__init__(**kwargs)
''',
    'probe.py': '''
import torch
from advpkg import params as m


def run():
    z = torch.zeros(2)
    return ([m.Counted(data=z).index for _ in range(3)], m.Moded(data=z).mode,
            m.Global(data=z).last)
''',
}


#: An ``assert`` or a division before the super call raised after the bases' bodies had
#: run (and a missing argument raised another exception).
STATEMENT_BEFORE_SUPER_RAISES = {
    'params.py': '''
import torch
from torch.nn import Parameter

LOG = []


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader):
        LOG.append("base")
        self.loader = loader


class Checked(Base):
    def __init__(self, dim, **kwargs):
        assert dim >= 0, "dim must be >= 0"
        super().__init__(**kwargs)
        self.dim = dim


class Inverse(Base):
    def __init__(self, dim, **kwargs):
        self.inv = 1 / dim
        super().__init__(**kwargs)
''',
    'probe.py': '''
import torch
from advpkg import params as m


def attempt(build):
    m.LOG.clear()
    try:
        build()
        return ("ok", list(m.LOG))
    except Exception as exc:
        return (type(exc).__name__, list(m.LOG))


def run():
    z = torch.zeros(2)
    return [
        attempt(lambda: m.Checked(data=z, loader=1, dim=-1)),   # bad dim
        attempt(lambda: m.Checked(data=z, dim=-1)),             # bad dim and no loader
        attempt(lambda: m.Inverse(data=z, loader=1, dim=0)),
        attempt(lambda: m.Checked(data=z, loader=1)),           # dim missing
    ]
''',
}


#: A base setting attributes by computed names (``setattr(self, name, v)``,
#: ``self.__dict__.update(extra)``) while a subclass defines a class constant of that name:
#: the subclass's wrap stored the constant after the base's body, over the instance's value.
COMPUTED_NAMES_OVER_A_CONSTANT = {
    'params.py': '''
import torch
from torch.nn import Parameter


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, extra=None):
        for name, value in (extra or {}).items():
            setattr(self, name, value)


class Quant(Base):
    bits = 8


class Base2(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, extra=None):
        self.__dict__.update(extra or {})


class Quant2(Base2):
    bits = 8
''',
    'probe.py': '''
import torch
from advpkg import params as m


def run():
    z = torch.zeros(2)
    return (m.Quant(data=z).bits, m.Quant(data=z, extra={"bits": 4}).bits,
            m.Quant2(data=z, extra={"bits": 4}).bits)
''',
}


#: An attribute a subclass sets before ``super().__init__()`` that the base's body hands to
#: a helper with ``self`` (``describe(self)``): the factory ran the base's wrap first.
SET_BEFORE_A_BASE_HANDS_SELF_ON = {
    'params.py': '''
import torch
from torch.nn import Parameter


def describe(p):
    return getattr(p, "tag", "untagged")


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader=None):
        self.loader = loader
        self.desc = describe(self)


class Tagged(Base):
    def __init__(self, **kwargs):
        self.tag = "tagged"
        super().__init__(**kwargs)
''',
    'probe.py': '''
import torch
from advpkg import params as m


def run():
    return m.Tagged(data=torch.zeros(2)).desc
''',
}


#: The same default passed on by name, through ``ModelWeight(Col, Row)``: the bases get the
#: same value either way, so the class is no relay (a relay in a diamond is refused).
SAME_DEFAULT_IN_A_DIAMOND = {
    'params.py': """
import torch
from torch.nn import Parameter


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, weight_loader=None):
        self.weight_loader = weight_loader


class Col(Base):
    def __init__(self, output_dim, weight_loader=None, **kwargs):
        super().__init__(weight_loader=weight_loader, **kwargs)
        self.output_dim = output_dim


class Row(Base):
    def __init__(self, input_dim, **kwargs):
        super().__init__(**kwargs)
        self.input_dim = input_dim


class ModelWeight(Col, Row):
    pass
""",
    'probe.py': """
import torch
from advpkg import params as m


def run():
    z = torch.zeros(2)
    w = m.ModelWeight(data=z, output_dim=0, input_dim=1)
    v = m.ModelWeight(data=z, output_dim=0, input_dim=1, weight_loader=print)
    return (w.weight_loader, w.output_dim, w.input_dim, v.weight_loader is print,
            isinstance(w, m.Row), m.Col(data=z, output_dim=2).weight_loader)
""",
}


@pytest.mark.parametrize(("files", "refused"), [
    pytest.param(SUBCLASS_DEFAULT_PASSED_ON_BY_NAME, "and passes it on by name", id="subclass-default-passed-on-by-name"),
    pytest.param(KWARGS_READ_AFTER_SUPER, "reads **kwargs after super().__init__()", id='kwargs-read-after-super'),
    pytest.param(RETURN_BEFORE_SUPER, 'may return before super().__init__()', id='return-before-super'),
    pytest.param(RELAY_RETURNS_BEFORE_ITS_CALL, 'may return before super().__init__()', id='relay-returns-before-its-call'),
    pytest.param(STATE_CHANGED_BEFORE_SUPER, None, id='state-changed-before-super'),
    pytest.param(STATEMENT_BEFORE_SUPER_RAISES, None, id='statement-before-super-raises'),
    pytest.param(COMPUTED_NAMES_OVER_A_CONSTANT, "reads or sets attributes by computed names",
                 id='computed-names-over-a-constant'),
    pytest.param(SET_BEFORE_A_BASE_HANDS_SELF_ON, "before super().__init__() in a way the base order would change",
                 id='set-before-a-base-hands-self-on'),
    pytest.param(SAME_DEFAULT_IN_A_DIAMOND, None, id='same-default-in-a-diamond'),
])
def test_a_constructor_chain_converts_alike_or_is_refused(tmp_path, capsys, files, refused):
    err = same_behaviour(tmp_path, files, capsys)
    if refused is None:
        assert "refused" not in err, err
    else:
        assert refused in err, err
