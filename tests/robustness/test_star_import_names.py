"""Names the rewrites add to a module reach every module that star-imports it.

A module without ``__all__`` gives ``from m import *`` every public name it binds: the
helpers a rewrite imports into it (``Features``, ``has_param_feature``) and the functions
it generates (``wrap_col``) land in its star-importers, where they would replace a name
of the same spelling. Each case is a tiny package (``test_issue12_adversarial``'s
harness) whose probe must answer the same before and after ``apply``, and the
independent verifier must pass.
"""

from __future__ import annotations

import pytest

from .test_adversarial_review import BASE
from .test_issue12_adversarial import convert, same_behaviour

torch = pytest.importorskip("torch")

API = "from advpkg.params import Col\n\n\ndef is_col(p):\n    return isinstance(p, Col)\n"
FLAGS = "import enum\n\n\nclass Features(enum.Enum):\n    FAST = 1\n"
DESCRIBE = "\n\ndef describe():\n    return Features.FAST.name\n"
#: The refusal of the family whose ``wrap_col`` a star import would carry into ``user.py``.
WRAP_COL_HELD = "the generated name 'wrap_col' is already used in advpkg.user, which star-imports advpkg.params"


def _probe(module: str) -> str:
    return f"from advpkg.{module} import describe\n\n\ndef run():\n    return describe()\n"


def _converted(tmp_path, name: str) -> str:
    return (tmp_path / "after" / "advpkg" / name).read_text()


def test_a_name_another_star_import_gives_is_not_replaced(tmp_path, capsys):
    """``user.py`` takes ``Features`` from one star import and then star-imports the
    converted ``api.py``: the runtime's ``Features`` would have won."""
    files = {"params.py": BASE, "api.py": API, "flags.py": FLAGS,
             "user.py": "from advpkg.flags import *\nfrom advpkg.api import *" + DESCRIBE,
             "probe.py": _probe("user")}
    same_behaviour(tmp_path, files, capsys)
    assert "def Col(" in _converted(tmp_path, "params.py")
    # The runtime imported as a module, in isort's order (``from pkg import runtime``
    # imports what ``from pkg.runtime import ...`` does, so it may go first).
    assert _converted(tmp_path, "api.py").startswith(
        "from advpkg import params_features\nfrom advpkg.params import Col\n"
        "from advpkg.params_features import has_param_feature\n"), _converted(tmp_path, "api.py")


def test_a_name_held_two_star_imports_away_is_not_replaced(tmp_path, capsys):
    """``top.py`` binds ``Features`` and star-imports ``user.py``, which has no
    ``__all__`` and star-imports the converted ``api.py``."""
    files = {"params.py": BASE, "api.py": API, "flags.py": FLAGS,
             "user.py": "from advpkg.api import *\n",
             "top.py": "from advpkg.flags import Features\nfrom advpkg.user import *" + DESCRIBE,
             "probe.py": _probe("top")}
    same_behaviour(tmp_path, files, capsys)
    assert "def Col(" in _converted(tmp_path, "params.py")


def test_a_module_with_all_imports_the_helpers_under_their_names(tmp_path, capsys):
    """``__all__`` decides what a star import gives: nothing the rewrite adds reaches
    ``user.py``, so the helpers keep their own names."""
    files = {"params.py": BASE, "api.py": "__all__ = ['is_col']\n" + API, "flags.py": FLAGS,
             "user.py": "from advpkg.flags import Features\nfrom advpkg.api import *" + DESCRIBE,
             "probe.py": _probe("user")}
    same_behaviour(tmp_path, files, capsys)
    assert "import Features, has_param_feature\n" in _converted(tmp_path, "api.py")


#: ``user.py`` bodies that hold a ``wrap_col`` of their own and then star-import the
#: module that defines ``Col``, whose generated ``wrap_col`` would replace it: defined
#: there, bound through ``global``, or generated for ``user.py``'s own family's ``Col``
#: (``Sub``'s factory looks ``wrap_col`` up when it runs).
WRAP_COL_OWNERS = {
    "defined": "def wrap_col(x):\n    return 'mine'\n\n\nfrom advpkg.params import *  # noqa\n\n\n"
               "def describe():\n    return wrap_col(1)\n",
    "bound-through-global": "def setup():\n    global wrap_col\n\n    def wrap_col(x):\n        return 'mine'\n\n\n"
                            "setup()\nfrom advpkg.params import *  # noqa\n\n\n"
                            "def describe():\n    return wrap_col(1)\n",
    "generated-for-its-own-family": (
        BASE.replace("class Base(", "class BaseB(").replace("(Base)", "(BaseB)").replace("self.axis = axis", "self.width = axis")
        + "\n\nclass Sub(Col):\n    def __init__(self, depth=7, **kwargs):\n"
          "        super().__init__(**kwargs)\n        self.depth = depth\n\n\n"
          "from advpkg.params import *  # noqa\n\n\n"
          "def describe():\n    p = Sub(data=torch.zeros(1))\n"
          "    return sorted(k for k, v in vars(p).items() if not k.startswith('_') and not callable(v))\n"),
}


