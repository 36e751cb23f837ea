"""Runtime that converted modules carry: feature tags, exact kinds, per-parameter methods.

The text below the ``BEGIN RUNTIME`` marker is copied verbatim (minus its imports, which
are added with ``AddImportsVisitor``) into the module that defined the root of a converted
hierarchy. This module exists so that the runtime is itself importable and unit-tested;
``codemod`` never imports it (nor torch) while converting code.

Why this shape (DESIGN.md section 2, measured on torch 2.13 CPU):

* Methods are ``BoundParamMethod`` objects stored on the parameter. ``param.load_x(...)``
  keeps working at every call site, and ``torch.compile(fullgraph=True)`` traces through
  them: Dynamo refuses a per-instance callable whose ``__name__`` equals the attribute it
  is stored under, so ``__name__`` carries a suffix.
* A method holds its parameter through a weak reference, so ``param -> method -> param``
  is no reference cycle: a dropped parameter is freed by reference counting alone, as the
  former subclass instance was.
* ``copy.deepcopy`` and ``pickle`` look ``__deepcopy__`` / ``__reduce_ex__`` up on the
  instance, so each converted parameter carries its own: a deep copy keeps every
  attribute and its methods act on the copy; a pickled parameter (or a module holding it,
  through ``torch.save``) comes back with its attributes and methods rebound to it.
"""

import copy
import weakref

import torch

# BEGIN RUNTIME


class BoundParamMethod:
    """A method of one converted parameter: calling it calls ``func(param, *args)``.

    The parameter is held weakly (no reference cycle); calling a method whose parameter
    has been freed raises ``ReferenceError``.
    """

    __slots__ = ("__func__", "_param_ref")

    def __init__(self, func, param):
        self.__func__ = func
        self._param_ref = weakref.ref(param)

    @property
    def __name__(self):
        # Never the attribute's own name (see the module docstring): torch.compile.
        return f"{self.__func__.__name__}__param_method"

    @property
    def __self__(self):
        return self._param_ref()

    def __call__(self, *args, **kwargs):
        param = self._param_ref()
        if param is None:
            raise ReferenceError(f"{self.__func__.__name__}: its parameter was freed")
        return self.__func__(param, *args, **kwargs)

    def __repr__(self):
        return f"<param method {self.__func__.__qualname__}>"


def bind_param_method(param, name, func):
    """Attach ``func`` to ``param`` as method ``name`` (``param.name(...)`` calls ``func(param, ...)``)."""
    setattr(param, name, BoundParamMethod(func, param))


def bind_param_methods(param, /, **methods):
    """Attach each ``name=func`` of ``methods`` to ``param`` as method ``name``."""
    for name, func in methods.items():
        setattr(param, name, BoundParamMethod(func, param))


def rebind_param_methods(obj):
    """Make the methods in ``obj``'s attributes act on ``obj``.

    Code that copies a parameter's attributes onto another tensor (``t.__dict__ =
    p.__dict__.copy()``, ``t.__dict__.update(p.__dict__)``) used to give ``t`` the
    former class's methods acting on ``t`` (they were looked up on ``t``'s class); the
    copied methods are still bound to ``p``, so ``apply`` calls this right after such a
    copy. Methods made by any converted module are recognised; other objects and
    attributes are left as they are.
    """
    attrs = getattr(obj, "__dict__", None)
    if not isinstance(attrs, dict):
        return
    for name, value in list(attrs.items()):
        kind = type(value)
        if kind.__name__ == "BoundParamMethod" and hasattr(kind, "__slots__") \
                and "_param_ref" in kind.__slots__ and value.__self__ is not obj:
            attrs[name] = kind(value.__func__, obj)


def param_attr_dict(obj):
    """What ``obj.__dict__`` held before conversion; ``obj.__dict__`` itself for any
    object that is not a converted parameter.

    A converted parameter also keeps its methods, copy hooks, feature tags and former
    property values in its ``__dict__``; the old instance held only its fields there.
    Reads that inspect the dict (``.get("weight_loader")``, ``"weight_loader" in ...``,
    equality of two parameters' dicts) are given a new dict without them, so they
    answer as before. A former property ``name`` is recognised by its backing field
    ``_name`` holding the same object.
    """
    attrs = obj.__dict__
    if "_param_features" not in attrs:
        return attrs
    view = {}
    for name, value in attrs.items():
        if name in ("_param_features", "_param_kind"):
            continue
        kind = type(value)
        if kind.__name__ == "BoundParamMethod" and hasattr(kind, "__slots__") \
                and "_param_ref" in kind.__slots__ and value.__self__ is obj:
            continue
        if "_" + name in attrs and attrs["_" + name] is value:
            continue
        view[name] = value
    return view


