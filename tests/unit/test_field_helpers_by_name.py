"""The field helpers read a plain tensor's attributes by name (so that torch.compile can
trace them) and answer exactly as the dict-based definitions they replaced.

``REFERENCE`` holds those definitions (reads and writes through ``obj.__dict__``), the
specification of what ``param_field``/``has_param_field``/``set_param_field`` and
``param_type`` answer. Each helper is asked of objects where reading by name could differ
from reading the dict: a converted parameter with its attribute present, deleted, or
named like a ``Tensor`` method; a plain tensor given a parameter's attributes; a kept
subclass whose class has a property of the attribute's name; an object with
``__getattr__``; a kind this runtime does not know.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime import param_runtime as R  # noqa: E402

REFERENCE = '''
def set_param_field(obj, field, name, value, none_deletes=False):
    attrs = getattr(obj, "__dict__", None)
    if not isinstance(attrs, dict) or "_param_features" not in attrs \\
            or field not in _fields_of(attrs):
        setattr(obj, field, value)
    elif value is None and none_deletes:
        attrs.pop(name, None)
    else:
        setattr(obj, name, value)


def param_field(obj, field, *default):
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict) and "_param_features" in attrs:
        fields = _fields_of(attrs)
        if field in fields:
            name, none_deletes = fields[field]
            if name in attrs:
                return attrs[name]
            if none_deletes:
                return None
            if default:
                return default[0]
            raise AttributeError(f"parameter has no attribute {field!r}")
    return getattr(obj, field, *default)


def has_param_field(obj, field):
    missing = object()
    return param_field(obj, field, missing) is not missing


def param_type(obj):
    cls = type(obj)
    if cls is torch.nn.Parameter:
        kind = obj.__dict__.get("_param_kind")
        if kind is not None:
            return sys.intern(kind)
    return cls
'''

KIND = "pkg.params.WeightParam"
FIELDS = {"_loader": ("loader", False), "_scale": ("scale", True), "_size": ("size", True)}


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    namespace: dict[str, Any] = {"torch": torch, "sys": __import__("sys"),
                                 "_fields_of": R._fields_of}
    exec(REFERENCE, namespace)  # noqa: S102 - the former definitions, as written
    return namespace


@pytest.fixture(autouse=True)
def registered() -> Any:
    R.PARAM_FIELDS[KIND] = FIELDS
    yield
    R.PARAM_FIELDS.pop(KIND, None)


def _tags(obj: Any, kind: str = KIND) -> Any:
    obj.__dict__.update({"_param_features": frozenset({kind}), "_param_kind": kind})
    return obj


class Kept(torch.nn.Parameter):
    """A subclass kept as a class: its property has the converted attribute's name."""

    @property
    def loader(self) -> str:
        return "from the property"


class Anything:
    """An object that answers every attribute."""

    def __getattr__(self, name: str) -> str:
        return f"made up {name}"


class Holder:
    pass


def _objects() -> dict[str, Callable[[], Any]]:
    def converted() -> Any:
        p = _tags(torch.nn.Parameter(torch.ones(2)))
        p.loader, p.scale = "a loader", 2.0
        return p

    def deleted() -> Any:
        p = converted()
        del p.scale
        return p

    def method_named() -> Any:
        p = converted()
        p.size = 3  # an attribute named like Tensor.size
        return p

    def tensor_copy() -> Any:
        t = torch.ones(2)
        t.__dict__.update(converted().__dict__)
        return t

    def kept() -> Any:
        return _tags(Kept(torch.ones(2)))

    def unknown_kind() -> Any:
        p = _tags(torch.nn.Parameter(torch.ones(2)), "other.Kind")
        p.loader = "other"
        return p

    def holder() -> Any:
        h = Holder()
        h.__dict__.update(converted().__dict__)
        return h

    def features_none() -> Any:
        p = torch.nn.Parameter(torch.ones(2))
        p._param_features = None
        p._param_kind = KIND
        p.loader = "x"
        return p

    return {
        "converted": converted, "deleted": deleted, "method_named": method_named,
        "tensor_copy": tensor_copy, "kept": kept, "unknown_kind": unknown_kind,
        "holder": holder, "features_none": features_none,
        "plain": lambda: torch.nn.Parameter(torch.ones(2)), "tensor": lambda: torch.ones(2),
        "anything": Anything, "deep_copy": lambda: copy.deepcopy(converted()),
    }


def _answer(fn: Callable[[], Any]) -> str:
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - the answer compared
        return f"raised {type(exc).__name__}"
    return repr(value) if not callable(value) or isinstance(value, type) else f"callable {value.__name__}"


@pytest.mark.parametrize("field", ["_loader", "_scale", "_size", "_other"])
@pytest.mark.parametrize("name", list(_objects()))
def test_reads_answer_as_the_dict_based_definitions(reference: dict[str, Any], name: str,
                                                    field: str) -> None:
    make = _objects()[name]
    for helper, args in (("param_field", (field,)), ("param_field", (field, "default")),
                         ("has_param_field", (field,))):
        new = _answer(lambda helper=helper, args=args: getattr(R, helper)(make(), *args))
        old = _answer(lambda helper=helper, args=args: reference[helper](make(), *args))
        assert new == old, (helper, args)


@pytest.mark.parametrize("value", [None, 5.0])
@pytest.mark.parametrize("field", ["_loader", "_scale", "_size", "_other"])
@pytest.mark.parametrize("name", list(_objects()))
def test_writes_leave_what_the_dict_based_definitions_left(reference: dict[str, Any], name: str,
                                                           field: str, value: Any) -> None:
    make = _objects()[name]
    attribute, nullable = FIELDS.get(field, (field.lstrip("_"), False))

    def state(setter: Callable[..., None]) -> str:
        obj = make()
        outcome = _answer(lambda: setter(obj, field, attribute, value, none_deletes=nullable))
        own = getattr(obj, "__dict__", {})
        return f"{outcome} {sorted((k, repr(v)) for k, v in own.items() if not k.startswith('__'))}"

    assert state(R.set_param_field) == state(reference["set_param_field"])


@pytest.mark.parametrize("name", list(_objects()))
def test_param_type_answers_as_before(reference: dict[str, Any], name: str) -> None:
    make = _objects()[name]
    assert R.param_type(make()) is reference["param_type"](make())
