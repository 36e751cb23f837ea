"""Helpers for the ``codemod check`` tests: small trees in tmp_path, running the CLI."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from codemod.cli import main

#: ``path:line:col: CODE [*] message`` (``[*]`` optional).
TEXT_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>CM\d{3}) (?P<fix>\[\*\] )?(?P<message>.+)$")


@dataclass
class Run:
    """Exit code and the two streams of one CLI call."""

    rc: int
    out: str
    err: str

    def findings(self) -> list[tuple[str, int, str]]:
        """(relative file name, line, code) of each text finding."""
        found = []
        for line in self.out.splitlines():
            match = TEXT_LINE.match(line)
            assert match, f"not a finding line: {line!r}"
            found.append((Path(match["path"]).name, int(match["line"]), match["code"]))
        return found

    def codes(self) -> list[str]:
        return [code for _, _, code in self.findings()]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> source, dedented) under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> Run:
    """``codemod.cli.main(argv)`` with stdout and stderr captured."""
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return Run(rc, captured.out, captured.err)


#: A two-class hierarchy that ``apply`` converts.
PARAMS = """
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, loader=None):
            self._loader = loader

        @property
        def loader(self):
            return self._loader


    class Packed(Base):
        pass
"""

#: Class-style uses in another module, through an alias, a module import and a re-export.
LAYERS = """
    import pkg.params as pm
    from pkg import Base
    from pkg.params import Packed as P


    def kinds(p):
        return [
            isinstance(p, Base),
            isinstance(p, (P, pm.Base)),
            issubclass(P, Base),
            type(p) is Base,
            type(p) in (Base, P),
            p.__class__ == P,
        ]


    def build(data):
        return P(data=data)
"""

BASE_TREE = {
    "pkg/__init__.py": "from .params import Base, Packed  # re-export\n",
    "pkg/params.py": PARAMS,
    "pkg/layers.py": LAYERS,
}