def add_param_feature(param, feature):
    """Tag ``param`` with ``feature``; the last feature added is its exact kind.

    Wrap functions run base first, so the factory's own class is added last and
    ``param_kind_is`` answers what ``type(param) is X`` answered before.
    """
    param._param_features = getattr(param, "_param_features", frozenset()) | {feature}
    param._param_kind = feature
    if "__deepcopy__" not in param.__dict__:
        _install_copy_hooks(param)


def has_param_feature(obj, *features):
    """What ``isinstance(obj, (X, ...))`` answered for the former classes ``X, ...``."""
    present = getattr(obj, "_param_features", ())
    for feature in features:
        if feature in present:
            return True
    return False


def check_param_kwargs(kind, kwargs, accepted):
    """Raise ``TypeError`` for a keyword no ``__init__`` of the former class ``kind`` took."""
    for name in kwargs:
        if name not in accepted:
            raise TypeError(f"{kind}() got an unexpected keyword argument {name!r}")


def set_param_field(obj, field, name, value, none_deletes=False):
    """``obj.<field> = value``, keeping a converted parameter's ``<name>`` attribute in step.

    ``<name>`` replaced a property that read ``<field>``; code outside the former class
    that writes the field (e.g. ``permute_param_layout_``) must still change what the
    attribute answers. Objects that are not converted parameters only get the field, as
    before. ``none_deletes``: the property treated ``None`` as "deleted".
    """
    setattr(obj, field, value)
    if "_param_features" in getattr(obj, "__dict__", ()):
        if value is None and none_deletes:
            obj.__dict__.pop(name, None)
        else:
            setattr(obj, name, value)


def isinstance_or_param_feature(obj, classes, *features):
    """What ``isinstance(obj, (X, C, ...))`` answered when the tuple mixed former
    parameter classes (``features``) with ordinary classes (``classes``); ``obj`` is
    evaluated once, as before."""
    return isinstance(obj, classes) or has_param_feature(obj, *features)


def param_kind_is(obj, *features):
    """What ``type(obj) in (X, ...)`` (or ``type(obj) is X``) answered for the former classes."""
    return getattr(obj, "_param_kind", None) in features


def _install_copy_hooks(param):
    param.__deepcopy__ = BoundParamMethod(_deepcopy_param, param)
    param.__reduce_ex__ = BoundParamMethod(_reduce_param, param)


def _deepcopy_param(param, memo):
    # Parameter.__deepcopy__ rebuilds a bare Parameter and drops every attribute; this
    # keeps them (deep-copied) and rebinds the copy's methods to the copy.
    if id(param) in memo:
        return memo[id(param)]
    result = torch.nn.Parameter(
        param.data.clone(memory_format=torch.preserve_format), param.requires_grad
    )
    memo[id(param)] = result
    for name, value in param.__dict__.items():
        if isinstance(value, BoundParamMethod) and value.__self__ is param:
            setattr(result, name, BoundParamMethod(value.__func__, result))
        else:
            setattr(result, name, copy.deepcopy(value, memo))
    return result


def _reduce_param(param, protocol):
    # Weak references cannot be pickled: methods travel as their (module-level) functions
    # and are rebound to the rebuilt parameter.
    state = {}
    methods = {}
    for name, value in param.__dict__.items():
        if isinstance(value, BoundParamMethod) and value.__self__ is param:
            if name not in ("__deepcopy__", "__reduce_ex__"):
                methods[name] = value.__func__
        else:
            state[name] = value
    return (_rebuild_param, (param.data, param.requires_grad, state, methods))


def _rebuild_param(data, requires_grad, state, methods):
    param = torch.nn.Parameter(data, requires_grad)
    for name, value in state.items():
        setattr(param, name, value)
    for name, func in methods.items():
        bind_param_method(param, name, func)
    _install_copy_hooks(param)
    return param
