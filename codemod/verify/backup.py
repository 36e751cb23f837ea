"""``codemod apply --verify``: keep the files ``apply`` rewrites, verify, restore on failure.

Before writing, ``ApplyBackup.save`` copies every file about to be rewritten into a
temporary directory (and remembers the files ``apply`` adds, the runtime modules). After
writing, ``verify_and_restore`` rebuilds the original package beside it (a copy of the
package with the saved files put back and the added ones left out), runs ``verify`` on
the pair, and when it finds a difference writes the saved files back and deletes the
added ones, so the tree is exactly as before the run. When verification is impossible
(torch missing, nothing buildable) the converted files stay and the reason is printed.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from codemod.verify.model import EXIT_DIFFERENT, EXIT_SAME, VerifyResult


def top_package(path: Path) -> Path:
    """The highest directory above ``path`` that holds ``__init__.py``, or its own."""
    directory = path.parent
    while (directory.parent / "__init__.py").is_file():
        directory = directory.parent
    return directory


@dataclass
class ApplyBackup:
    """The rewritten files' original bytes (in ``directory``) and the added files."""

    directory: Path
    saved: dict[Path, Path] = field(default_factory=dict)
    added: list[Path] = field(default_factory=list)

    @classmethod
    def save(cls, rewritten: list[Path], added: list[Path]) -> ApplyBackup:
        backup = cls(Path(tempfile.mkdtemp(prefix="codemod-verify-")), added=list(added))
        for index, path in enumerate(rewritten):
            copy = backup.directory / "saved" / f"{index}-{path.name}"
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, copy)
            backup.saved[path] = copy
        return backup

    def original_tree(self, package: Path) -> Path:
        """A copy of ``package`` as it was before ``apply`` wrote."""
        original = self.directory / "original" / package.name
        shutil.copytree(package, original, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for path, copy in self.saved.items():
            if path.is_relative_to(package):
                shutil.copy2(copy, original / path.relative_to(package))
        for path in self.added:
            if path.is_relative_to(package):
                (original / path.relative_to(package)).unlink(missing_ok=True)
        return original

    def restore(self) -> None:
        """Put every saved file back and delete the added ones."""
        for path, copy in self.saved.items():
            shutil.copy2(copy, path)
        for path in self.added:
            path.unlink(missing_ok=True)

    def verify_and_restore(self) -> tuple[int, VerifyResult | None]:
        """Verify what was written; restore the originals on a difference. The exit code
        of ``verify`` (0 same, 1 different and restored, 2 not verifiable) and its result
        (None when torch is missing)."""
        from codemod.verify.command import run_verify

        try:
            touched = [*self.saved, *self.added]
            package = top_package(self.added[0] if self.added else touched[0])
            original = self.original_tree(package)
            code, result = run_verify(original, package, output=sys.stderr)
            if code == EXIT_DIFFERENT:
                self.restore()
                print(f"codemod apply --verify: differences found; the {len(self.saved)} "
                      f"rewritten file(s) were restored and the {len(self.added)} added "
                      "file(s) removed", file=sys.stderr)
            elif code != EXIT_SAME:
                print("codemod apply --verify: could not verify; the converted files stay "
                      "(run `codemod verify ORIGINAL CONVERTED` on a copy)", file=sys.stderr)
            return code, result
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
