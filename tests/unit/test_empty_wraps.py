"""A class whose wrap would do nothing gets no wrap and no call to it (inline table).

``def wrap_x(param, **kwargs): pass`` takes any keyword and changes nothing, so a
maintainer would not write it: a converted class with no ``__init__`` of its own (or one
that only passes everything on to ``super().__init__``) keeps its factory, its kind
registration and its place in its subclasses' kinds, but no wrap. A wrap that can raise
(a parameter without default), carries a docstring, stores constants or is a relay's stays.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

BASE = '''
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data, requires_grad=False)

        def __init__(self, data, loader):
            self.loader = loader
'''


def _convert(tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> dict[str, str]:
    """Apply the codemod to a package made of ``files``; the converted texts."""
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    capsys.readouterr()
    main(["apply", str(tmp_path / "pkg")])
    err = capsys.readouterr().err
    assert "refused" not in err, err
    return {rel: (tmp_path / rel).read_text() for rel in files}


#: (subclass body, whether its wrap is written)
CASES = [
    ("pass", False),
    ('"""Only a docstring."""', False),
    ("def __init__(self, **kwargs):\n    super().__init__(**kwargs)", False),
    ("def __init__(self, **kw):\n    pass\n    super().__init__(**kw)", False),
    ("def load(self, w):\n    self.data.copy_(w)", False),
    # It does something, or may raise, or says something: it stays.
    ("def __init__(self, width, **kwargs):\n    super().__init__(**kwargs)", True),
    ('def __init__(self, **kwargs):\n    """Doc."""\n    super().__init__(**kwargs)', True),
    ("def __init__(self, **kwargs):\n    super().__init__(**kwargs)\n    self.k = 1", True),
    ("SCALE = 2", True),
    ("@staticmethod\ndef helper(x):\n    return x", True),
]


@pytest.mark.parametrize(("body", "written"), CASES)
def test_a_wrap_that_would_do_nothing_is_not_written(tmp_path, capsys, body: str, written: bool) -> None:
    sub = BASE + "\n\n    class Sub(Base):\n" + textwrap.indent(body, " " * 8) + "\n"
    params = _convert(tmp_path, capsys, {"pkg/params.py": sub})["pkg/params.py"]
    assert ("def wrap_sub(" in params) is written, params
    assert ("wrap_sub(param" in params.split("def Sub(")[1].split("\n\n")[0]) is written, params
    if not written:
        assert "    pass\n\n" not in params.split("def Sub(")[1].split("register_param_kind")[0]
    # Its kind is still registered, with its base's kind.
    assert "register_param_kind(Features.Sub, bases=(Features.Base,)" in params
    # Its subclass' factory calls the wraps that are written, base first.
    compile(params, "params.py", "exec")


PLUGIN = '''
    from pkg.params import Base


    class Middle(Base):
        pass


    class Leaf(Middle):
        def __init__(self, scale, **kwargs):
            super().__init__(**kwargs)
            self.scale = scale
'''


def test_a_subclass_in_another_module_imports_no_dropped_wrap(tmp_path, capsys) -> None:
    out = _convert(tmp_path, capsys, {"pkg/params.py": BASE, "pkg/plugin.py": PLUGIN})
    plugin = out["pkg/plugin.py"]
    assert "wrap_middle" not in plugin
    leaf = plugin.split("def Leaf(")[1].split("\n\n")[0]
    assert "    wrap_base(param, data=data, **kwargs)\n    wrap_leaf(param, **kwargs)\n" in leaf
    assert "from pkg.params import wrap_base" in plugin or "    wrap_base,\n" in plugin


RELAYED = BASE + '''

    class Middle(Base):
        pass


    class Relay(Middle):
        def __init__(self, scale, **kwargs):
            super().__init__(loader=make_loader(scale), **kwargs)
            self.scale = scale


    def make_loader(scale):
        return scale
'''


def test_a_wrap_a_relay_calls_is_kept(tmp_path, capsys) -> None:
    """A relay's wrap calls the wraps after it with what it passed; an argument no wrap
    takes is still given to the last one, so that one stays, even when it does nothing."""
    params = _convert(tmp_path, capsys, {"pkg/params.py": RELAYED})["pkg/params.py"]
    assert "def wrap_middle(param, **kwargs):\n    pass\n" in params
    assert "    wrap_middle(param, **kwargs)\n" in params.split("def wrap_relay(")[1]
    compile(params, "params.py", "exec")
