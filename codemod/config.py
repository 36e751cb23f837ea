"""``[tool.codemod]`` lookup and validation.

The nearest ``pyproject.toml`` above the target is the configuration (as ruff does: the
search stops at the first ``pyproject.toml`` even when it has no ``[tool.codemod]`` table).
Keys are kebab-case. Every error names the file and the key, so a typo is a one-line fix:

    pyproject.toml: [tool.codemod] jobs: expected a positive integer, got 'x'
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """Invalid configuration; the message names the file and, where there is one, the key."""


@dataclass(frozen=True)
class Config:
    """The validated ``[tool.codemod]`` table; ``None`` / empty means "not set".

    ``exclude`` replaces the default excludes when set; ``extend_exclude`` adds to them.
    ``source`` is the ``pyproject.toml`` the values came from, if any.
    """

    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    allow_classes: tuple[str, ...] = ()
    jobs: int | None = None
    feature_prefix: str = ""
    allow_value_uses: bool = False
    #: Import roots (absolute; given relative to the ``pyproject.toml``), as ruff's ``src``.
    src: tuple[Path, ...] = ()
    source: Path | None = None


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` (a file's directory) or above; else None."""
    start = Path(os.path.abspath(start))  # absolute and without "..", so parents are real
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path) -> Config:
    """The configuration that applies to ``start``: ``Config()`` when no pyproject is found.

    Raises ConfigError for unreadable or invalid TOML, a ``[tool.codemod]`` that is not a
    table, an unknown key (with the closest known key suggested), or a value of the wrong
    type.
    """
    path = find_pyproject(start)
    if path is None:
        return Config()
    try:
        document = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 (offset {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)"
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc

    tool = document.get("tool", {})
    table = tool.get("codemod") if isinstance(tool, dict) else None
    if table is None:
        return Config(source=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.codemod]: expected a table, got {table!r}")

    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            known = ", ".join(_KEYS)
            raise ConfigError(
                f"{path}: [tool.codemod] unknown key '{key}'{hint}; known keys: {known}"
            )
        field_name, check = _KEYS[key]
        try:
            values[field_name] = check(value)
        except ValueError as exc:
            raise ConfigError(f"{path}: [tool.codemod] {key}: {exc}") from None
    if "src" in values:
        values["src"] = tuple(Path(os.path.abspath(path.parent / d)) for d in values["src"])
    return replace(Config(source=path), **values)


def _globs(value: object) -> tuple[str, ...]:
    """A list of non-empty glob strings."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"expected a list of non-empty strings, got {value!r}")
    return tuple(value)


def _class_names(value: object) -> tuple[str, ...]:
    """A list of class names, bare (``Foo``) or qualified (``pkg.mod.Foo``; a class
    defined in a function as its ``__qualname__`` spells it: ``pkg.mod.make.<locals>.Foo``)."""
    names = _globs(value)
    for name in names:
        parts = name.split(".")
        if not all(part.isidentifier() or (part == "<locals>" and 0 < i < len(parts) - 1)
                   for i, part in enumerate(parts)):
            raise ValueError(f"expected class names like 'Name' or 'pkg.mod.Name', got {name!r}")
    return names


def _positive_int(value: object) -> int:
    """An integer >= 1 (``true`` is not an integer here, although bool subclasses int)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected a positive integer, got {value!r}")
    return value


def _boolean(value: object) -> bool:
    """A TOML boolean."""
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _prefix(value: object) -> str:
    """Empty, or a string usable at the start of a Python identifier (``Features.<prefix>X``)."""
    if not isinstance(value, str) or (value and not value.isidentifier()):
        raise ValueError(f"expected an identifier prefix (letters, digits, '_'), got {value!r}")
    return value


def _directories(value: object) -> tuple[str, ...]:
    """A list of directories, relative to the ``pyproject.toml`` (made absolute by the caller)."""
    return _globs(value)


#: TOML key -> (Config field, validator returning the field value or raising ValueError).
_KEYS: dict[str, tuple[str, Callable[[object], Any]]] = {
    "exclude": ("exclude", _globs),
    "extend-exclude": ("extend_exclude", _globs),
    "allow-classes": ("allow_classes", _class_names),
    "jobs": ("jobs", _positive_int),
    "feature-prefix": ("feature_prefix", _prefix),
    "allow-value-uses": ("allow_value_uses", _boolean),
    "src": ("src", _directories),
}
