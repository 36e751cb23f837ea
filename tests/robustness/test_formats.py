"""Files meant to change keep their format: encoding, BOM, line endings, tabs, coding
cookie, trailing newline (docs/ARCHITECTURE.md, "Files, output and exit codes"), and still compile and import.

Each variant renders the same two modules (a hierarchy and a use site) in one format;
``apply`` must convert them exactly as it converts the plain UTF-8 variant (same AST)
while every byte-level property of the input survives, and a second ``apply`` must
change nothing.
"""

from __future__ import annotations

import ast
import codecs
import io
import sys
import tokenize
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from codemod.fileio import newline_style, read_source

from .trees import HIERARCHY, USE_SITE, base_tree, changed, run_main, snapshot


def _tabs(text: str) -> str:
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        out.append("\t" * ((len(line) - len(stripped)) // 4) + stripped)
    return "".join(out)


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def _cr(text: str) -> str:
    return text.replace("\n", "\r")


def _utf8(text: str) -> bytes:
    return text.encode()


#: name -> how to render a module's text as bytes
VARIANTS: dict[str, Callable[[str], bytes]] = {
    "plain": _utf8,
    "crlf": lambda t: _utf8(_crlf(t)),
    "cr-only": lambda t: _utf8(_cr(t)),
    "bom": lambda t: codecs.BOM_UTF8 + _utf8(t),
    "tabs": lambda t: _utf8(_tabs(t)),
    "tabs-crlf": lambda t: _utf8(_crlf(_tabs(t))),
    "latin1-cookie": lambda t: ("# -*- coding: latin-1 -*-\n" + t).encode("latin-1"),
    "cp1252-cookie-line2-crlf": lambda t: _crlf(
        "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n# \u20ac\n" + t
    ).encode("cp1252"),
    "no-trailing-newline": lambda t: _utf8(t.rstrip("\n")),
    "bom-crlf-no-trailing-newline": lambda t: codecs.BOM_UTF8 + _utf8(_crlf(t.rstrip("\n"))),
    "utf8-cookie-tabs-no-trailing-newline": lambda t: _utf8(
        "# coding: utf-8\n" + _tabs(t).rstrip("\n")
    ),
}


@pytest.fixture(scope="module")
def plain_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The converted text of the plain variant, per module: what every variant must equal."""
    root = tmp_path_factory.mktemp("plain")
    tree = base_tree(root)
    from codemod.cli import main

    assert main(["apply", str(tree)]) == 1
    return {name: (tree / "pkg" / f"{name}.py").read_text() for name in ("params", "use")}


def _indents(text: str) -> set[str]:
    return {
        tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.INDENT
    }


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_format_survives_apply(
    variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    plain_output: dict[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    render = VARIANTS[variant]
    tree = base_tree(tmp_path, params=render(HIERARCHY), use=render(USE_SITE))
    originals = {name: read_source(tree / "pkg" / f"{name}.py") for name in ("params", "use")}
    before = snapshot(tmp_path)

    code, out, err = run_main(["apply", "--dry-run", "tree"], tmp_path, capsys)
    assert (code, changed(before, snapshot(tmp_path))) == (1, set()), err

    code, out, err = run_main(["apply", "tree"], tmp_path, capsys)
    assert code == 1, err
    assert "error" not in err
    assert changed(before, snapshot(tmp_path)) == {"tree/pkg/params.py", "tree/pkg/use.py",
                                                     "tree/pkg/params_features.py"}

    for name, old in originals.items():
        path = tree / "pkg" / f"{name}.py"
        raw = path.read_bytes()
        new = read_source(path)  # decodes with the cookie/BOM it finds
        assert (new.encoding, new.bom) == (old.encoding, old.bom), name
        old_head = old.text.splitlines(keepends=True)[:2]
        cookie_lines = [line for line in old_head if line.startswith("#")]
        assert new.text.startswith("".join(cookie_lines)), f"{name}: cookie/shebang lines kept"
        assert newline_style(new.text) == newline_style(old.text), f"{name}: line endings"
        assert new.text.endswith(("\n", "\r")) == old.text.endswith(("\n", "\r")), name
        if "tabs" in variant:
            assert all(set(i) == {"\t"} for i in _indents(new.text)), f"{name}: tab indents"
        compile(raw, str(path), "exec", dont_inherit=True)
        # Same program as the plain variant's output (comments and layout aside).
        assert ast.dump(ast.parse(new.text)) == ast.dump(ast.parse(plain_output[name])), name

    # Idempotent: a second run finds nothing to do and writes nothing.
    after_first = snapshot(tmp_path)
    code, _, err = run_main(["apply", "tree"], tmp_path, capsys)
    assert code == 0, err
    assert changed(after_first, snapshot(tmp_path)) == set()

    _imports_and_behaves(tree, monkeypatch)


def _imports_and_behaves(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the converted modules: the factory builds a plain Parameter with the old
    attributes and methods, and the rewritten ``isinstance`` still tells kinds apart."""
    try:
        import torch
    except ImportError:  # the CLI-only environment: compiling was checked above
        return
    package = types.ModuleType("pkg")
    package.__path__ = [str(tree / "pkg")]
    monkeypatch.setitem(sys.modules, "pkg", package)
    modules = {}
    for name in ("params", "use"):
        path = tree / "pkg" / f"{name}.py"
        module = types.ModuleType(f"pkg.{name}")
        module.__file__ = str(path)
        monkeypatch.setitem(sys.modules, f"pkg.{name}", module)
        exec(compile(path.read_bytes(), str(path), "exec", dont_inherit=True), module.__dict__)
        modules[name] = module

    params, use = modules["params"], modules["use"]
    p = params.SplitParam(torch.zeros(4, 2), dim=0, loader="L")
    assert type(p) is torch.nn.Parameter
    assert (p.loader, p._dim, p.requires_grad) == ("L", 0, False)
    p.load(torch.arange(16.0).reshape(8, 2))
    assert torch.equal(p.data, torch.arange(8.0).reshape(4, 2))
    assert use.is_base(p) is True
    assert use.is_base(torch.nn.Parameter(torch.zeros(1))) is False
