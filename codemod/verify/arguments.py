"""Argument values for constructions and method calls, small and the same for both trees.

A harvested argument expression becomes a *spec*: a tensor built by a ``torch`` factory
keeps its rank and dtype, with each dimension shrunk (a literal up to 16 is kept, anything
else becomes 8); a literal stays; any other expression gets a value chosen by its keyword
(``*_dim`` an int dimension, ``*loader*`` the verifier's copying loader, ``data`` a
tensor). ``materialize`` turns a spec into a fresh value, the same on each call, so that
the original and converted parameters start from identical tensors.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Any

import torch

from codemod.verify.sites import CallSite

_TENSOR_FACTORIES = {"empty", "zeros", "ones", "randn", "rand", "full", "empty_strided",
                     "randint", "tensor", "as_tensor"}
DEFAULT_DIM = 8
MAX_KEPT_DIM = 16


def copy_weight(param: torch.Tensor, loaded_weight: torch.Tensor) -> None:
    """The weight loader the verifier gives every parameter: copies, as vLLM's default
    loader does. Module level, so it pickles by reference and is one object on both sides."""
    param.data.copy_(loaded_weight)


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: str
    literal: Any = None


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Loader:
    pass


Spec = TensorSpec | Literal | Loader


def tensor_of(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    """A deterministic tensor of ``shape`` and ``dtype`` (the same for the same seed)."""
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(shape, generator=generator).to(dtype)
    try:
        return torch.randint(0, 7, shape, generator=generator, dtype=dtype)
    except (RuntimeError, TypeError):
        return torch.zeros(shape).to(dtype)


def materialize(spec: Spec, seed: int) -> Any:
    """A fresh value for ``spec``."""
    if isinstance(spec, Loader):
        return copy_weight
    if isinstance(spec, Literal):
        return spec.value
    dtype = getattr(torch, spec.dtype, torch.float32)
    if spec.literal is not None:
        return torch.tensor(spec.literal, dtype=dtype)
    return tensor_of(spec.shape, dtype, seed)


def _dim(node: ast.expr) -> int:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return DEFAULT_DIM
    return value if isinstance(value, int) and 0 < value <= MAX_KEPT_DIM else DEFAULT_DIM


def _dtype(call: ast.Call) -> str:
    for keyword in call.keywords:
        if keyword.arg == "dtype" and isinstance(keyword.value, ast.Attribute) \
                and isinstance(getattr(torch, keyword.value.attr, None), torch.dtype):
            return keyword.value.attr
    return "float32"


def _tensor_spec(call: ast.Call) -> TensorSpec | None:
    """The spec of a ``torch.<factory>(...)`` call, or None if it is not one."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in _TENSOR_FACTORIES:
        return None
    dtype = _dtype(call)
    if name in ("tensor", "as_tensor"):
        try:
            return TensorSpec((), dtype, ast.literal_eval(call.args[0])) if call.args else None
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return TensorSpec((DEFAULT_DIM,), dtype)
    args = call.args[:1] if name == "full" else call.args[-1:] if name == "randint" else call.args
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        dims = args[0].elts
    elif len(args) == 1 and isinstance(args[0], ast.Name) and "shape" in args[0].id.lower():
        dims = [args[0], args[0]]  # a shape held in a name: two dimensions
    else:
        dims = list(args)
    for keyword in call.keywords:
        if keyword.arg == "size" and isinstance(keyword.value, (ast.Tuple, ast.List)):
            dims = keyword.value.elts
    return TensorSpec(tuple(_dim(dim) for dim in dims), dtype)


def by_name(name: str) -> Spec:
    """A value chosen by an argument's name, when its expression cannot be evaluated."""
    lowered = name.lower()
    if "loader" in lowered:
        return Loader()
    if lowered in ("data", "tensor", "param") or lowered.endswith(("_data", "weight")):
        return TensorSpec((DEFAULT_DIM, DEFAULT_DIM), "float32")
    if lowered.endswith("_dim"):
        return Literal(1 if lowered.startswith("input") else 0)
    if lowered.startswith(("is_", "use_", "has_")):
        return Literal(False)
    if "dtype" in lowered:
        return Literal(torch.float32)
    return Literal(2)


def spec_of(node: ast.expr, name: str) -> Spec:
    """The spec for argument expression ``node`` passed as ``name``."""
    if isinstance(node, ast.Call):
        spec = _tensor_spec(node)
        if spec is not None:
            return spec
    if "loader" in name.lower():
        return Loader()
    try:
        return Literal(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return by_name(name)


@dataclass(frozen=True)
class Build:
    """How to build one parameter: positional and keyword specs, and where they came from."""

    args: tuple[Spec, ...]
    kwargs: tuple[tuple[str, Spec], ...]
    origin: str

    def values(self, seed: int = 0) -> tuple[list[Any], dict[str, Any]]:
        """Fresh argument values (identical for identical seeds)."""
        args = [materialize(spec, seed + i) for i, spec in enumerate(self.args)]
        kwargs = {name: materialize(spec, seed + 100 + i)
                  for i, (name, spec) in enumerate(self.kwargs)}
        return args, kwargs


def build_from_site(site: CallSite, positional_names: list[str]) -> Build:
    """The ``Build`` of a harvested call (positional arguments named by the signature)."""
    names = positional_names + [f"arg{i}" for i in range(len(site.args))]
    args = tuple(spec_of(node, names[i]) for i, node in enumerate(site.args))
    kwargs = tuple((name, spec_of(node, name)) for name, node in site.keywords.items())
    return Build(args, kwargs, site.where)


def synthesized_build(cls: type) -> Build:
    """A ``Build`` from the required parameters of every ``__new__``/``__init__`` of
    ``cls``'s MRO below ``torch.nn.Parameter``."""
    wanted: dict[str, Spec] = {}
    for klass in cls.__mro__:
        if klass in (torch.nn.Parameter, torch.Tensor, object):
            break
        for method in ("__new__", "__init__"):
            function = klass.__dict__.get(method)
            if function is None:
                continue
            try:
                signature = inspect.signature(function)
            except (TypeError, ValueError):
                continue
            for parameter in list(signature.parameters.values())[1:]:
                if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                    continue
                if parameter.default is parameter.empty and parameter.name not in wanted:
                    wanted[parameter.name] = by_name(parameter.name)
    wanted.setdefault("data", by_name("data"))
    return Build((), tuple(wanted.items()), "synthesized")
