"""Adversarial inputs for what "convert whole families by default" added.

Each case is a tiny package of our own: a Parameter family and a ``probe.run()`` that
builds parameters and reports what a user could observe (attributes, kinds, exceptions,
the order of side effects). The package is converted with ``codemod apply`` and the probe
must report the same before and after; or the tool must refuse, with a reason that says
what it refused. Cases the tool gets wrong are strict expected failures that pin the
defect.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from codemod.cli import main  # noqa: E402
from scripts.verify_tree import verify  # noqa: E402

PACKAGE = "advpkg"

#: Shared by every probe: what a built parameter shows a user.
SHOW = '''
def show(build):
    """Attributes (no callables, no private names), or the exception's type."""
    try:
        p = build()
    except Exception as exc:  # noqa: BLE001
        return ("raised", type(exc).__name__)
    return sorted((k, repr(v)) for k, v in vars(p).items()
                  if not callable(v) and not k.startswith("_"))
'''


def _write(root: Path, files: dict[str, str]) -> None:
    package = root / PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text))


def _purge() -> None:
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def _probe(root: Path) -> object:
    """Import ``advpkg.probe`` from ``root`` and return ``run()``."""
    _purge()
    sys.path.insert(0, str(root))
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        importlib.invalidate_caches()
        return importlib.import_module(f"{PACKAGE}.probe").run()
    finally:
        sys.dont_write_bytecode = saved
        sys.path.remove(str(root))
        _purge()


def convert(tmp_path: Path, files: dict[str, str], capsys) -> tuple[Path, Path, str]:
    """Write the package twice, convert the second copy; (before, after, apply's stderr)."""
    before, after = tmp_path / "before", tmp_path / "after"
    _write(before, files)
    shutil.copytree(before, after)
    capsys.readouterr()
    code = main(["apply", str(after)])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    return before, after, err


def same_behaviour(tmp_path: Path, files: dict[str, str], capsys) -> str:
    """Convert, check the verifier and that the probe answers alike; apply's stderr."""
    before, after, err = convert(tmp_path, files, capsys)
    report = verify(before, after)
    assert report.ok, report
    assert _probe(after) == _probe(before)
    return err


# -- relays -------------------------------------------------------------------------------

RELAY_ORDER = '''
import torch
from torch.nn import Parameter

LOG = []


def log(tag, value):
    LOG.append(tag)
    return value


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader, a=1, b=2):
        LOG.append(("base", a, b))
        self.loader = loader
        self.a = a
        self.b = b


class Mid(Base):
    def __init__(self, c, **kwargs):
        super().__init__(**kwargs)
        LOG.append(("mid", c))
        self.c = c


class Relay(Mid):
    def __init__(self, x, y=10, **kwargs):
        LOG.append("relay-pre")
        super().__init__(log("c", x + y), b=log("b", y), a=log("a", x), **kwargs)
        LOG.append(("relay-post", self.a, self.b, self.c))


class Leaf(Relay):
    def __init__(self, z, **kwargs):
        self.z = z
        super().__init__(**kwargs)
'''

RELAY_ORDER_PROBE = SHOW + '''
import torch
from advpkg import params as m


def run():
    out = []
    z = torch.zeros(2)
    for build in (
        lambda: m.Relay(x=3, data=z, loader=None),
        lambda: m.Relay(x=3, y=5, data=z, loader=None),
        lambda: m.Leaf(z=7, x=3, data=z, loader=None),
    ):
        m.LOG.clear()
        p_shown = show(build)
        out.append((p_shown, list(m.LOG)))
        p = build()
        out.append([isinstance(p, m.Base), isinstance(p, m.Mid), isinstance(p, m.Relay),
                    isinstance(p, m.Leaf), type(p) is m.Relay])
    for build in (  # wrong calls: the same exception
        lambda: m.Leaf(z=7, x=3, data=z, loader=None, a=4),
        lambda: m.Leaf(z=7, x=3, data=z, loader=None, c=4),
        lambda: m.Relay(x=3, data=z),
        lambda: m.Relay(data=z, loader=1),
        lambda: m.Relay(x=3, data=z, loader=1, bogus=2),
    ):
        out.append(show(build))
    return out
'''


def test_relay_arguments_evaluated_once_in_order(tmp_path, capsys):
    """Positional, keyword and side-effecting arguments of a relay reach the next wraps,
    evaluated once, in the order written, before the base's statements."""
    err = same_behaviour(tmp_path, {"params.py": RELAY_ORDER, "probe.py": RELAY_ORDER_PROBE},
                         capsys)
    assert "refused" not in err


RELAY_MULTIPLE_INHERITANCE = '''
import torch
from torch.nn import Parameter

LOG = []


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader):
        LOG.append("base")
        self.loader = loader


class Col(Base):
    def __init__(self, output_dim, **kwargs):
        super().__init__(**kwargs)
        LOG.append(("col", output_dim))
        self.output_dim = output_dim


