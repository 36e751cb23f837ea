"""Class shapes and names the third adversarial review of 2026-12-06 converted wrongly.

Each case is a package of our own: a Parameter family and a ``probe.run()`` that reports
what a user could observe. Before the fixes, ``apply`` converted every one of these with
no refusal, ``check`` and ``verify_tree`` passed, and the probe answered otherwise (a
property replaced by a base's method or a subclass's constant, the first of two ``def``s
kept, a ``NameError`` for ``__class__``, two class definitions merged into one kind, a
factory whose parameter hid ``Features``, a helper import replaced by a local name, a
base ``__init__`` whose ``**kwargs`` now held a keyword a subclass took). Now
each refuses the class with its reason, or converts and answers the same.
"""

from __future__ import annotations

import pytest

from tests.robustness.test_issue12_adversarial import SHOW, same_behaviour

HEAD = "import torch\nfrom torch.nn import Parameter\n\n\n"
BASE = HEAD + '''class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

'''

#: params.py (after ``BASE``'s ``Base`` head), the probe's body, the refusal's words.
REFUSED = {
    "method_over_a_property": (
        "    def __init__(self, data, dim=0):\n        self._dim = dim\n\n"
        "    @property\n    def dim_of(self):\n        return self._dim\n\n\n"
        "class Meth(Base):\n    def dim_of(self):\n        return 'method'\n",
        "p = m.Meth(torch.zeros(2), dim=5)\n    return p.dim_of(), m.Base(torch.zeros(1), dim=3).dim_of",
        "property Base.dim_of is a method in Meth"),
    "constant_over_a_property": (
        "    def __init__(self, data, packed=0):\n        self._packed = packed\n\n"
        "    @property\n    def packed(self):\n        return self._packed\n\n\n"
        "class Fixed(Base):\n    packed = 1\n",
        "p = m.Fixed(torch.zeros(2), packed=5)\n    p._packed = 9\n    return p.packed, p._packed",
        "property Base.packed is a constant in Fixed"),
    "property_over_another_field": (
        "    def __init__(self, data, out=0):\n        self._out = out\n\n"
        "    @property\n    def out(self):\n        return self._out\n\n"
        "    def base_out(self):\n        return self._out\n\n\n"
        "class Other(Base):\n    def __init__(self, mine, **kwargs):\n"
        "        super().__init__(**kwargs)\n        self._mine = mine\n\n"
        "    @property\n    def out(self):\n        return self._mine\n",
        "p = m.Other(mine=7, data=torch.zeros(2), out=5)\n    return p.out, p.base_out(), p._out",
        "property Other.out is a property over another field in Base"),
    "diamond_method_and_property": (
        "    def __init__(self, data):\n        pass\n\n\n"
        "class Row(Base):\n    def mode(self):\n        return 'row'\n\n\n"
        "class Col(Base):\n    def __init__(self, *, mode='col', **kwargs):\n"
        "        super().__init__(**kwargs)\n        self._mode = mode\n\n"
        "    @property\n    def mode(self):\n        return self._mode\n\n\n"
        "class Both(Row, Col):\n    pass\n",
        "p = m.Both(data=torch.zeros(2))\n    return p.mode() if callable(p.mode) else p.mode",
        "property Col.mode is a method in Row"),
    "nullable_property_over_a_base_method": (
        "    def __init__(self, data):\n        pass\n\n"
        "    def loader(self, w):\n        return 'base'\n\n\n"
        "class Sub(Base):\n    def __init__(self, *, loader=None, **kwargs):\n"
        "        super().__init__(**kwargs)\n        self._loader = loader\n\n"
        "    @property\n    def loader(self):\n        if self._loader is None:\n"
        "            raise AttributeError('no loader')\n        return self._loader\n",
        "return hasattr(m.Sub(data=torch.zeros(2)), 'loader')",
        "property Sub.loader is a method in Base"),
    "base_init_reads_what_a_subclass_took": (
        "    def __init__(self, data, **kwargs):\n        self.extra = sorted(kwargs)\n\n\n"
        "class Sub(Base):\n    def __init__(self, dim, **kwargs):\n        self._dim = dim\n"
        "        super().__init__(**kwargs)\n",
        "return m.Sub(data=torch.zeros(2), dim=3, tag=1).extra",
        "never held 'dim': Sub.__init__ took it"),
    "attribute_set_over_a_base_property": (
        "    def __init__(self, data, dim=1):\n        self._dim = dim\n\n"
        "    @property\n    def dim(self):\n        return self._dim\n\n"
        "    @dim.setter\n    def dim(self, value):\n        self._dim = value\n\n\n"
        "class Early(Base):\n    def __init__(self, **kwargs):\n        self.dim = 5\n"
        "        super().__init__(**kwargs)\n",
        "return m.Early(data=torch.zeros(2)).dim",
        "property Base.dim is an attribute its __init__ sets in Early"),
    "init_parameter_named_param": (
        "    def __init__(self, data, loader=None):\n        self.loader = loader\n\n\n"
        "class Sub(Base):\n    def __init__(self, dim, param=None, **kwargs):\n"
        "        super().__init__(**kwargs)\n        self.dim, self.other = dim, param\n",
        "p = m.Sub(data=torch.zeros(2), dim=1, param=2)\n    return p.dim, p.other",
        "__init__() has a parameter named 'param'"),
    "two_defs_of_a_method": (
        "    def load(self):\n        return 'first'\n\n    def load(self):\n        return 'second'\n",
        "return m.Base(torch.zeros(2)).load()",
        "binds 'load' twice in its body"),
    "a_constant_then_a_method": (
        "    SCALE = 2\n\n    def SCALE(self):\n        return 'method'\n",
        "return m.Base(torch.zeros(2)).SCALE()",
        "binds 'SCALE' twice in its body"),
    "two_inits": (
        "    def __init__(self, data, dim=1):\n        self.dim = dim\n\n"
        "    def __init__(self, data, dim=1):\n        self.dim = dim + 100\n",
        "return m.Base(torch.zeros(2), dim=3).dim",
        "binds '__init__' twice in its body"),
    "class_cell": (
        "    def who(self):\n        return __class__.__name__\n\n\nclass Sub(Base):\n    pass\n",
        "return m.Sub(torch.zeros(2)).who(), m.Base(torch.zeros(1)).who()",
        "who() reads `__class__`, the class's own cell"),
    "parameter_named_features": (
        "    def __init__(self, data, Features=None):\n        self.flags = Features\n",
        "return m.Base(torch.zeros(2), Features='f').flags",
        "__init__() has a parameter named 'Features'"),
    "parameter_named_nn": (
        "    def __init__(self, data, nn=None):\n        self.net = nn\n",
        "return m.Base(torch.zeros(2), nn='n').net",
        "__init__() has a parameter named 'nn'"),
}

