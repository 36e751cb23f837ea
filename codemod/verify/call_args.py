"""Arguments for calling a parameter's methods: for each parameter of the method, values
that fit the parameter being loaded.

A weight argument gets tensors of the parameter's shape and of that shape times the
tensor-parallel size along each ``*_dim`` the parameter names (and 0-d / 1-element ones
for a scale); ``shard_id`` the ints and QKV names loaders take; ``shard_offset`` and
``shard_size`` values inside the split dimension; a ``**kwargs`` the keywords the tree
passes to that method name plus the keys the method reads from it. Values are candidates
(a tensor is a shape until ``realize`` makes it, identically on both sides).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from collections.abc import Callable
from typing import Any

from codemod.verify.arguments import by_name, materialize, tensor_of

#: Most argument combinations tried per call form, method and tensor-parallel position.
MAX_COMBINATIONS = 12
_SHARD_IDS: tuple[Any, ...] = (0, 1, "q", "k", "v")
#: Makes ``(args, kwargs)`` for one call, given the side's parameter.
ArgumentMaker = Callable[[Any], tuple[list[Any], dict[str, Any]]]


def argument_makers(name: str, function: Callable[..., Any], sample: Any, is_static: bool,
                    method_keywords: dict[str, set[tuple[str, ...]]], tp_size: int) \
        -> list[ArgumentMaker]:
    """Argument makers for method ``name`` (``function``) of ``sample``'s class."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return []
    if not is_static:
        parameters = parameters[1:]
    named = {p.name for p in parameters if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    options: list[tuple[str, bool, list[Any]]] = []  # (name, keyword?, candidates)
    spread = False
    for parameter in parameters:
        if parameter.kind is parameter.VAR_KEYWORD:
            spread = True
        elif parameter.kind is parameter.VAR_POSITIONAL or parameter.default is not parameter.empty:
            continue
        else:
            keyword = parameter.kind is parameter.KEYWORD_ONLY
            options.append((parameter.name, keyword, candidates(parameter.name, sample, tp_size)))
    keyword_sets: list[tuple[str, ...]] = [()]
    if spread:  # the keywords the tree passes to this method name, one set per call
        # form, and every key the method reads from its ``**kwargs``
        read = keys_read(function)
        forms = {tuple(dict.fromkeys(n for n in (*names, *read) if n not in named))
                 for names in method_keywords.get(name, ())}
        forms.add(tuple(n for n in read if n not in named))
        keyword_sets = sorted(forms, key=lambda form: (-len(form), form))
    makers = []
    for keywords in keyword_sets:
        every = options + [(n, True, candidates(n, sample, tp_size)) for n in keywords]
        for combo in itertools.islice(itertools.product(*(c for _, _, c in every)),
                                      MAX_COMBINATIONS):
            makers.append(_maker(every, combo))
    return makers


def candidates(name: str, sample: Any, tp_size: int) -> list[Any]:
    """Values to try for argument ``name`` of a method of ``sample``'s class."""
    lowered = name.lower()
    if lowered in ("param", "parameter", "self_param", "layer_param"):
        return [SELF]
    if "weight" in lowered and "loader" not in lowered or lowered in ("tensor", "value"):
        return [("tensor", shape) for shape in weight_shapes(sample, tp_size)]
    if lowered == "shard_id":
        return list(_SHARD_IDS)
    if lowered == "shard_size":
        return [max(1, _split_size(sample) // 2)]
    if lowered == "shard_offset":
        return [0, max(1, _split_size(sample) // 2)]
    return [materialize(by_name(name), 0)]


def weight_shapes(sample: Any, tp_size: int) -> list[tuple[int, ...]]:
    """The parameter's shape, and that shape times the tp size along each dimension the
    parameter names (``output_dim``, ``input_dim``, ``packed_dim``...)."""
    shape = tuple(sample.shape)
    shapes = [shape]
    if len(shape) <= 1:  # a scale: also one value, as 0-d and 1-element tensors
        shapes += [(), (1,)]
    for name in dir(sample):
        if not name.endswith("_dim") or name.startswith("__"):
            continue
        dim = getattr(sample, name, None)
        if isinstance(dim, int) and 0 <= dim < len(shape) and tp_size > 1:
            scaled = tuple(n * tp_size if i == dim else n for i, n in enumerate(shape))
            if scaled not in shapes:
                shapes.append(scaled)
    return shapes


def keys_read(function: Callable[..., Any]) -> tuple[str, ...]:
    """The literal keys ``function`` reads from its ``**kwargs`` (``kwargs.get("k")``,
    ``kwargs["k"]``, ``kwargs.pop("k")``), in order."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return ()
    spread = next((arg.arg for node in ast.walk(tree)
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for arg in [node.args.kwarg] if arg is not None), None)
    keys: dict[str, None] = {}
    for node in ast.walk(tree):
        target, key = None, None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "pop") and node.args:
            target, key = node.func.value, node.args[0]
        elif isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        if isinstance(target, ast.Name) and target.id == spread \
                and isinstance(key, ast.Constant) and isinstance(key.value, str):
            keys[key.value] = None
    return tuple(keys)


class _Self:
    """Marks the argument that receives the parameter itself (a static loader's param)."""


SELF = _Self()


def _maker(options: list[tuple[str, bool, list[Any]]], combo: tuple[Any, ...]) \
        -> Callable[[Any], tuple[list[Any], dict[str, Any]]]:
    def make(param: Any) -> tuple[list[Any], dict[str, Any]]:
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for (name, keyword, _), value in zip(options, combo):
            if keyword:
                kwargs[name] = value
            else:
                args.append(value)
        return args, kwargs
    return make


def realize(value: Any, param: Any, seed: int) -> Any:
    """Turn a candidate into the value passed: the parameter, or a fresh tensor."""
    if value is SELF:
        return param
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "tensor":
        return tensor_of(value[1], param.dtype, seed)
    return value


def _split_size(sample: Any) -> int:
    dim = getattr(sample, "output_dim", 0)
    shape = tuple(sample.shape)
    if not shape:
        return 1
    return shape[dim] if isinstance(dim, int) and 0 <= dim < len(shape) else shape[0]
