"""A conversion from a skeleton that would emit a replaced body (here: an import edit
gives the statement after the imports a blank line, so LibCST generates it) is done
again from a parse of the whole text: the output is the one the whole parse gives."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from codemod import api
from codemod.pipeline import workers
from codemod.transforms import skeleton
from codemod.types import Options

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "golden" / "use_sites" / "input"

USES = textwrap.dedent("""\
    from pkg import Base
    def helper():
        return 1


    def check(p):
        return isinstance(p, Base)
    """)


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(FIXTURE, root)
    (root / "pkg" / "uses.py").write_text(USES, encoding="utf-8")
    return root


def _run(root: Path) -> dict[str, str | None]:
    result = api.run([root], Options(jobs=1))
    return {str(f.path.relative_to(root)): f.new_text for f in result.changed()}


def _every_body(text: str, words: frozenset[str]) -> str | None:
    """``helper``'s body replaced too: it stands right after the imports."""
    assert "def helper():\n        return 1\n" not in text
    return text.replace("def helper():\n    return 1\n",
                        f'def helper():\n    """{skeleton.MARKER}"""\n')


def test_a_skeleton_whose_replaced_body_would_be_emitted_is_converted_again(tmp_path, monkeypatch):
    expected = _run(_tree(tmp_path / "whole"))
    assert "isinstance(p, Base)" not in (expected["pkg/uses.py"] or "")
    tries: list[bool] = []
    convert = workers._converted

    def counting(ff, text, *args, **kwargs):  # type: ignore[no-untyped-def]
        tries.append(ff.module.code != text)
        return convert(ff, text, *args, **kwargs)

    monkeypatch.setattr(workers, "skeleton_text", _every_body)
    monkeypatch.setattr(workers, "_converted", counting)
    assert _run(_tree(tmp_path / "skeleton")) == expected
    assert True in tries and tries.count(False) >= 1
