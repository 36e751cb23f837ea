"""Comparisons of what the original and the converted code produced.

Tensors compare bit for bit (same dtype, shape and bytes); parameters by their data,
``requires_grad`` and the attributes the original had; exceptions by type and message (the
message with memory addresses blanked). Each function returns the differences it found as
short sentences, an empty list when the two agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
#: ``Name.method() got ...``: Python names the called function in a call's ``TypeError``;
#: a method that became a function has another name, so the name is not compared.
_CALLED = re.compile(r"^[\w.<>]+\(\)(?= (?:got|missing|takes))")


@dataclass
class Counter:
    """Tensors compared so far (the table's "tensors" column)."""

    tensors: int = 0


def same_tensor(old: torch.Tensor, new: torch.Tensor, what: str, counter: Counter) -> list[str]:
    """Bit-for-bit equality of two tensors."""
    counter.tensors += 1
    if old.dtype != new.dtype:
        return [f"{what}: dtype {old.dtype} vs {new.dtype}"]
    if old.shape != new.shape:
        return [f"{what}: shape {tuple(old.shape)} vs {tuple(new.shape)}"]
    old_d, new_d = old.detach(), new.detach()
    try:
        equal = torch.equal(old_d.contiguous().reshape(-1).view(torch.uint8),
                            new_d.contiguous().reshape(-1).view(torch.uint8))
    except RuntimeError:
        equal = torch.equal(old_d, new_d)
    return [] if equal else [f"{what}: values differ"]


def same_value(old: Any, new: Any, what: str, counter: Counter, depth: int = 0) -> list[str]:
    """Equality of two results: tensors bit for bit, containers item by item, callables
    as callables, anything else with ``==``."""
    if isinstance(old, torch.Tensor) or isinstance(new, torch.Tensor):
        if not (isinstance(old, torch.Tensor) and isinstance(new, torch.Tensor)):
            return [f"{what}: {type(old).__name__} vs {type(new).__name__}"]
        return same_tensor(old, new, what, counter)
    if depth > 4:
        return []
    if isinstance(old, (tuple, list)) and isinstance(new, (tuple, list)):
        if len(old) != len(new):
            return [f"{what}: {len(old)} items vs {len(new)}"]
        return [diff for i, (a, b) in enumerate(zip(old, new))
                for diff in same_value(a, b, f"{what}[{i}]", counter, depth + 1)]
    if isinstance(old, dict) and isinstance(new, dict):
        if set(old) != set(new):
            return [f"{what}: keys {sorted(map(str, old))} vs {sorted(map(str, new))}"]
        return [diff for key in old
                for diff in same_value(old[key], new[key], f"{what}[{key!r}]", counter, depth + 1)]
    if callable(old) or callable(new):
        if callable(old) and callable(new):
            return []
        return [f"{what}: {_short(old)} vs {_short(new)}"]
    try:
        equal = bool(old == new)
    except Exception:  # noqa: BLE001 - incomparable objects are compared by type
        equal = type(old) is type(new)
    return [] if equal else [f"{what}: {_short(old)} vs {_short(new)}"]


def _short(value: Any) -> str:
    text = _ADDRESS.sub("0x…", repr(value))
    return text if len(text) <= 80 else text[:77] + "..."


def exception_text(exc: BaseException) -> str:
    """``Type: message`` with memory addresses blanked (and the called function's name in
    a ``TypeError`` about its arguments)."""
    message = _ADDRESS.sub("0x…", str(exc))
    if isinstance(exc, TypeError):
        message = _CALLED.sub("<function>()", message)
    return f"{type(exc).__name__}: {message}"


def same_outcome(old: tuple[Any, BaseException | None], new: tuple[Any, BaseException | None],
                 what: str, counter: Counter) -> list[str]:
    """Both raised the same exception, or both returned equal values."""
    (old_value, old_exc), (new_value, new_exc) = old, new
    if old_exc is not None or new_exc is not None:
        if old_exc is None or new_exc is None:
            got = exception_text(new_exc) if new_exc else "no exception"
            expected = exception_text(old_exc) if old_exc else "no exception"
            return [f"{what}: original {expected}; converted {got}"]
        if exception_text(old_exc) != exception_text(new_exc):
            return [f"{what}: original {exception_text(old_exc)}; "
                    f"converted {exception_text(new_exc)}"]
        return []
    return same_value(old_value, new_value, what, counter)
