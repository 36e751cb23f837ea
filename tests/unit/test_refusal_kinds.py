"""Each refusal carries a ``RefusalKind``; ``apply``'s exit code reads the kind, not the text.

A class listed in ``[tool.codemod] allow-classes`` (ALLOWED), and a class kept because of
it (KEPT, caused by ALLOWED), leave ``apply`` with exit code 0 when nothing else changes;
any other refusal (UNCONVERTIBLE, USE_SITE, KEPT for another cause) gives 1, whatever
words its reason happens to contain.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod import api
from codemod.cli import main
from codemod.planning.plan import Plan
from codemod.types import Options, RefusalKind

PARAMS = '''from torch.nn import Parameter


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader=None):
        self._loader = loader


class Packed(Base):
    pass
'''


def _tree(root: Path, extra: dict[str, str] | None = None) -> Path:
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "params.py").write_text(PARAMS)
    for name, text in (extra or {}).items():
        (package / name).write_text(text)
    return root


def _plan(root: Path, **options: object) -> Plan:
    result = api.run([root], Options(**options))  # type: ignore[arg-type]
    assert result.plan is not None
    return result.plan


def _kinds(plan: Plan) -> dict[str, tuple[RefusalKind, RefusalKind | None] | None]:
    return {p.name: (p.refusal.kind, p.refusal.cause) if p.refusal else None
            for p in plan.classes.values()}


def test_allow_listed_base_and_the_subclass_it_keeps(tmp_path: Path) -> None:
    plan = _plan(_tree(tmp_path), allow_classes=("Base",))
    assert _kinds(plan) == {"Base": (RefusalKind.ALLOWED, None),
                            "Packed": (RefusalKind.KEPT, RefusalKind.ALLOWED)}
    assert all(r.chosen for r in plan.refusals())


def test_use_site_refusal_and_the_base_it_keeps(tmp_path: Path) -> None:
    uses = "from pkg.params import Packed\n\n\ndef kind():\n    return Packed.__mro__\n"
    plan = _plan(_tree(tmp_path, {"uses.py": uses}))
    assert _kinds(plan) == {"Base": (RefusalKind.KEPT, RefusalKind.USE_SITE),
                            "Packed": (RefusalKind.USE_SITE, None)}
    assert not any(r.chosen for r in plan.refusals())


def test_unconvertible_class(tmp_path: Path) -> None:
    odd = "from torch.nn import Parameter\n\n\nclass Odd(Parameter, metaclass=type):\n    pass\n"
    plan = _plan(_tree(tmp_path, {"odd.py": odd}))
    assert _kinds(plan)["Odd"] == (RefusalKind.UNCONVERTIBLE, None)


@pytest.mark.parametrize(("allow", "expected_rc"), [(("Base",), 0), ((), 1)])
def test_exit_code_follows_the_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    allow: tuple[str, ...], expected_rc: int) -> None:
    """A tree under a directory named ``allow-classes``: every refusal's reason names that
    path, and still only an allow-listed class leaves the exit code at 0."""
    uses = "from pkg.params import Base\n\n\ndef kind():\n    return Base.__mro__\n"
    root = _tree(tmp_path / "allow-classes", {"uses.py": uses})
    config = "".join(f'allow-classes = ["{name}"]\n' for name in allow)
    (root / "pyproject.toml").write_text(f"[tool.codemod]\n{config}")
    rc = main(["apply", "--dry-run", str(root)])
    err = capsys.readouterr().err
    assert "allow-classes" in err
    assert rc == expected_rc


@pytest.mark.parametrize("body", [
    "    def __init__(self, data, **kwargs):\n        self._\uff57eight = 1\n",   # a full-width w
    "    \uff30ACK = 4\n",
])
def test_a_name_python_reads_otherwise_refuses(tmp_path: Path, body: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """CPython reads ``self._ｗeight`` as ``self._weight``; the conversion names fields and
    members in strings, which keep the spelling: one attribute stored, another read."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(
        "from torch.nn import Parameter\n\n\nclass Kind(Parameter):\n"
        "    def __new__(cls, data, **kwargs):\n"
        "        return super().__new__(cls, data=data, requires_grad=False)\n\n" + body,
        encoding="utf-8")
    main(["apply", str(tmp_path)])
    assert "class Kind(Parameter):" in (pkg / "params.py").read_text(encoding="utf-8")
    assert "which Python reads as" in capsys.readouterr().err