PROBE = "import torch\nfrom advpkg import params as m\n\n\ndef run():\n    {}\n"


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_shape_the_conversion_would_change_refuses_the_class(tmp_path, capsys, case):
    params, probe, reason = REFUSED[case]
    err = same_behaviour(tmp_path, {"params.py": BASE + params, "probe.py": PROBE.format(probe)}, capsys)
    assert reason in err, err


#: A module that defines a class twice: the earlier definition derives from ``Mid``.
TWICE = BASE + '''    def kind(self):
        return "base"


class Mid(Base):
    def kind(self):
        return "mid"


class Col(Mid):
    pass


class Packed(Base):
    pass


class Col(Base):
    pass
'''


def test_a_class_defined_twice_refuses_it_and_what_the_earlier_derives_from(tmp_path, capsys):
    probe = PROBE.format("first = m.Mid.__subclasses__()[0]\n    p = first(torch.zeros(2))\n"
                         "    return p.kind(), isinstance(p, m.Col), isinstance(m.Packed(torch.zeros(1)), m.Col)")
    err = same_behaviour(tmp_path, {"params.py": TWICE, "probe.py": probe}, capsys)
    assert "defines class Col twice (lines 18, 26)" in err, err
    assert "Mid: advpkg.params.Col, which advpkg.params defines twice" in err, err
    assert "def " not in (tmp_path / "after" / "advpkg" / "params.py").read_text().split("class Base")[0]


#: ``use.py`` binds a helper's name in a scope of its own: the helper is imported otherwise.
SHADOWING = {
    "locals": "def go(p):\n    Features = 'mine'\n    has_param_feature = lambda *a: 'mine'\n"
              "    return isinstance(p, Base), Features, has_param_feature()\n",
    "parameters": "def go(p, param_kind_is=None, has_param_feature=None):\n"
                  "    return isinstance(p, Base), type(p) is Base, param_kind_is, has_param_feature\n",
    "global_in_a_function": "def setup():\n    global Features\n    Features = 'mine'\n\n\nsetup()\n\n\n"
                            "def go(p):\n    return isinstance(p, Base), Features\n",
    "module_loop_target": "for has_param_feature in ['mine']:\n    pass\n\n\n"
                          "def go(p):\n    return isinstance(p, Base), has_param_feature\n",
}


@pytest.mark.parametrize("case", sorted(SHADOWING))
def test_a_helper_name_bound_in_any_scope_is_not_replaced(tmp_path, capsys, case):
    use = "import torch\nfrom advpkg.params import Base\n\n\n" + SHADOWING[case]
    probe = SHOW + "import torch\nfrom advpkg.params import Base\nfrom advpkg.use import go\n\n\n" \
        "def run():\n    return go(Base(torch.zeros(2)))\n"
    err = same_behaviour(tmp_path, {"params.py": BASE + "    pass\n", "use.py": use, "probe.py": probe},
                         capsys)
    assert "refused" not in err, err
    assert "def Base(" in (tmp_path / "after" / "advpkg" / "params.py").read_text()


