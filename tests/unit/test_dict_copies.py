"""Which attribute-dict copies ``apply`` follows with ``rebind_param_methods``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod import api
from codemod.types import Options
from tests.speed.test_prefilter import PARAMS, write_tree

REWRITTEN = {
    "assign-copy": "t.__dict__ = p.__dict__.copy()",
    "assign-dict": "self.t.__dict__ = dict(p.__dict__)",
    "update": "t.__dict__.update(p.__dict__)",
    "update-kwargs": "t.__dict__.update(a=1)",
    "ior": "t.__dict__ |= p.__dict__",
}
LEFT_ALONE = {
    "call-target": "f().__dict__.update(p.__dict__)",
    "subscript-target": "ts[0].__dict__.update(p.__dict__)",
    "vars": "vars(t).update(p.__dict__)",
    "item": "t.__dict__['k'] = p.__dict__['k']",
    "read": "d = p.__dict__.copy()",
}


def _run(tmp_path: Path, body: str, with_params: bool = True, head: str = "import torch\n\n\n",
         ) -> api.RunResult:
    files = {"pkg/use.py": head + "def f(t, p, ts, self):\n" + textwrap.indent(body, "    ") + "\n"}
    if with_params:
        files["pkg/params.py"] = PARAMS
    root = write_tree(tmp_path / "src", files) / "pkg"
    return api.run([root], Options())


def _use(result: api.RunResult):
    return next((f for f in result.changed() if f.path.name == "use.py"), None)


@pytest.mark.parametrize("case", sorted(REWRITTEN))
def test_rewritten(tmp_path, case):
    changed = _use(_run(tmp_path, REWRITTEN[case]))
    assert changed is not None and changed.new_text is not None
    target = REWRITTEN[case].split(".__dict__")[0]
    assert f"{REWRITTEN[case]}\n    rebind_param_methods({target})\n" in changed.new_text
    assert "from pkg.params_features import rebind_param_methods" in changed.new_text
    assert dict(changed.counts)["dict-copy"] == 1


@pytest.mark.parametrize("case", sorted(LEFT_ALONE))
def test_left_alone(tmp_path, case):
    assert _use(_run(tmp_path, LEFT_ALONE[case])) is None


def test_a_copy_in_a_file_without_torch_or_parameter_names_is_rebound_too(tmp_path):
    """A parameter can reach any function: what the file imports or its names say does
    not decide (``rebind_param_methods`` leaves other objects as the copy left them)."""
    changed = _use(_run(tmp_path, REWRITTEN["update"], head=""))
    assert changed is not None and "rebind_param_methods(" in (changed.new_text or "")


def test_a_parameter_name_ties_a_copy_to_parameters_without_torch(tmp_path):
    changed = _use(_run(tmp_path, "fresh.__dict__.update(weight.__dict__)", head=""))
    assert changed is not None and "rebind_param_methods(fresh)" in (changed.new_text or "")


@pytest.mark.parametrize("body", [
    "def __setstate__(self, state):\n    self.__dict__.update(state)",
    "def load(self, module):\n    self.__dict__.update(module.__dict__)",
    "def merged(self, out):\n    out.__dict__ |= self.__dict__",
    "def later(self, state):\n    def apply():\n        self.__dict__.update(state)\n    return apply",
])
def test_an_ordinary_objects_own_dict_is_left_alone(tmp_path, body):
    code = "import torch\n\n\nclass Holder:\n" + textwrap.indent(body, "    ") + "\n"
    root = write_tree(tmp_path / "src", {"pkg/use.py": code, "pkg/params.py": PARAMS}) / "pkg"
    assert _use(api.run([root], Options())) is None


def test_setattr_loop_is_a_copy(tmp_path):
    changed = _use(_run(tmp_path, "for k, v in vars(p).items():\n    setattr(t, k, v)"))
    assert changed is not None
    assert "        setattr(t, k, v)\n    rebind_param_methods(t)\n" in (changed.new_text or "")


def test_reads_made_old_style(tmp_path):
    changed = _use(_run(tmp_path, "same = t.__dict__ == vars(p)\n"
                                  "names = {k for k in p.__dict__.keys()}\n"
                                  "other = p.__dict__.get('k'), 'k' in p.__dict__\n"
                                  "return p.__dict__['load']"))
    assert changed is not None and changed.new_text is not None
    text = changed.new_text
    assert "same = param_attr_dict(t) == param_attr_dict(p)" in text
    assert "names = {k for k in param_attr_dict(p).keys()}" in text
    assert "other = p.__dict__.get('k'), 'k' in p.__dict__" in text  # not a name conversion added
    assert "return param_attr_dict(p)['load']" in text


def test_nothing_without_a_converted_class(tmp_path):
    result = _run(tmp_path, REWRITTEN["update"], with_params=False)
    assert not result.changed()


def test_same_line_and_suite(tmp_path):
    changed = _use(_run(tmp_path, "x = 1; t.__dict__.update(p.__dict__); y = 2\n"
                                  "if t: t.__dict__ |= p.__dict__"))
    assert changed is not None and changed.new_text is not None
    assert "x = 1; t.__dict__.update(p.__dict__); rebind_param_methods(t); y = 2" in changed.new_text
    assert "if t: t.__dict__ |= p.__dict__; rebind_param_methods(t)" in changed.new_text


def test_no_import_cycle_with_the_runtime_module(tmp_path):
    """``pkg/__init__.py`` imports ``helpers``, so importing ``pkg.params`` runs
    ``helpers`` first; the runtime module (``pkg.params_features``) imports only torch, so
    ``helpers`` imports the helper at its top, and a module-level copy is followed too."""

    from codemod.cli import main

    root = write_tree(tmp_path / "src", {
        "pkg/params.py": PARAMS,
        "pkg/helpers.py": """
            import torch


            def copy_attrs(t, p):
                t.__dict__.update(p.__dict__)
                return t


            class Box:
                pass


            BOX = Box()
            BOX.__dict__.update({"a": 1})
        """,
    })
    (root / "pkg" / "__init__.py").write_text("from pkg import helpers\n")
    assert main(["apply", str(root / "pkg")]) == 1  # files changed
    text = (root / "pkg" / "helpers.py").read_text()
    assert "    t.__dict__.update(p.__dict__)\n    rebind_param_methods(t)\n" in text
    assert text.startswith("import torch\n\nfrom pkg.params_features import rebind_param_methods\n\n\n"
                           "def copy_attrs")
    probe = (
        "import torch\n"
        "import pkg.params as P\n"
        "from pkg.helpers import copy_attrs\n"
        "p = P.Packed(torch.zeros(2), input_dim=1)\n"
        "t = copy_attrs(torch.nn.Parameter(torch.zeros(2), requires_grad=False), p)\n"
        "t.load(torch.ones(2))\n"
        "print(t.tolist(), p.tolist(), t.input_dim)\n"
    )
    assert _import_and_call(root, probe) == "[1.0, 1.0] [0.0, 0.0] 1"


def _import_and_call(root: Path, probe: str) -> str:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_no_cycle_when_the_copying_file_also_uses_a_class(tmp_path):
    """The copying file is converted in a planning round (it names a class), not only
    in the final one: it imports the runtime module (which imports nothing of the tree)
    at its top, laid out as isort would."""
    from codemod.cli import main

    root = write_tree(tmp_path / "src", {
        "pkg/params.py": "from pkg import util\n" + textwrap.dedent(PARAMS),
        "pkg/util.py": """
            def f(t, p):
                from pkg.params import Base
                x: Base = p
                t.__dict__.update(p.__dict__)
                return t
        """,
    })
    assert main(["apply", str(root / "pkg")]) == 1
    text = (root / "pkg" / "util.py").read_text()
    assert text.startswith("from torch.nn import Parameter\n\n"
                           "from pkg.params_features import rebind_param_methods\n\n\ndef f(t, p):\n")
    assert "    t.__dict__.update(p.__dict__)\n    rebind_param_methods(t)\n" in text
    assert _import_and_call(root, "import pkg.params; print('ok')") == "ok"


def test_root_module_copies(tmp_path):
    """In the family's root module: functions and module-level copies call the helper
    imported from the runtime module."""
    from codemod.cli import main

    params = ("import types\n\n_t = types.SimpleNamespace()\n_t.__dict__.update({'a': 1})\n\n\n"
              "def copy_attrs(t, p):\n    t.__dict__.update(p.__dict__)\n    return t\n\n\n"
              + textwrap.dedent(PARAMS))
    root = write_tree(tmp_path / "src", {"pkg/params.py": params})
    assert main(["apply", str(root / "pkg")]) == 1
    text = (root / "pkg" / "params.py").read_text()
    assert "_t.__dict__.update({'a': 1})\nrebind_param_methods(_t)\n" in text
    assert "    t.__dict__.update(p.__dict__)\n    rebind_param_methods(t)\n" in text
    probe = ("import torch\nimport pkg.params as P\n"
             "p = P.Packed(torch.zeros(2), input_dim=1)\n"
             "t = P.copy_attrs(torch.nn.Parameter(torch.zeros(2), requires_grad=False), p)\n"
             "t.load(torch.ones(2))\nprint(t.tolist(), p.tolist())\n")
    assert _import_and_call(root, probe) == "[1.0, 1.0] [0.0, 0.0]"


@pytest.mark.parametrize("body", [
    "rebind_param_methods = 5\nt.__dict__.update(p.__dict__)\nreturn rebind_param_methods",
    "t.__dict__.update(p.__dict__)\nrebind_param_methods(t)",
])
def test_file_naming_the_helper_is_left_alone(tmp_path, body):
    """No shadowed local, no second call on a file that already rebinds."""
    assert _use(_run(tmp_path, body)) is None


def test_root_module_binding_copy_otherwise_is_converted(tmp_path):
    """The runtime lives in its own module: a root module that binds ``copy`` to
    something else no longer matters."""
    params = "from mylib import copy\n" + textwrap.dedent(PARAMS)
    root = write_tree(tmp_path / "src", {"pkg/params.py": params}) / "pkg"
    result = api.run([root], Options())
    assert not result.refusals
    assert {f.path.name for f in result.changed()} == {"params.py", "params_features.py"}


SCREEN_KEYS = frozenset({"weight_loader", "_weight_loader", "load_column_parallel_weight"})


@pytest.mark.parametrize("body", [
    *REWRITTEN.values(),
    "for k, v in s.__dict__.items():\n    setattr(t, k, v)",
    "x = p.__dict__.get('weight_loader')",
    "x = vars(p)['_weight_loader']",
    "x = 'weight_loader' not in p.__dict__",
    "x = vars(a) == vars(b)",
    "x = {k: v for k, v in a.__dict__.items() if k != 's'} == other",
    "x = sorted(k for k in vars(p))",
    "x = p.__dict__.copy() == q.__dict__.copy()",
    "x = dict(vars(p)) != other",
    "x = {**p.__dict__} == other",
    "x = getattr(p, '__dict__') == other",
    "x = getattr(p, '__dict__').get('weight_loader')",
])
def test_screen_keeps_every_shape_the_rewrite_acts_on(body):
    from codemod.transforms.dict_copy_screen import may_rewrite

    assert may_rewrite(body + "\n", SCREEN_KEYS)
    # Deep inside a decorated method, after lines that name no attribute dict (the
    # screen walks only the nodes spanning a line that does), and after a CR line end.
    nested = "\n".join("        " + line for line in body.splitlines())
    wrapped = ("import x\n\n\nclass C:\n    @deco(\n        1)\n    def m(self, p, q):\n"
               "        y = 1\n" + nested + "\n        return y\n")
    assert may_rewrite(wrapped, SCREEN_KEYS)
    assert may_rewrite(wrapped, SCREEN_KEYS, frozenset())  # of ``p``, not of ``self``
    assert may_rewrite("z = 1\r" + body + "\n", SCREEN_KEYS)


@pytest.mark.parametrize("body", [
    "self.__dict__.update(state)",
    "self.__dict__ = other.__dict__.copy()",
    "return {k: str(v) for k, v in self.__dict__.items()}",
    "return ', '.join(f'{k}={v}' for k, v in vars(self).items())",
    "return vars(self) == self.__dict__.copy()",
    "def inner():\n    self.__dict__.update(state)",
])
def test_screen_passes_over_an_ordinary_objects_own_dict(body):
    """What ``DictCopyTransformer.may_involve_param`` leaves alone: the own ``self`` of a
    method of an ordinary class (a closure in it too). In a Parameter class of the file
    (or when the file's classes are not known) the shape is kept."""
    from codemod.transforms.dict_copy_screen import may_rewrite

    nested = "\n".join("        " + line for line in body.splitlines())
    source = "class Lazy:\n    def __setstate__(self, state, other):\n" + nested + "\n"
    assert not may_rewrite(source, SCREEN_KEYS, frozenset())
    assert may_rewrite(source, SCREEN_KEYS, frozenset({"Lazy"}))
    assert may_rewrite(source, SCREEN_KEYS)


@pytest.mark.parametrize("body", [
    "for k, v in vars(args).items():\n    print(k, v)",
    "x = p.__dict__.get(name)",
    "x = vars(cfg)['other_key']",
    "x = repr(vars(config))",
])
def test_screen_skips_reads_the_rewrite_leaves_alone(body):
    from codemod.transforms.dict_copy_screen import may_rewrite

    assert not may_rewrite(body + "\n", SCREEN_KEYS)
