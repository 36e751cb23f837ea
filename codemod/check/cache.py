"""``codemod check``'s result cache: an unchanged tree answers without being parsed.

Like ruff's cache, it lives in ``.codemod_cache/`` in the project root (the directory of
the ``pyproject.toml`` that configures the run, else the working directory), or where
``--cache-dir`` (or ``CODEMOD_CACHE_DIR``) says; ``--no-cache`` (or
``CODEMOD_NO_CACHE=1``) neither reads nor writes it.

One entry per invocation (the paths as given, the working directory, the options that
change findings, the version of this tool's code), holding the whole result of the last
run together with the content hash of every file the run read. The entry answers only
when every one of those files has the same bytes, the same set of files is found, and
nothing else in the key changed: the answer is then the one a fresh run gives, since a
check reads nothing but those files and its options. A cache that cannot be read, is
corrupt or comes from another version is ignored (and overwritten); one that cannot be
written is skipped silently: the cache only ever saves time.

This module imports neither LibCST nor the engine, so that a hit costs the walk, the
hashing of the files and the start of Python.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from codemod.analysis import roots
from codemod.check.result import CheckResult
from codemod.check.rules import Finding
from codemod.discovery import DiscoveryError, iter_python_files
from codemod.scope import scope_of
from codemod.types import Options

#: The directory name ``check`` writes its cache under, in the project root.
CACHE_DIR_NAME = ".codemod_cache"
#: Environment variables: where the cache lives, and "1" to turn it off.
CACHE_DIR_ENV = "CODEMOD_CACHE_DIR"
NO_CACHE_ENV = "CODEMOD_NO_CACHE"
#: Bumped when an entry's layout changes: older entries are then ignored.
_FORMAT = 2
_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def default_cache_dir(first_path: Path | None) -> Path:
    """Where the cache lives by default: ``.codemod_cache`` beside the ``pyproject.toml``
    that applies to ``first_path`` (as for the configuration), else in the working
    directory."""
    from codemod.config import find_pyproject

    pyproject = find_pyproject(first_path) if first_path is not None else None
    root = pyproject.parent if pyproject is not None else Path.cwd()
    return root / CACHE_DIR_NAME


#: A file whose modification time is this close to the moment its entry was written may
#: have changed within the same clock tick: its contents are hashed again, never trusted
#: from its ``stat`` (git's "racily clean" rule).
_RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class TreeState:
    """What a check of ``paths`` reads, fingerprinted: the invocation that names the
    entry, and each file the run reads with its ``stat`` signature."""

    #: Names the entry: the invocation (paths, directory, options, code version).
    invocation: str
    #: Symbolic links to directories outside the tree (the check reports them).
    links_out: tuple[str, ...]
    #: The project markers and ``__init__.py`` files that bound the tree's packages
    #: (``_bounds``), and the second paths of files reached through symlinks: adding or
    #: removing one changes module names, so findings.
    bounds: tuple[str, ...]
    #: Each file the run reads (sorted, as the engine spells it) and its size,
    #: modification and change times and inode (None: it cannot be stat'ed).
    files: tuple[tuple[str, tuple[int, int, int, int] | None], ...]

    def content_hash(self, path: str) -> str:
        """The hash of ``path``'s bytes now (of the error, when it cannot be read)."""
        try:
            with open(path, "rb") as handle:
                return hashlib.blake2b(handle.read(), digest_size=20).hexdigest()
        except OSError as exc:
            return f"error {exc.errno}"

    def digests(self) -> list[str]:
        """``content_hash`` of every file, in order."""
        return [self.content_hash(path) for path, _ in self.files]


def tree_state(paths: list[Path], options: Options) -> TreeState | None:
    """Fingerprint the tree as a check of ``paths`` with ``options`` would read it (None
    when it cannot be: a path that does not exist, a directory that cannot be listed;
    the check itself then reports the error)."""
    try:
        scope = scope_of(paths, options.src)
        with roots.using(scope.roots):
            links_out: list[str] = []
            aliases: dict[str, str] = {}
            found = iter_python_files(list(scope.walk), options.excludes,
                                      options.extend_excludes, links_out, aliases)
            # Sorted as strings (cheaper than paths; any fixed order does).
            files = sorted(os.fspath(scope.spelled(path)) for path in found)
            bounds = _bounds({os.path.dirname(roots.absolute(path)) for path in found}
                             | {roots.absolute(path) for path in scope.walk})
            # A second path of a file (a symlink inside the tree) gives its module a second
            # name, which changes what an import through it refuses.
            bounds += tuple(sorted(f"{other} -> {kept}" for other, kept in aliases.items()))
    except (DiscoveryError, OSError):
        return None
    invocation = _digest([
        "codemod check", str(_FORMAT), _code_version(), _parsers_version(), os.getcwd(),
        roots.working_directory(),
        repr([os.fspath(p) for p in paths]), repr(scope.walk), repr(scope.focus),
        repr(scope.relative), repr(_finding_options(options)),
    ])
    return TreeState(invocation, tuple(sorted(links_out)), bounds,
                     tuple((path, _signature(path)) for path in files))


#: What, in a directory, decides where packages and projects end (``roots``).
_BOUND_NAMES = (*roots.PROJECT_MARKERS, "__init__.py")


def _bounds(directories: Iterable[str]) -> tuple[str, ...]:
    """The paths of the project markers and ``__init__.py`` files in each of
    ``directories`` and in every directory above it up to the first holding a project
    marker (or the file system's root): what ``roots`` reads to name modules and to bound
    symlinked directories, for directories the file walk does not see (a ``setup.cfg``
    among the files, an ``__init__.py`` above the tree)."""
    seen: set[str] = set()
    found: list[str] = []
    for directory in directories:
        current = directory
        while current not in seen:
            seen.add(current)
            present = [name for name in _BOUND_NAMES if os.path.exists(os.path.join(current, name))]
            found.extend(os.path.join(current, name) for name in present)
            parent = os.path.dirname(current)
            if parent == current or any(name in roots.PROJECT_MARKERS for name in present):
                break
            current = parent
    return tuple(sorted(found))