def test_a_type_comparison_in_a_file_that_binds_param_type_is_rewritten(tmp_path, capsys):
    """A file that binds ``param_type`` itself (a local, as a ``replace_parameter`` helper
    names the kind it reads) was skipped whole by the type-comparison rewrite, silently:
    ``type(a) is type(b)`` then answered True for two converted parameters of different
    kinds. The helper is imported under another name instead."""
    params = BASE + "    pass\n\n\nclass Col(Base):\n    pass\n"
    use = ("import torch\nfrom advpkg.params import Base, Col\n\n\n"
           "def same_kind(a, b):\n    param_type = 'mine'\n    return type(a) is type(b), param_type\n")
    probe = ("import torch\nfrom advpkg.params import Base, Col\nfrom advpkg.use import same_kind\n\n\n"
             "def run():\n    t = torch.zeros(2)\n"
             "    return [same_kind(a, b) for a in (Base(t), Col(t)) for b in (Base(t), Col(t))]\n")
    err = same_behaviour(tmp_path, {"params.py": params, "use.py": use, "probe.py": probe}, capsys)
    assert "refused" not in err, err
    assert "param_type_params_features(a)" in (tmp_path / "after" / "advpkg" / "use.py").read_text()


#: Found by the review of the fixes: shapes the new rules refused that convert the same.
STILL_CONVERTED = {
    "base_reads_kwargs_by_literal_keys": (
        "    def __init__(self, data, **kwargs):\n        self._loader = kwargs.get('loader')\n\n\n"
        "class Sub(Base):\n    def __init__(self, dim, **kwargs):\n        super().__init__(**kwargs)\n"
        "        self.dim = dim\n",
        "p = m.Sub(data=torch.zeros(2), dim=3, loader='L')\n    return p.dim, p._loader"),
    "init_parameter_named_like_another_helper": (
        "    def __init__(self, data, param_type='int4'):\n        self.scheme = param_type\n",
        "return m.Base(torch.zeros(2), param_type='fp8').scheme"),
}


@pytest.mark.parametrize("case", sorted(STILL_CONVERTED))
def test_a_shape_the_new_rules_leave_alone_still_converts(tmp_path, capsys, case):
    params, probe = STILL_CONVERTED[case]
    err = same_behaviour(tmp_path, {"params.py": BASE + params, "probe.py": PROBE.format(probe)}, capsys)
    assert "refused" not in err, err
    assert "def Base(" in (tmp_path / "after" / "advpkg" / "params.py").read_text()


def test_a_helper_name_bound_by_a_mapping_pattern_is_not_replaced(tmp_path, capsys):
    """``case {**Features}`` binds ``Features`` (``MatchMapping.rest``, no ``MatchAs``)."""
    use = ("import torch\nfrom advpkg.params import Base\n\n\ndef go(p, d):\n    match d:\n"
           "        case {**Features}:\n            return isinstance(p, Base), sorted(Features)\n")
    probe = ("import torch\nfrom advpkg.params import Base\nfrom advpkg.use import go\n\n\n"
             "def run():\n    return go(Base(torch.zeros(2)), {'a': 1})\n")
    err = same_behaviour(tmp_path, {"params.py": BASE + "    pass\n", "use.py": use, "probe.py": probe},
                         capsys)
    assert "refused" not in err, err


def test_a_star_import_from_outside_the_tree_does_not_replace_the_helpers(tmp_path, capsys):
    """``from extlib import *`` of a module outside the tree, which binds ``Features`` and
    ``has_param_feature`` of its own, came after the helper import the rewrite added: the
    rewritten ``isinstance`` read extlib's. Such a file imports the helpers under other
    names."""
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "extlib.py").write_text("class Features:\n    FAST = 1\n\n\n"
                                   "def has_param_feature(*args):\n    return 'extlib'\n")
    use = ("import torch\nfrom advpkg.params import Base\nfrom extlib import *\n\n\n"
           "def go(p):\n    return isinstance(p, Base), Features.FAST, has_param_feature()\n")
    probe = (f"import sys\nsys.path.insert(0, {str(ext)!r})\n"
             "import torch\nfrom advpkg.params import Base\nfrom advpkg.use import go\n\n\n"
             "def run():\n    return go(Base(torch.zeros(2)))\n")
    sys_path = __import__("sys").path
    try:
        err = same_behaviour(tmp_path, {"params.py": BASE + "    pass\n", "use.py": use, "probe.py": probe},
                             capsys)
    finally:
        while str(ext) in sys_path:
            sys_path.remove(str(ext))
        __import__("sys").modules.pop("extlib", None)
    assert "refused" not in err, err
    assert "def Base(" in (tmp_path / "after" / "advpkg" / "params.py").read_text()