class Row(Base):
    def __init__(self, *, input_dim, scale=1.0, **kwargs):
        super().__init__(**kwargs)
        LOG.append(("row", input_dim, scale))
        self.input_dim = input_dim
        self.scale = scale


class Weight(Col, Row):
    pass


class Fixed(Col, Row):
    def __init__(self, flip=False, **kwargs):
        LOG.append("fixed-pre")
        super().__init__(int(flip), input_dim=1 - int(flip), **kwargs)
        LOG.append(("fixed-post", self.output_dim, self.input_dim, self.scale))


class Scaled(Fixed):
    def __init__(self, factor, **kwargs):
        super().__init__(flip=factor > 1, scale=float(factor), **kwargs)
        self.factor = factor
'''

RELAY_MULTIPLE_INHERITANCE_PROBE = SHOW + '''
import torch
from advpkg import params as m


def run():
    out = []
    z = torch.zeros(2)
    for build in (
        lambda: m.Weight(data=z, loader=1, output_dim=0, input_dim=1),
        lambda: m.Fixed(data=z, loader=1),
        lambda: m.Fixed(data=z, loader=1, flip=True, scale=3.0),
        lambda: m.Scaled(data=z, loader=1, factor=2),
        lambda: m.Scaled(data=z, loader=1, factor=2, scale=5),
        lambda: m.Scaled(data=z, loader=1, factor=2, flip=5),
        lambda: m.Fixed(data=z, loader=1, output_dim=3),
    ):
        m.LOG.clear()
        shown = show(build)
        out.append((shown, list(m.LOG) if shown[0] != "raised" else None))
    p = m.Scaled(data=z, loader=1, factor=2)
    out.append([isinstance(p, m.Col), isinstance(p, m.Row), isinstance(p, m.Weight),
                isinstance(p, m.Fixed), isinstance(p, m.Scaled)])
    return out
'''


def test_relay_under_cooperative_multiple_inheritance(tmp_path, capsys):
    """A relay over ``Fixed(Col, Row)`` with a keyword-only parameter and a default in
    ``Row``, and a relay over that relay: the same attributes and statement order."""
    err = same_behaviour(tmp_path, {"params.py": RELAY_MULTIPLE_INHERITANCE,
                                    "probe.py": RELAY_MULTIPLE_INHERITANCE_PROBE}, capsys)
    assert "refused" not in err


@pytest.mark.xfail(strict=True, reason=(
    "a wrong call to a converted relay raises before the relay's statements run; the old "
    "class ran the statements before its super().__init__() and then raised TypeError"))
def test_relay_wrong_call_runs_statements_before_raising(tmp_path, capsys):
    """``Fixed(output_dim=3)`` raised ``TypeError`` after ``Fixed`` logged ``fixed-pre``."""
    probe = SHOW + '''
import torch
from advpkg import params as m


def run():
    m.LOG.clear()
    return show(lambda: m.Fixed(data=torch.zeros(2), loader=1, output_dim=3)), list(m.LOG)
'''
    same_behaviour(tmp_path, {"params.py": RELAY_MULTIPLE_INHERITANCE, "probe.py": probe},
                   capsys)


RELAY_KEYWORD_AFTER_SPREAD = '''
import torch
from torch.nn import Parameter


class B(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader, dim=0, **extra):
        self.loader = loader
        self.dim = dim
        self.extra = extra


class BRelay(B):
    def __init__(self, data, **kwargs):
        super().__init__(data, **kwargs, dim=kwargs.pop("d", 9))


class BPlain(B):
    def __init__(self, data, **kwargs):
        super().__init__(data, **kwargs, dim=3)
'''

RELAY_KEYWORD_AFTER_SPREAD_PROBE = SHOW + '''
import torch
from advpkg import params as m


def run():
    z = torch.zeros(2)
    return [show(lambda: m.BRelay(data=z, loader=7, d=3)), show(lambda: m.BPlain(data=z, loader=7)),
            show(lambda: m.BPlain(data=z, loader=7, q=1))]
'''


def test_relay_keyword_computed_after_the_spread_is_refused(tmp_path, capsys):
    """``super().__init__(**kwargs, dim=kwargs.pop("d"))`` spread ``d`` into the call and
    then popped it: the wraps spread ``**kwargs`` last, so the relay is refused; a literal
    after the spread is still converted (``B`` is kept as its shadow)."""
    err = same_behaviour(tmp_path, {"params.py": RELAY_KEYWORD_AFTER_SPREAD,
                                    "probe.py": RELAY_KEYWORD_AFTER_SPREAD_PROBE}, capsys)
    assert "BRelay.__init__ passes 'dim' after **kwargs" in err
    converted = (tmp_path / "after" / PACKAGE / "params.py").read_text()
    assert "def BPlain(" in converted and "class BRelay(" in converted