def _signature(path: str) -> tuple[int, int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


def _finding_options(options: Options) -> tuple[object, ...]:
    """The options that can change what a check finds (not ``jobs``: the same findings
    come out of any number of processes)."""
    return (options.excludes, options.extend_excludes, options.allow_classes,
            options.allow_value_uses, options.feature_prefix,
            tuple(os.fspath(p) for p in options.src))


def _code_version() -> str:
    """This tool's code as installed: a hash of every module's path and bytes (a changed
    module, or another version, makes every entry stale; a reinstall of the same code,
    as in a fresh CI job, does not)."""
    digest = hashlib.blake2b(digest_size=20)
    for directory, dirnames, filenames in os.walk(_PACKAGE_DIR):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                digest.update(os.path.relpath(path, _PACKAGE_DIR).encode() + b"\0")
                with open(path, "rb") as handle:
                    digest.update(hashlib.blake2b(handle.read(), digest_size=20).digest())
    return digest.hexdigest()


def _parsers_version() -> str:
    """The interpreter (its ``ast`` decides what parses) and LibCST's version, read from
    its ``_version.py`` without importing it."""
    spec = importlib.util.find_spec("libcst")
    libcst = "none"
    if spec is not None and spec.origin:
        version_file = os.path.join(os.path.dirname(spec.origin), "_version.py")
        try:
            with open(version_file, "rb") as handle:
                libcst = handle.read().decode("utf-8", "replace")
        except OSError:
            libcst = spec.origin
    return f"{sys.version} {sys.implementation.cache_tag} {libcst}"


def _digest(parts: Iterable[str]) -> str:
    digest = hashlib.blake2b(digest_size=32)
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


class CheckCache:
    """The entries under one cache directory (``load``/``store`` never raise)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _entry(self, state: TreeState) -> Path:
        return self.directory / f"check-{state.invocation[:40]}.json"

    def load(self, state: TreeState) -> CheckResult | None:
        """The stored result for ``state`` (None: no entry, another tree's contents, or an
        entry that cannot be read: every such entry is treated as missing).

        A file counts as unchanged when its ``stat`` signature is the stored one and it
        was last modified well before the entry was written; any other file is hashed
        and compared with the stored hash of its contents.
        """
        try:
            data = json.loads(self._entry(state).read_text(encoding="utf-8"))
            if data.get("format") != _FORMAT or data.get("invocation") != state.invocation \
                    or data.get("links_out") != list(state.links_out) \
                    or data.get("bounds") != list(state.bounds):
                return None
            stored = data["files"]
            if not isinstance(stored, list) or len(stored) != len(state.files):
                return None
            trusted_before = int(data["written_ns"]) - _RACY_NS
            for (path, signature), (stored_path, stored_signature, digest) in zip(
                    state.files, stored):
                if path != stored_path:
                    return None
                if signature is not None and stored_signature == list(signature) \
                        and signature[1] < trusted_before:
                    continue
                if state.content_hash(path) != digest:
                    return None
            return _result_from(data["result"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None

    def store(self, state: TreeState, digests: list[str], result: CheckResult) -> None:
        """Write the entry for ``state``, whose files' contents hashed to ``digests``
        (``TreeState.digests``, taken before the engine read them), atomically: a reader
        sees the old entry or the new one. A directory that cannot be written is left
        alone."""
        files = [[path, list(signature) if signature is not None else None, digest]
                 for (path, signature), digest in zip(state.files, digests)]
        data = {"format": _FORMAT, "invocation": state.invocation,
                "links_out": list(state.links_out), "bounds": list(state.bounds),
                "written_ns": time.time_ns(),
                "files": files, "result": _result_to(result)}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Made by codemod check: its cache, not to be committed.\n*\n",
                                  encoding="utf-8")
            fd, temp = tempfile.mkstemp(prefix=".check-", suffix=".tmp", dir=self.directory)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(data, handle)
                os.replace(temp, self._entry(state))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        except OSError:
            return


def _finding_to(finding: Finding) -> dict[str, object]:
    data = asdict(finding)
    data["path"] = os.fspath(finding.path)
    return data


def _finding_from(data: dict[str, object]) -> Finding:
    return Finding(str(data["code"]), str(data["message"]), Path(str(data["path"])),
                   int(data["line"]), int(data["column"]),  # type: ignore[call-overload]
                   bool(data["fixable"]))


def _result_to(result: CheckResult) -> dict[str, object]:
    return {
        "findings": [_finding_to(f) for f in result.findings],
        "suppressed": [_finding_to(f) for f in result.suppressed],
        "errors": list(result.errors), "warnings": list(result.warnings),
        "scanned": result.scanned, "parsed": result.parsed,
        "converted_modules": list(result.converted_modules),
    }


def _result_from(data: dict[str, object]) -> CheckResult:
    def strings(key: str) -> list[str]:
        values = data[key]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValueError(key)
        return list(values)

    def findings(key: str) -> list[Finding]:
        values = data[key]
        if not isinstance(values, list):
            raise ValueError(key)
        return [_finding_from(v) for v in values]

    return CheckResult(
        findings=findings("findings"), suppressed=findings("suppressed"),
        errors=strings("errors"), warnings=strings("warnings"),
        scanned=int(data["scanned"]), parsed=int(data["parsed"]),  # type: ignore[call-overload]
        converted_modules=strings("converted_modules"),
    )
