"""Class values proven across functions and modules (``analysis.class_values``).

A converted class handed on as a value keeps its family converted when every place the
value reaches is a call, an equality/identity comparison or a pass to a proven
parameter; otherwise the class is refused with the chain that reached the bad use.
``check`` plans with the same rounds, so it says the same.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from codemod import api
from codemod.check.planned import plan_tree
from codemod.cli import main
from codemod.types import Options

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"

PARAMS = """
    from torch.nn import Parameter


    class Kind(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)
"""


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {"pkg/__init__.py": "", "pkg/params.py": PARAMS, **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root / "pkg"


def _decisions(root: Path) -> dict[str, str | None]:
    """Class name -> None (converted) or the refusal reason, as ``apply`` plans."""
    plan = api.run([root], Options()).plan
    assert plan is not None
    return {q.rpartition(".")[2]: (p.refusal.reason if p.refusal else None) for q, p in plan.classes.items()}


def _kind(tmp_path: Path, use: str, **more: str) -> str | None:
    """The decision for ``Kind`` when module ``pkg.use`` holds ``use``."""
    files = {"pkg/use.py": "from pkg.params import Kind\n" + textwrap.dedent(use)}
    files.update({f"pkg/{name}.py": text for name, text in more.items()})
    return _decisions(_tree(tmp_path, files))["Kind"]


def test_engine_shapes_convert_the_whole_family():
    decisions = _decisions(GOLDEN / "class_values" / "input" / "eng")
    assert decisions == dict.fromkeys(
        ["BaseParam", "WeightParam", "ChannelScale", "BlockScale", "TensorScale"])


def test_refusals_name_the_chain():
    decisions = _decisions(GOLDEN / "refuse_class_values" / "input" / "eng")
    assert decisions["PlainKind"] is None
    assert "tables.py:3 -> table `KINDS` read at checks.py:11 -> matches(kind) -> isinstance at checks.py:7" \
        in decisions["CheckedKind"]
    assert "holders.py:9 -> __init__(kind) -> stored in an attribute (`self.kind`) at holders.py:10" \
        in decisions["StoredKind"]
    assert "passed to `functools.partial` at holders.py:14, which is not a function of the tree" \
        in decisions["ExportedKind"]


@pytest.mark.parametrize("case", ["class_values", "refuse_class_values"])
def test_check_plans_as_apply(case):
    root = GOLDEN / case / "input" / "eng"

    def decisions(plan):
        return {q: (p.converted, p.refusal.reason if p.refusal else None) for q, p in plan.classes.items()}

    assert decisions(plan_tree([root], Options()).plan) == decisions(api.run([root], Options()).plan)


def test_check_reports_the_chain_and_is_clean_after_apply(tmp_path, capsys):
    refused = Path(shutil.copytree(GOLDEN / "refuse_class_values" / "input", tmp_path / "refused"))
    capsys.readouterr()
    assert main(["check", str(refused / "eng")]) == 1
    out = capsys.readouterr().out
    assert "matches(kind) -> isinstance at checks.py:7" in out
    converted = Path(shutil.copytree(GOLDEN / "class_values" / "input", tmp_path / "converted"))
    main(["apply", str(converted / "eng")])
    capsys.readouterr()
    assert main(["check", str(converted / "eng")]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("use, reason", [
    ("def f(k):\n    return isinstance(1, k)\nf(Kind)\n", "f(k) -> isinstance at use.py:3"),
    ("def f(*ks):\n    return ks[0](1)\nf(Kind)\n", "collected in `*ks`"),
    ("def f(**ks):\n    return 1\nf(k=Kind)\n", "collected in `**ks`"),
    ("def f(a, k):\n    return k(a)\nargs = [1]\nf(*args, Kind)\n", "after a `*` spread"),
    ("def f(k, p):\n    return type(p) is k\nf(Kind, 1)\n", "`type(...)` comparison at use.py:3"),
    ("def f(k):\n    return k.__name__\nf(Kind)\n", "attribute `.__name__`"),
    # Formatted into what a ``raise`` computes with, not its message (second review of
    # 2026-12-06: the class's text starts ``<class``, the factory's ``<function``).
    ("def f(p):\n    raise (KeyError if f'{Kind}'.startswith('<class') else ValueError)('x')\n",
     "`{Kind}` at use.py:3"),
    ("TABLE = {'a': Kind}\nfor k, v in TABLE.items():\n    pass\n", "table `TABLE` used as `TABLE.items`"),
    ("def pick():\n    return Kind\nkinds = [pick()]\n", "returned by pick() at use.py:4 -> an element of"),
    ("def pick():\n    return Kind\ncallback = pick\n", "`pick` (which returns it) used as"),
    # A side that may hold an object's type: Parameter for a converted parameter, where
    # it was the class. SGLang's offloader (``old_param_type = type(old_param)``, then
    # ``old_param_type == ModelWeightParameter``) is rewritten (``held_type_uses``: the
    # name then holds ``param_type(p)``); a name also read otherwise is not.
    ("def move(p):\n    t = type(p)\n    print(t.__name__)\n    if t == Kind:\n        return 1\n",
     "`t == Kind` at use.py:5, where `t` holds `type(p)` (use.py:3)"),
    ("def f(p, k):\n    c = p.__class__\n    return c is Kind or c is k\n", "where `c` holds `p.__class__`"),
    ("def f(p):\n    t = type(p)\n    g = lambda: t\n    return t is Kind\n", "where `t` holds `type(p)`"),
    ("def f(p):\n    return Kind in type(p).__mro__\n", "where `type(p).__mro__` holds `type(p)`"),
    ("def f(p):\n    return (t := type(p)) is Kind\n", "holds `type(p)`"),
    ("def f(p, q):\n    a, b = type(p), type(q)\n    return a == Kind\n", "where `a` holds `type(p)`"),
    ("T = type(1)\nSAME = T == Kind\n", "where `T` holds `type(1)` (use.py:2)"),
    # A compared parameter that a caller passes an object's type (then Parameter, where
    # it was the class): each call of the function is followed, by position or keyword.
    ("def is_kind(k):\n    return k == Kind\ndef check(p):\n    return is_kind(type(p))\n",
     "where `k` is a parameter of `is_kind`: `is_kind(type(p))` at use.py:5 passes `type(p)`"),
    ("def is_kind(x, *, k):\n    return k is Kind\ndef check(p):\n    return is_kind(1, k=p.__class__)\n",
     "passes `p.__class__`, an object's type"),
    ("def is_kind(k):\n    return k == Kind\ndef check(p):\n    t = type(p)\n    return is_kind(t)\n",
     "passes `t`, which holds `type(p)` (use.py:5)"),
    ("def is_kind(k):\n    return k == Kind\ndef relay(c):\n    return is_kind(c)\n"
     "def check(p):\n    return relay(type(p))\n",
     "passes `c`, a parameter of `relay`: `relay(type(p))` at use.py:7 passes `type(p)`"),
    ("class Checker:\n    def is_kind(self, k):\n        return k == Kind\n"
     "    def check(self, p):\n        return self.is_kind(type(p))\n",
     "`self.is_kind(type(p))` at use.py:6 passes `type(p)`"),
    ("def outer(k):\n    def inner():\n        return k == Kind\n    return inner()\n"
     "def check(p):\n    return outer(type(p))\n",
     "where `k` is a parameter of `outer`: `outer(type(p))` at use.py:7 passes `type(p)`"),
    ("def is_kind(k):\n    return k == Kind\nCHECKS = [is_kind]\n",
     "`is_kind` used as `[is_kind]` at use.py:4, so its callers are not known"),
    ("def is_kind(k):\n    return k == Kind\ndef check(p, **kw):\n    return is_kind(**kw)\n",
     "a `**` spread in the call at use.py:5"),
    ("check = lambda k: k == Kind\n", "the callers of a lambda are not followed"),
    # A side whose value the proof does not follow: a function's result, an attribute, a
    # name bound to either, a container read, or one passed to a compared parameter.
    ("def kind(p):\n    return type(p)\ndef f(p):\n    return kind(p) is Kind\n",
     "where `kind(p)` returns `type(p)`, which may be an object's type"),
    ("class H:\n    def __init__(self, p):\n        self.t = type(p)\n    def f(self):\n"
     "        return self.t is Kind\n", "where `self.t` is read from an attribute"),
    ("def f(p, kind):\n    t = kind(p)\n    return t == Kind\n", "where `t` is bound to `kind(p)` (use.py:3)"),
    ("def f(p, kinds):\n    return kinds[0] == Kind\n", "where `kinds[0]` is read from a container"),
    ("def f(p):\n    with p as t:\n        return t is Kind\n", "`t` is bound in a way the proof does not follow"),
    ("T = Kind\ndef set_t(p):\n    global T\n    T = type(p)\ndef f():\n    return T is Kind\n",
     "`T` is bound in a way the proof does not follow"),
    ("def f(p):\n    t = Kind\n    def g():\n        nonlocal t\n        t = type(p)\n    g()\n"
     "    return t is Kind\n", "`t` declared nonlocal"),
    ("def is_kind(k):\n    return k == Kind\ndef kind(p):\n    return type(p)\n"
     "def check(p):\n    return is_kind(kind(p))\n",
     "`is_kind(kind(p))` at use.py:7 passes `kind(p)`, where `kind(p)` returns `type(p)`"),
])
def test_unproven_values_refuse_with_the_reason(tmp_path, use, reason):
    found = _kind(tmp_path, use)
    assert found is not None and reason in found, found


def test_a_side_holding_a_type_through_another_module_or_a_write_by_key_refuses(tmp_path):
    """A name imported from a module that binds it to ``type(...)``, and a table another
    function writes into by key, may hold an object's type (third review of 2026-12-04:
    both converted and the comparison no longer held)."""
    imported = _kind(tmp_path / "a", "from pkg.state import DEFAULT\ndef f():\n    return DEFAULT == Kind\n",
                     state="import torch\nfrom pkg.params import Kind\nDEFAULT = type(Kind(torch.zeros(1)))\n")
    assert imported is not None and "`DEFAULT` is bound to `type(Kind(torch.zeros(1)))`" in imported, imported
    written = _kind(tmp_path / "b", "KINDS = {'w': Kind}\ndef remember(n, p):\n    KINDS[n] = type(p)\n"
                                    "def f():\n    return KINDS['w'] == Kind\n")
    assert written is not None and "`KINDS` is written by key at use.py:4" in written, written


@pytest.mark.parametrize("use", [
    "def f(k, p):\n    if k == Kind or k is not None:\n        return k(p)\n    raise ValueError(f'bad {k}')\nf(Kind, 1)\n",
    "TABLE = {'a': Kind}\ndef g(key, p):\n    if key in TABLE:\n        return TABLE.get(key)(p)\n    return TABLE[key](p)\n",
    "def make(p, kind=Kind):\n    return kind(p)\n",
    "TABLE = {'a': Kind}\n",
    "def make(k, p):\n    return k(p)\nbuild = lambda p: make(Kind, p)\n",
    "def pick():\n    return Kind\ndef build(p):\n    return pick()(p)\n",
    "def build(p, flag):\n    kind = Kind if flag else None\n    return kind(p)\n",
    # A name bound to a type only in another scope compares as before.
    "def f(p):\n    t = Kind\n    def g(q):\n        t = type(q)\n        return t\n    return t == Kind\n",
    # A compared parameter every caller passes a class (vLLM's create_fp8_scale_parameter
    # shape): a table read, the class, a default; the caller's own parameter followed.
    "TABLE = {'a': Kind}\ndef create(k, p):\n    if k == Kind:\n        return k(p)\n    return None\n"
    "def build(key, p):\n    return create(TABLE[key], p)\ndef other(p):\n    return create(Kind, p)\n"
    "def relay(c, p):\n    return create(c, p)\ndef top(p):\n    return relay(Kind, p)\n",
    "def create(p, k=Kind):\n    return k == Kind\ndef build(p):\n    return create(p)\n",
    # Sides the proof follows: a module's attribute, a table of classes, literals, a choice
    # of classes, a function returning a table read, a class imported inside the function.
    "TABLE = {'a': Kind}\ndef pick(s):\n    return TABLE[s]\ndef f(k, s, c):\n"
    "    return k == (Kind if c else None) or pick(s) == Kind\n",
    "def f(k):\n    from pkg.params import Kind as K\n    return k == K\nf(Kind)\n",
    "import pkg.params as params\nSAME = params.Kind is Kind\n",
    "TABLE = {'a': Kind, 'b': None}\ndef f(key):\n    return TABLE[key] is Kind\n",
    "def f(k):\n    return k in (None, 3, Kind)\nf(Kind)\n",
    "def f(p):\n    t = Kind\n    return t is Kind\n",
    # A name holding an object's type that the use-site rewrite turns into a comparison
    # of kinds (``held_type_uses``): compared only, also in a ``raise`` message.
    "def move(p):\n    t = type(p)\n    if t == Kind:\n        return 1\n    raise ValueError(f'{t=}')\n",
    "def f(p, q):\n    c = p.__class__\n    return c is Kind or c in (type(q), None)\n",
])
def test_proven_values_convert(tmp_path, use):
    assert _kind(tmp_path, use) is None


@pytest.mark.parametrize("use", [
    # vLLM 0.10-0.11 and Aphrodite 0.10: ``compilation/decorators.py``
    "import torch\ndef f():\n    with torch._dynamo.config.patch('traceable_tensor_subclasses', [Kind, int]):\n"
    "        return 1\n",
    "import torch\nCTX = torch._dynamo.config.patch(traceable_tensor_subclasses={Kind})\n",
    "from torch._dynamo import config\nconfig.traceable_tensor_subclasses.add(Kind)\n",
    "import torch._dynamo.config as dc\ndc.nontraceable_tensor_subclasses.update((Kind,))\n",
])
def test_torchs_registries_of_tensor_subclasses_are_proven(tmp_path, use):
    """torch matches those registries by exact type: a factory there matches nothing, as
    the class matched no other object (``analysis/type_registries.py``)."""
    assert _kind(tmp_path, use) is None


@pytest.mark.parametrize("use, reason", [
    ("import other\nCTX = other.config.patch('traceable_tensor_subclasses', [Kind])\n", "an element of"),
    ("import torch\nCTX = torch._dynamo.config.patch('capture_scalar_outputs', [Kind])\n", "an element of"),
    ("import torch\ntorch._dynamo.config.traceable_tensor_subclasses.discard(Kind)\n", "not a function of the tree"),
])
def test_look_alikes_of_the_registries_are_not(tmp_path, use, reason):
    found = _kind(tmp_path, use)
    assert found is not None and reason in found, found


def test_every_override_that_a_self_call_reaches_is_proven(tmp_path):
    base = """
        class Method:
            @staticmethod
            def register(layer, cls):
                return cls(layer)

        class Linear(Method):
            def create(self, layer):
                return self.register(layer, Kind)
    """
    assert _kind(tmp_path / "a", base) is None
    override = base + """
        class Checked(Linear):
            @staticmethod
            def register(layer, cls):
                return isinstance(layer, cls)
    """
    found = _kind(tmp_path / "b", override)
    assert found is not None and "register(cls) -> isinstance at use.py:" in found, found


def test_a_method_from_a_base_outside_the_tree_is_unknown(tmp_path):
    use = """
        import torch

        class Linear(torch.nn.Module):
            def create(self, layer):
                return self.register(layer, Kind)
    """
    found = _kind(tmp_path, use)
    assert found is not None and "the base `torch.nn.Module` of `Linear` is not followed" in found, found


def test_a_table_read_in_another_module_through_a_reexport(tmp_path):
    files = {
        "tables": "from pkg.params import Kind\nTABLE = {'a': Kind}\n",
        "sub/__init__": "from pkg.tables import TABLE\n",
        "reader": "from pkg.sub import TABLE\n\ndef build(p):\n    return isinstance(p, TABLE['a'])\n",
    }
    found = _kind(tmp_path, "", **files)
    assert found is not None and "table `TABLE` read at reader.py:4 -> isinstance at reader.py:4" in found, found


def test_a_table_reexported_under_another_name_is_followed(tmp_path):
    """``from m import T as U`` re-exports ``T`` as ``U``: a file importing ``U`` from
    there mentions only ``U``. Before, its reads were never looked at and the class was
    converted: ``isinstance(p, relay(k))`` then raised ``TypeError``."""
    files = {
        "tables": "from pkg.params import Kind\nKINDS = {'a': Kind}\n",
        "reexport": "from pkg.tables import KINDS as TABLE\n",
        "reader": "from pkg.reexport import TABLE\n\ndef pick(k):\n    return TABLE[k]\n\n"
                  "def relay(k):\n    return pick(k)\n",
        "checks": "from pkg.reader import relay\n\ndef is_kind(p, k):\n    return isinstance(p, relay(k))\n",
    }
    found = _kind(tmp_path, "", **files)
    assert found is not None and "table `KINDS` read at reader.py:4 -> returned by pick()" in found, found
    assert "isinstance at checks.py:4" in found, found


def test_a_class_attribute_is_not_a_module_level_name(tmp_path):
    use = """
        kind = None

        class Holder:
            kind = Kind

            def check(self, p):
                return isinstance(p, self.kind)

        def build(p):
            return kind(p)
    """
    found = _kind(tmp_path, use)
    assert found is not None and "stored in class attribute `Holder.kind`" in found, found


def test_the_safety_net_accepts_a_proven_value_reached_through_a_star_import(tmp_path):
    proven = "from pkg.params import *\n\ndef make(kind, p):\n    return kind(p)\n\ndef build(p):\n    return make(Kind, p)\n"
    assert _decisions(_tree(tmp_path / "a", {"pkg/use.py": proven}))["Kind"] is None
    checked = proven.replace("return kind(p)", "return isinstance(p, kind)")
    found = _decisions(_tree(tmp_path / "b", {"pkg/use.py": checked}))["Kind"]
    assert found is not None and "use.py:7" in found, found


# -- the chain as steps, each with its place ---------------------------------------------


def _use_chain(root: Path, name: str = "Kind"):
    """The steps of the value chain that refuses ``name`` (``Refusal.use.chain``)."""
    plan = api.run([root], Options()).plan
    assert plan is not None
    refusal = next(p.refusal for q, p in plan.classes.items() if q.endswith("." + name))
    assert refusal is not None and refusal.use is not None
    return refusal.use.chain


def test_a_step_whose_code_holds_an_arrow_stays_one_step(tmp_path):
    """The proof hands its steps on as steps: code holding `` -> `` (a string here) is
    not read as a boundary between two steps (the chain was a string split on it)."""
    root = _tree(tmp_path, {"pkg/use.py": """
        from pkg.params import Kind
        PAIR = (Kind, "a -> b")
    """})
    chain = _use_chain(root)
    assert [step.text for step in chain] == [
        "use.py:2", "an element of `(Kind, 'a -> b')` at use.py:2"]
    assert [(step.path, step.line) for step in chain] == [(root / "use.py", 2)] * 2


def test_each_step_records_its_own_file_when_file_names_repeat(tmp_path, capsys):
    """Two modules named ``helpers.py``: the report links each step to the file the proof
    followed the value into, not to a file guessed from the step's words (the guess found
    two files of that name and gave the bare name)."""
    root = _tree(tmp_path, {
        "pkg/a/__init__.py": "",
        "pkg/a/helpers.py": "def describe(kind):\n    return repr(kind)\n",
        "pkg/b/__init__.py": "",
        "pkg/b/helpers.py": "def matches(param, kind):\n    return isinstance(param, kind)\n",
        "pkg/use.py": """
            from pkg.b.helpers import matches
            from pkg.params import Kind


            def is_kind(param):
                return matches(param, Kind)
        """,
    })
    chain = _use_chain(root)
    assert [(step.text, step.path, step.line) for step in chain] == [
        ("use.py:6", root / "use.py", 6),
        ("matches(kind)", root / "b" / "helpers.py", 1),
        ("isinstance at helpers.py:2", root / "b" / "helpers.py", 2)]
    report = tmp_path / "report.json"
    main(["apply", "--dry-run", "--report", str(report), str(root)])
    capsys.readouterr()
    entry = next(c for c in json.loads(report.read_text())["classes"] if c["qualname"] == "pkg.params.Kind")
    assert [(link["path"], link["line"]) for link in entry["refusal"]["chain"]][-2:] == [
        (str(root / "b" / "helpers.py"), 1), (str(root / "b" / "helpers.py"), 2)]
