"""``screen_leftovers`` (CPython's parser) must say exactly what LibCST's path says.

Where the screen decides a file, its leftovers must equal ``unconverted_uses`` entry for
entry (line, column, class, text): on every fixture tree, on crafted positions one by
one, and with ``allow-value-uses`` on and off. Where it cannot be exact it must refuse to
decide (None), and the engine then falls back to LibCST.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod import api
from codemod.pipeline import conversion, plan_rounds, reading, rewrite_reach
from codemod.planning.plan import Plan, build_plan
from codemod.transforms.leftover_screen import screen_leftovers
from codemod.types import Options
from tests.speed.test_prefilter import CASES, PARAMS, write_tree

REPO = Path(__file__).resolve().parents[2]
FIXTURE_TREES = [REPO / "fixtures" / "engine"] + sorted(
    p / "input" for p in (REPO / "fixtures" / "golden").iterdir() if (p / "input").is_dir())


def _plan(root: Path, allow_value_uses: bool, proofs: bool = False) -> tuple[api.RunResult, Plan]:
    """The first plan (nothing refused for a use yet: the most mentions to classify);
    with ``proofs``, the value uses ``class_values`` proves, as ``settle_plan`` gives them."""
    result = api.read_tree([root], Options())
    index = api.analyse(result.sources, result)
    plan = build_plan(index, (), {}, allow_value_uses=allow_value_uses)
    if proofs:
        texts = {p: s.text for p, s in result.sources.items()}
        plan.values = plan_rounds.class_value_proofs(result, index, texts)
    return result, plan


def _both(result: api.RunResult, plan: Plan, path: Path):
    """(screen's answer, LibCST's answer) for one file."""
    text = result.sources[path].text
    screened = screen_leftovers(path, text, plan, rewrite_reach.class_spellings(plan))
    ff = result.facts.get(path) or reading.parse_facts(path, text)[0]
    assert ff is not None
    _, expected = conversion.convert_with_leftovers(ff, plan, stop_at_leftovers=False, leftovers_only=True)
    return screened, expected


@pytest.mark.parametrize("proofs", [False, True], ids=["unproven", "proven"])
@pytest.mark.parametrize("allow_value_uses", [False, True], ids=["strict", "allow-value-uses"])
@pytest.mark.parametrize("root", FIXTURE_TREES, ids=lambda p: p.parent.name if p.name == "input" else p.name)
def test_fixture_trees_agree_with_libcst(root, allow_value_uses, proofs):
    result, plan = _plan(root, allow_value_uses, proofs)
    for path in plan_rounds.rewrite_candidates(plan, result):
        screened, expected = _both(result, plan, path)
        if screened is not None:
            assert screened == expected, path


def test_fixture_trees_are_mostly_decided():
    """The equality tests above are not vacuous: the screen decides a good part of the
    fixtures' candidate files (written to exercise the hard patterns, so fewer than on
    vLLM, where it decides 29 of 33 files of the first plan)."""
    decided = total = 0
    for root in FIXTURE_TREES:
        result, plan = _plan(root, False)
        for path in plan_rounds.rewrite_candidates(plan, result):
            total += 1
            decided += screen_leftovers(path, result.sources[path].text, plan,
                                        rewrite_reach.class_spellings(plan)) is not None
    assert total > 20 and decided >= 12, (decided, total)


@pytest.mark.parametrize("case", sorted(CASES))
def test_crafted_trees_agree_with_libcst(tmp_path, case):
    root = write_tree(tmp_path / "src", CASES[case]) / "pkg"
    result, plan = _plan(root, False, proofs=True)
    for path in plan_rounds.rewrite_candidates(plan, result):
        text = result.sources[path].text
        if reading.parse_facts(path, text)[0] is None:  # LibCST cannot parse it: neither can CPython
            assert screen_leftovers(path, text, plan, rewrite_reach.class_spellings(plan)) is None
            continue
        screened, expected = _both(result, plan, path)
        if screened is not None:
            assert screened == expected, path


#: One use of the hierarchy per case: (body of pkg/use.py, what the screen must answer:
#: "same" = decided and equal to LibCST, with at least one leftover when "leftover" is in
#: the id; None = undecided).
USES = {
    "call": ("from pkg.params import Base\nx = Base(1)\n", "same"),
    "attribute-call": ("import pkg.params as P\nx = P.Base(1)\n", "same"),
    "isinstance": ("from pkg.params import Base\ndef f(p):\n    return isinstance(p, Base)\n", "same"),
    "isinstance-tuple": ("from pkg.params import Base, Packed\n"
                         "def f(p):\n    return isinstance(p, (Base, Packed, int))\n", "same"),
    "annotation": ("from pkg.params import Base\ndef f(p: Base) -> list[Base]:\n    y: Base = p\n", "same"),
    "annotation-optional": ("from pkg.params import Base\ndef f(p: Base | None = None): ...\n", "same"),
    "leftover-argument": ("from pkg.params import Base\ndef f(reg):\n    reg(Base, 1)\n", "same"),
    "leftover-keyword": ("from pkg.params import Base\ndef f(reg):\n    reg(kind=Base)\n", "same"),
    "leftover-decorator": ("from pkg.params import Base\n@register(Base)\ndef f(): ...\n", "same"),
    "leftover-table": ("from pkg.params import Base\nKINDS = {'b': Base}\n", "same"),
    "leftover-alias": ("from pkg.params import Base\nAlias = Base\n", "same"),
    "leftover-compare-module": ("from pkg.params import Base\nSAME = K == Base\n", "same"),
    "compare-in-function": ("from pkg.params import Base\ndef f(k):\n    return k is Base\n", "same"),
    "leftover-unicode-column": ("from pkg.params import Base\ndef f(reg):\n    reg('é', Base)\n", "same"),
    "leftover-parenthesized": ("from pkg.params import Base\ndef f(reg):\n    reg((Base))\n", "same"),
    "leftover-two-lines": ("from pkg.params import Base, Packed\nreg(Base)\nreg(\n    Packed)\n", "same"),
    "leftover-crlf": ("from pkg.params import Base\r\n\r\nreg(1)\r\nreg(Base)\r\n", "same"),
    "leftover-cr": ("from pkg.params import Base\r\rreg(1)\rreg(Base)\r", "same"),
    # Found by review: the object of a called attribute, columns, identifiers, compile.
    "leftover-in-called-object": ("from pkg.params import Base\nreg(Base).load(1)\n", "same"),
    "leftover-class-style-missing-member-call": ("from pkg.params import Base\ndef f(p):\n    Base.missing(p)\n",
                                                 "same"),
    # ``X.attr``: a member the MRO finds is rewritten, any other needs the class.
    "inherited-method": ("from pkg.params import Packed\ndef f(p, w):\n    Packed.load(p, w)\n", "same"),
    "kept-names": ("from pkg.params import Base, Packed\nN = Base.__name__, Packed.__qualname__\n", "same"),
    "leftover-class-style-property": ("from pkg.params import Base\nP = Base.input_dim\n", "same"),
    "leftover-class-style-method-name": ("from pkg.params import Base, Packed\n"
                                         "N = Base.load.__name__, Packed.load.__qualname__\n", "same"),
    "case-value-pattern": ("from pkg.params import Base\ndef f(x):\n    match x:\n"
                           "        case Base.load:\n            return 1\n", None),
    "field-of-class": ("from pkg.params import Base\nF = Base._input_dim\n", None),
    "member-written": ("from pkg.params import Base\nBase.load = print\n", None),
    "member-deleted": ("from pkg.params import Base\ndel Base.load\n", None),
    # Names the module defines resolve to it; a Parameter class's bases are its own.
    "defined-here": ("from pkg.params import Base\nclass Mine(Base):\n    def load(self, w):\n"
                     "        Base.load(self, w)\n\ndef f(p, w):\n    Mine.load(p, w)\n"
                     "    return isinstance(p, Mine)\n", "same"),
    "leftover-defined-here-value": ("from pkg.params import Base\nclass Mine(Base):\n    pass\n"
                                    "KINDS = {'m': Mine}\n", "same"),
    # CPython normalises identifiers (NFKC), not comments or strings.
    # Found by review: a tokenizer splits ``B\u0387`` into error tokens; an f-string's
    # text holds expressions.
    "nfkc-error-token": ("from pkg.params import Base as B\u0387\nimport torch\n"
                         "print(issubclass(B\u0387, torch.Tensor), B\u0387.x)\n", None),
    "nfkc-in-f-string": ("from pkg.params import Base\np = Base(1)\nprint(f'{\uff22ase.x}')  # Base\n", None),
    "leftover-nfkc-comment": ("from pkg.params import Base\n# fixed \u2026 later\nreg(Base, '\ufb01')\n",
                              "same"),
    "leftover-two-in-called-object": ("from pkg.params import Base, Packed\nx = f(reg(Base)).m(reg(Packed))\n", "same"),
    "leftover-line-separator": ("from pkg.params import Base\nx = '\u2028'; reg(Base)\n", "same"),
    "leftover-nel": ("from pkg.params import Base\nx = '\u00e9\x85'\nreg(Base)\n", "same"),
    "form-feed-indent": ("from pkg.params import Base\n\x0cx = type(p.w[0]) in (Base, int)\n", None),
    "nfkc-alias": ("from pkg.params import Base as \ufb01x\nreg(\ufb01x)\n", None),
    "compile-rejects": ("from pkg.params import Base\nx = type(p.w[0]) in (Base, int)\nreturn 1\n", None),
    "type-is": ("from pkg.params import Base\ndef f(p):\n    return type(p) is Base\n", "same"),
    "type-is-swapped": ("from pkg.params import Base\ndef f(p):\n    return Base != p.__class__\n", "same"),
    "type-in-tuple": ("from pkg.params import Base, Packed\n"
                      "def f(p):\n    return type(p) in (Base, Packed)\n", "same"),
    "type-in-mixed-simple": ("from pkg.params import Base\ndef f(p):\n    return type(p) in (Base, int)\n", "same"),
    "leftover-class-style-type-in-mixed": ("from pkg.params import Base\n"
                               "def f(p):\n    return type(p.w[0]) in (Base, int)\n", "same"),
    "type-in-bare-name": ("from pkg.params import Base\ndef f(p):\n    return type(p) in Base\n", "same"),
    "type-eq-tuple": ("from pkg.params import Base\ndef f(p):\n    return type(p) == (Base, int)\n", None),
    "type-rebound": ("from pkg.params import Base\nfrom mylib import type\n"
                     "def f(p):\n    return type(p) is Base\n", None),
    "type-chained": ("from pkg.params import Base\ndef f(p, q):\n    return type(p) is Base is type(q)\n", None),
    "leftover-membership-value": ("from pkg.params import Base\ndef f(k):\n    return k in (Base, 1)\n", "same"),
    "unbound-method": ("from pkg.params import Base\ndef f(p, w):\n    Base.load(p, w)\n", "same"),
    "local-variable": ("from pkg.params import Base\ndef f(d):\n    cls = Base\n    return cls(d)\n", "same"),
    "local-variable-compared": ("from pkg.params import Base, Packed\n"
                                "def f(d, k):\n    cls: type = Base\n    if cls is k:\n        return cls(d)\n", "same"),
    "table-in-function": ("from pkg.params import Base\ndef f(d):\n    t = {'b': Base}\n    return t['b'](d)\n", "same"),
    "table-rebound": ("from pkg.params import Base\ndef f(d, k):\n    t = {'b': Base}\n"
                      "    if k in t:\n        c = t[k]\n        return c(d)\n", "same"),
    "leftover-local-returned": ("from pkg.params import Base\ndef f(d):\n    cls = Base\n    return cls\n", "same"),
    "leftover-local-member": ("from pkg.params import Base\ndef f(p, w):\n    cls = Base\n    cls.load(p, w)\n", "same"),
    "leftover-local-keyword": ("from pkg.params import Base\ndef f(d):\n    cls = Base\n    g(cls=1)\n    return cls(d)\n", "same"),
    "leftover-local-attribute-name": ("from pkg.params import Base\ndef f(self, d):\n    cls = Base\n"
                                      "    self.cls = 1\n    return cls(d)\n", "same"),
    "leftover-local-loop": ("from pkg.params import Base\ndef f(d):\n    cls = Base\n"
                            "    for cls in d:\n        pass\n", "same"),
    "leftover-local-nested-param": ("from pkg.params import Base\ndef f(d):\n    cls = Base\n"
                                    "    g = lambda cls: 1\n    return cls(d)\n", "same"),
    "rebinding-chain": ("from pkg.params import Base\ndef f(x):\n    a = Base\n    b = a\n    c = b\n"
                        "    return c(x)\n", "same"),
    "leftover-rebinding-too-deep": ("from pkg.params import Base\ndef f(x):\n    a = Base\n    b = a\n"
                                    "    c = b\n    d = c\n    e = d\n    return e(x)\n", "same"),
    "leftover-two-targets": ("from pkg.params import Base\ndef f(d):\n    a = b = Base\n    return a(d)\n", "same"),
    "leftover-table-in-function-passed": ("from pkg.params import Base\ndef f(d):\n    t = {'b': Base}\n    g(t)\n", "same"),
    "subclass": ("from pkg.params import Base\nclass Mine(Base):\n    pass\n", "same"),
    "global": ("from pkg.params import Base\ndef f():\n    global Base\n", None),
    "assigned": ("from pkg.params import Base\nBase = None\n", None),
    "starred": ("from pkg.params import Base\nreg(*[Base])\n", None),
    "nested-tuple": ("from pkg.params import Base\ndef f(p):\n    return isinstance(p, (int, (Base,)))\n", None),
    "isinstance-rebound": ("from pkg.params import Base\nfrom mylib import isinstance\n"
                           "def f(p):\n    return isinstance(p, Base)\n", None),
    "isinstance-keyword": ("from pkg.params import Base\ndef f(p):\n    return isinstance(p, Base, x=1)\n", None),
    "annotation-attribute": ("from pkg.params import Base\ndef f(p: Base.Sub): ...\n", None),
    "ambiguous-import": ("from pkg.params import Base\ntry:\n    from other import Base\n"
                         "except ImportError:\n    pass\nreg(Base)\n", None),
    "f-string": ("from pkg.params import Base\nx = f'{Base}'\n", None),
}


@pytest.mark.parametrize("allow_value_uses", [False, True], ids=["strict", "allow-value-uses"])
@pytest.mark.parametrize("case", sorted(USES))
def test_each_position(tmp_path, case, allow_value_uses):
    body, want = USES[case]
    root = write_tree(tmp_path / "src", {"pkg/params.py": PARAMS, "pkg/use.py": body}) / "pkg"
    result, plan = _plan(root, allow_value_uses)
    path = root / "use.py"
    text = result.sources[path].text
    screened = screen_leftovers(path, text, plan, rewrite_reach.class_spellings(plan))
    if want is None:
        assert screened is None
        return
    _, expected = _both(result, plan, path)
    assert screened == expected
    if case.startswith("leftover") and not allow_value_uses:
        assert screened  # the case is about a leftover: it must be found
    if allow_value_uses and "class-style" not in case:
        assert screened == []  # value uses are accepted
    if "class-style" in case:
        assert screened  # a use that needs a class: a leftover even with allow-value-uses


def test_screen_refuses_what_cpython_cannot_parse(tmp_path):
    root = write_tree(tmp_path / "src", {"pkg/params.py": PARAMS,
                                        "pkg/use.py": "from pkg.params import Base\nreg(Base\n"}) / "pkg"
    result, plan = _plan(root, False)
    path = root / "use.py"
    assert screen_leftovers(path, result.sources[path].text, plan, rewrite_reach.class_spellings(plan)) is None


def _libcst_both_ways(result: api.RunResult, plan: Plan, path: Path):
    """``unconverted_uses`` over the whole module, and restricted to the statements that
    mention a name (with metadata computed per statement)."""
    from libcst.codemod import CodemodContext

    from codemod.transforms.refs import FileRefs
    from codemod.transforms.use_scanner import unconverted_uses
    from codemod.transforms.use_sites import UseSiteTransformer

    text = result.sources[path].text
    ff = reading.parse_facts(path, text)[0]
    assert ff is not None
    uses = UseSiteTransformer(ff, plan, FileRefs(ff, plan, CodemodContext()))
    ff.module.visit(uses)
    restricted = unconverted_uses(ff, plan, uses.handled, rewrite_reach.class_spellings(plan))
    whole = unconverted_uses(ff, plan, uses.handled)
    return restricted, whole


@pytest.mark.parametrize("root", FIXTURE_TREES, ids=lambda p: p.parent.name if p.name == "input" else p.name)
def test_restricted_libcst_scan_equals_whole_module_scan(root):
    result, plan = _plan(root, False)
    for path in plan_rounds.rewrite_candidates(plan, result):
        restricted, whole = _libcst_both_ways(result, plan, path)
        assert restricted == whole, path


@pytest.mark.parametrize("case", sorted(c for c in USES if c.startswith("leftover")))
def test_restricted_libcst_scan_positions(tmp_path, case):
    """Lines and columns computed per statement equal the whole module's, with a module
    header, blank lines, comments and other statements before the use."""
    body = "# header comment\n\n'''doc\nstring'''\nimport os\n\n\ndef g():\n    return 1\n# c\n" + USES[case][0]
    root = write_tree(tmp_path / "src", {"pkg/params.py": PARAMS, "pkg/use.py": body}) / "pkg"
    result, plan = _plan(root, False)
    restricted, whole = _libcst_both_ways(result, plan, root / "use.py")
    assert restricted == whole and whole
