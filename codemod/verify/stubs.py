"""Stand-ins for the parts of an engine the verifier does not import.

A *stub module* answers every attribute with a permissive stand-in: a class that can be
called (a single callable argument comes back unchanged, so decorators and wrappers such
as ``_make_synced_weight_loader(loader)`` pass their function through), subclassed,
subscripted, used as a context manager, iterated (empty) and tested (false, like an unset
flag). Names that
look like tensor-parallel rank or size getters (``get_tensor_model_parallel_rank``,
``get_tensor_model_parallel_world_size``, ``get_tp_rank``...) answer the position the
verifier drives (``TensorParallel``), so loaders shard as on that rank.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: ``..._rank`` / ``..._world_size`` / ``..._size`` getters of a tensor-parallel group.
_TP_GETTER = re.compile(
    r"(?:tensor_model_parallel|tensor_parallel|(?:^|_)tp)_(?P<what>rank|world_size|size)$"
)


@dataclass
class TensorParallel:
    """The simulated tensor-parallel position both trees' stubs answer."""

    rank: int = 0
    size: int = 1


def tp_getter_kind(name: str) -> str | None:
    """``"rank"`` or ``"size"`` when ``name`` looks like a tensor-parallel getter."""
    match = _TP_GETTER.search(name.lower())
    if match is None:
        return None
    return "rank" if match.group("what") == "rank" else "size"


def tp_getter(kind: str, position: TensorParallel) -> Callable[..., int]:
    """A getter answering ``position``'s rank or size, whatever it is called with."""

    def getter(*args: object, **kwargs: object) -> int:
        return position.rank if kind == "rank" else position.size

    getter.__name__ = f"verify_tp_{kind}"
    return getter


class _StandInType(type):
    """Metaclass of stand-ins: missing class attributes are stand-ins too."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return stand_in(name, cls.__dict__.get("_verify_position"))

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls.__dict__.get("_verify_stand_in") and len(args) == 1 and not kwargs \
                and callable(args[0]):
            return args[0]
        return super().__call__(*args, **kwargs)

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __or__(cls, other: Any) -> Any:
        return cls

    def __ror__(cls, other: Any) -> Any:
        return cls

    def __bool__(cls) -> bool:
        # ``if envs.SOME_FLAG:`` on a stub: an unset flag; a subclass is an ordinary class.
        return not cls.__dict__.get("_verify_stand_in")


class StandIn(metaclass=_StandInType):
    """An instance of a stand-in: every attribute, call and item is a stand-in."""

    _verify_position: TensorParallel | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return stand_in(name, type(self).__dict__.get("_verify_position"))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return StandIn()

    def __getitem__(self, item: Any) -> Any:
        return StandIn()

    def __iter__(self) -> Any:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return False

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None


def stand_in(name: str, position: TensorParallel | None) -> Any:
    """The stand-in for attribute ``name``: a driven tp getter, or a new stand-in class."""
    kind = tp_getter_kind(name)
    if kind is not None and position is not None:
        return tp_getter(kind, position)
    return _StandInType(name, (StandIn,), {"_verify_stand_in": True,
                                            "_verify_position": position,
                                            "__module__": "codemod.verify.stubs"})


def stub_module(name: str, directory: Path | None, position: TensorParallel) -> types.ModuleType:
    """A module ``name`` whose every attribute is a stand-in; a package over ``directory``
    when given (its submodules that exist there are imported, not stood in for)."""
    module = types.ModuleType(name, "Stub made by codemod verify.")
    module.__dict__["__verify_stub__"] = True
    if directory is not None:
        module.__path__ = [str(directory)]

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        if directory is not None and (
                (directory / f"{attr}.py").is_file() or (directory / attr).is_dir()):
            raise AttributeError(attr)  # a submodule: the import system loads it
        value = stand_in(attr, position)
        setattr(module, attr, value)
        return value

    module.__dict__["__getattr__"] = __getattr__
    return module