@pytest.mark.parametrize("case", sorted(WRAP_COL_OWNERS))
def test_a_generated_function_a_star_importer_holds_refuses_its_classes(tmp_path, capsys, case):
    files = {"params.py": BASE, "user.py": WRAP_COL_OWNERS[case], "probe.py": _probe("user")}
    err = same_behaviour(tmp_path, files, capsys)
    assert WRAP_COL_HELD in err, err
    assert "class Col(" in _converted(tmp_path, "params.py")


def test_without_a_star_import_nothing_is_renamed(tmp_path, capsys):
    """The same tree with a plain import: the helpers keep their names."""
    files = {"params.py": BASE, "api.py": API, "flags.py": FLAGS,
             "user.py": "from advpkg.flags import Features\nfrom advpkg.api import is_col" + DESCRIBE,
             "probe.py": _probe("user")}
    before, after, err = convert(tmp_path, files, capsys)
    assert "import Features, has_param_feature\n" in _converted(tmp_path, "api.py"), err


#: ``user.py`` variants in which ``Features`` was replaced after ``apply`` (review of
#: 2026-12-06): ``api.py`` with an ``__all__`` that is computed or may not run, a star
#: import that does not start its line, ``Features`` bound through ``global``, and a
#: rewritten file whose own star import gives ``Features``.
REPLACED = {
    "computed-all": ({"api.py": API + "__all__ = [n for n in list(globals()) if not n.startswith('_')]\n"},
                     "from advpkg.flags import Features\nfrom advpkg.api import *"),
    "all-under-type-checking": (
        {"api.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    __all__ = ['is_col']\n" + API},
        "from advpkg.flags import Features\nfrom advpkg.api import *"),
    "star-import-after-a-semicolon": ({}, "from advpkg.flags import Features\nimport os; from advpkg.api import *"),
    "bound-through-global": (
        {}, "def setup():\n    global Features\n    from advpkg.flags import Features as F\n"
            "    Features = F\n\n\nsetup()\nfrom advpkg.api import *  # noqa"),
    "all-extended-later": (
        {"api.py": "__all__ = ['is_col']\n" + API
                   + "__all__.extend(n for n in list(globals()) if not n.startswith('_'))\n"},
        "from advpkg.flags import Features\nfrom advpkg.api import *"),
    "own-star-import": ({}, "from advpkg.params import Col\nfrom advpkg.flags import *\n\n\n"
                            "def is_col(p):\n    return isinstance(p, Col)"),
}


@pytest.mark.parametrize("case", sorted(REPLACED))
def test_a_name_held_otherwise_is_not_replaced(tmp_path, capsys, case):
    extra, user = REPLACED[case]
    files = {"params.py": BASE, "api.py": API, "flags.py": FLAGS, **extra,
             "user.py": user + DESCRIBE, "probe.py": _probe("user")}
    same_behaviour(tmp_path, files, capsys)
    assert "def Col(" in _converted(tmp_path, "params.py")


def test_the_features_of_another_family_star_imported_below_do_not_replace_its_own(tmp_path, capsys):
    """``user.py`` checks a class of one family, then star-imports a module whose own
    rewrite imports the other family's ``Features``."""
    other = BASE.replace("Base", "BaseB").replace("Col", "Row")
    files = {"params.py": BASE, "params2.py": other,
             "api2.py": "from advpkg.params2 import Row\n\n\ndef is_row(p):\n    return isinstance(p, Row)\n",
             "user.py": "import torch\nfrom advpkg.params import Col\n\n\ndef is_col(p):\n"
                        "    return isinstance(p, Col)\n\n\nfrom advpkg.api2 import *  # noqa\n\n\n"
                        "def describe():\n    return is_col(Col(data=torch.zeros(1))), is_row(Col(data=torch.zeros(1)))\n",
             "probe.py": _probe("user")}
    same_behaviour(tmp_path, files, capsys)
    assert "def Col(" in _converted(tmp_path, "params.py") and "def Row(" in _converted(tmp_path, "params2.py")


def test_the_runtime_module_a_star_import_of_its_package_gives_refuses_the_family(tmp_path, capsys):
    """Importing the runtime module makes it an attribute of its package; ``from
    advpkg import *`` (no ``__all__``) then gave it, replacing ``user.py``'s own name."""
    files = {"__init__.py": BASE, "user.py": "param_features = 'mine'\nparams_features = 'mine too'\n"
                                               "from advpkg import *  # noqa\n\n\n"
                                               "def describe():\n    return param_features, params_features\n",
             "probe.py": _probe("user")}
    err = same_behaviour(tmp_path, files, capsys)
    assert "the runtime module's name" in err, err
