"""Runtime that converted engines carry: feature tags, exact kinds, per-parameter
methods.

The text below the ``BEGIN RUNTIME`` marker, with this module's imports, is what
``apply`` writes into each family's runtime module (``codemod.runtime.emit``, which adds
the module docstring and the family's ``Features`` class). This module exists so that
the runtime is itself importable and unit-tested; ``codemod`` never imports it (nor
torch) while converting code.

Why this shape (measured on torch 2.13 CPU):

* Methods are ``BoundParamMethod`` objects stored on the parameter.
  ``param.load_x(...)`` keeps working at every call site, and
  ``torch.compile(fullgraph=True)`` traces through them: Dynamo refuses a per-instance
  callable whose ``__name__`` equals the attribute it is stored under, so ``__name__``
  carries a suffix.
* A method holds its parameter through a weak reference, so ``param -> method -> param``
  is no reference cycle: a dropped parameter is freed by reference counting alone, as
  the former subclass instance was. The methods of one parameter share that reference.
* What a former class gave its instances is made once per kind, when its module is
  imported (``register_param_kind``): the feature set, and the one function the MRO
  chose for each method name. A factory then gives a new parameter all of it in one call
  (``init_param_kind``): per parameter, one object per method of the kind (the floor for
  a plain ``Parameter``, whose class cannot hold the methods) and one hook object
  serving as both ``__deepcopy__`` and ``__reduce_ex__``.
* ``copy.deepcopy`` and ``pickle`` look ``__deepcopy__`` / ``__reduce_ex__`` up on the
  instance, so each converted parameter carries its own: a deep copy keeps every
  attribute and its methods act on the copy; a pickled parameter (or a module holding
  it, through ``torch.save``) comes back with its attributes and methods rebound to it.
"""

import copy
import sys
import weakref

import torch

# BEGIN RUNTIME

_WEAK_REF = weakref.ref
_INTERN = sys.intern
#: How the runtime reads a tensor's ``__dict__`` (``_attrs_of``): at a plain tensor's
#: ``__dict__`` torch.compile stops with an internal error, at this call it breaks the
#: graph, as it did at a former subclass instance's ``__dict__`` (a factory called in a
#: compiled function, a read of a parameter's attribute dict).
_GET_ATTRIBUTE = object.__getattribute__


class BoundParamMethod:
    """A method of one converted parameter: calling it calls ``func(param, *args)``.

    The parameter is held weakly (no reference cycle); calling a method whose parameter
    has been freed raises ``ReferenceError``. ``param`` may be given as its weak
    reference (``weakref.ref(param)``), which the methods of one parameter share.
    """

    __slots__ = ("__func__", "_param_ref")

    def __init__(self, func, param):
        self.__func__ = func
        self._param_ref = param if type(param) is _WEAK_REF else _WEAK_REF(param)

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
    """Attach ``func`` to ``param`` as method ``name`` (``param.name(...)`` calls
    ``func(param, ...)``)."""
    setattr(param, name, BoundParamMethod(func, param))


def bind_param_methods(param, /, **methods):
    """Attach each ``name=func`` of ``methods`` to ``param`` as method ``name``."""
    param_ref = weakref.ref(param)
    for name, func in methods.items():
        setattr(param, name, BoundParamMethod(func, param_ref))


def rebind_param_methods(obj, copied=None):
    """Make the methods in ``obj``'s attributes act on ``obj``; return ``copied``.

    Code that copies a parameter's attributes onto another tensor (``t.__dict__ =
    p.__dict__.copy()``, ``t.__dict__.update(p.__dict__)``) used to give ``t`` the
    former class's methods acting on ``t`` (they were looked up on ``t``'s class); the
    copied methods are still bound to ``p``, so ``apply`` calls this right after such a
    copy. Methods made by any converted module are recognised; other objects and
    attributes are left as they are. A copy inside an expression (a lambda, a
    comprehension) becomes ``rebind_param_methods(t, t.__dict__.update(...))``: the
    copy runs first, and the expression still gets its value.
    """
    attrs = _attrs_or_none(obj)
    if not isinstance(attrs, dict):
        return copied
    for name, value in list(attrs.items()):
        kind = type(value)
        if kind.__name__ == "BoundParamMethod" and hasattr(kind, "__slots__") \
                and "_param_ref" in kind.__slots__ and value.__self__ is not obj:
            attrs[name] = kind(value.__func__, obj)
    return copied


#: Former properties of each converted kind (its feature): backing field -> (attribute,
#: whether ``None`` in the field meant "deleted"). A converted parameter stores only the
#: attribute; these answer what the field held. Filled once per kind by the modules that
#: define the kinds (``register_param_fields``).
PARAM_FIELDS = {}


def register_param_fields(feature, fields, none_deletes=()):
    """Record that kind ``feature`` stores each ``field: attribute`` pair of ``fields``
    as the attribute alone; ``none_deletes`` names the attributes whose ``None`` field
    meant "deleted"."""
    PARAM_FIELDS[feature] = {
        field: (name, name in none_deletes) for field, name in fields.items()
    }


def _fields_of(attrs):
    """The former-property fields of the kind whose attributes are ``attrs`` ({} if
    none).

    Looked up in the registry of the runtime that made the parameter (its copy hook's
    globals) when this runtime does not know the kind: a tree may carry several
    runtimes.
    """
    kind = attrs.get("_param_kind")
    fields = PARAM_FIELDS.get(kind)
    if fields is None:
        hook = getattr(attrs.get("__deepcopy__"), "__func__", None)
        fields = getattr(hook, "__globals__", {}).get("PARAM_FIELDS", {}).get(kind, {})
    return fields


def param_attr_dict(obj):
    """What ``obj.__dict__`` held before conversion; ``obj.__dict__`` itself for any
    object that is not a converted parameter.

    A converted parameter also keeps its methods, copy hooks and feature tags in its
    ``__dict__``, and holds its former properties as attributes; the old instance held
    only its fields there. Reads that inspect the dict (``.get("weight_loader")``,
    ``"weight_loader" in ...``, equality of two parameters' dicts) are given a new dict
    with the fields instead (``_f`` with the attribute's value; ``None`` where a deleted
    nullable attribute left it), so they answer as before.
    """
    attrs = _attrs_of(obj)
    if "_param_features" not in attrs:
        return attrs
    fields = _fields_of(attrs)
    field_of = {name: field for field, (name, _) in fields.items()}
    view = {}
    for name, value in attrs.items():
        if name in ("_param_features", "_param_kind"):
            continue
        kind = type(value)
        if kind.__name__ == "BoundParamMethod" and hasattr(kind, "__slots__") \
                and "_param_ref" in kind.__slots__ and value.__self__ is obj:
            continue
        view[field_of.get(name, name)] = value
    for field, (name, none_deletes) in fields.items():
        if none_deletes and name not in attrs:
            view[field] = None
    return view


class ParamKind:
    """What the former class gave every instance, made once per kind: its feature tags
    (``_param_features``: the class and every class it inherits from; ``_param_kind``:
    the class itself) and its methods (``(name, function)`` pairs, the function the MRO
    chose for each name)."""

    __slots__ = ("feature", "bases", "mro", "own_methods", "tags", "methods")

    def __init__(self, feature, bases, own_methods):
        self.feature = feature
        self.bases = bases
        self.own_methods = own_methods
        self.mro = (feature, *_merged_mros(feature, bases))
        chosen = {}
        for kind in reversed(self.mro):
            methods = PARAM_KINDS[kind].own_methods if kind != feature else own_methods
            chosen.update(methods)
        self.tags = {"_param_features": frozenset(self.mro), "_param_kind": feature}
        self.methods = tuple(chosen.items())


def _merged_mros(feature, bases):
    """The kinds after ``feature`` in its former class's MRO: the C3 merge of its bases'
    orders, as Python ordered the classes."""
    sequences = [list(PARAM_KINDS[base].mro) for base in bases] + [list(bases)]
    merged = []
    while any(sequences):
        for sequence in sequences:
            head = sequence[0] if sequence else None
            if head is not None and not any(head in other[1:] for other in sequences):
                break
        else:
            raise TypeError(f"{feature}: its bases have no consistent order")
        merged.append(head)
        sequences = [
            other[1:] if other and other[0] == head else other for other in sequences
        ]
    return merged


#: ``feature -> ParamKind`` of every converted kind (and every class kept as a class
#: whose converted subclasses inherit its methods), filled when the defining modules are
#: imported.
PARAM_KINDS = {}


def register_param_kind(feature, bases=(), methods=None):
    """Record kind ``feature``: ``methods`` (name -> function) are those its former
    class defined, ``bases`` the kinds among its bases, in order (each registered
    before). A parameter of the kind gets, for each name, the function the former MRO
    chose."""
    PARAM_KINDS[feature] = ParamKind(feature, tuple(bases), dict(methods or {}))


def init_param_kind(param, feature):
    """Give the new ``param`` what an instance of the former class ``feature`` had from
    its class: the feature tags (``has_param_feature``, ``param_kind_is``), every method
    bound to ``param``, and the copy hooks.

    A factory calls it once, right after building the tensor and before the wraps run
    the former ``__init__`` bodies: an instance had its class (its methods, its
    ``isinstance`` answers) before any ``__init__`` ran.
    """
    kind = PARAM_KINDS[feature]
    attrs = _GET_ATTRIBUTE(param, "__dict__")
    attrs.update(kind.tags)
    param_ref = _WEAK_REF(param)
    hook = BoundParamMethod(_copy_param, param_ref)
    attrs["__deepcopy__"] = attrs["__reduce_ex__"] = hook
    for name, func in kind.methods:
        attrs[name] = BoundParamMethod(func, param_ref)


#: ``features -> {feature: features | {feature}}``: the feature sets of every kind, made
#: once per kind and shared by its parameters (a frozenset never changes).
_FEATURE_SETS: dict = {}


def add_param_feature(param, feature):
    """Tag ``param`` with ``feature``; the last feature added is its exact kind.

    Wrap functions run base first, so the factory's own class is added last and
    ``param_kind_is`` answers what ``type(param) is X`` answered before.
    """
    attrs = _GET_ATTRIBUTE(param, "__dict__")
    present = attrs.get("_param_features", frozenset())
    following = _FEATURE_SETS.get(present)
    if following is None:
        following = _FEATURE_SETS[present] = {}
    features = following.get(feature)
    if features is None:
        features = following[feature] = present | {feature}
    attrs["_param_features"] = features
    attrs["_param_kind"] = feature
    if "__deepcopy__" not in attrs:
        _install_copy_hooks(param)


def has_param_feature(obj, *features):
    """What ``isinstance(obj, (X, ...))`` answered for the former classes ``X, ...``.

    Only a tensor can be a converted parameter: any other object answers False unasked
    (a mock, a proxy or a wrapper may answer every attribute name)."""
    if not isinstance(obj, torch.Tensor):
        return False
    present = getattr(obj, "_param_features", ())
    for feature in features:
        if feature in present:
            return True
    return False


def check_param_kwargs(kind, kwargs, accepted):
    """Raise ``TypeError`` for a keyword no ``__init__`` of the former class ``kind``
    took."""
    for name in kwargs:
        if name not in accepted:
            raise TypeError(f"{kind}() got an unexpected keyword argument {name!r}")


def set_param_field(obj, field, name, value, none_deletes=False):
    """What ``obj.<field> = value`` did before conversion.

    ``<field>`` backed the property ``<name>`` of a former class. A converted parameter
    of such a kind holds only the attribute ``<name>``: it is set (or, when
    ``none_deletes`` and ``value`` is None, removed: the getter then raised
    ``AttributeError``). Any other object (a class kept as a class, an unrelated object
    with a field of the same name, a converted kind without that property) gets the
    field, as before.
    """
    fields = _kind_fields(obj)
    if field not in fields:
        setattr(obj, field, value)
    elif value is None and none_deletes:
        _drop_own(obj, name)
    else:
        setattr(obj, name, value)


def param_field(obj, field, *default):
    """What ``getattr(obj, field[, default])`` answered before conversion.

    For a converted parameter whose kind had a property over ``field``: the attribute's
    value, or ``None`` where a nullable attribute was deleted (the field was set to
    None), or ``default`` / ``AttributeError`` where the field had been deleted. Any
    other object is read as it is.
    """
    fields = _kind_fields(obj)
    if field in fields:
        name, none_deletes = fields[field]
        value = _own_attr(obj, name)
        if value is not _MISSING:
            return value
        if none_deletes:
            return None
        if default:
            return default[0]
        raise AttributeError(f"parameter has no attribute {field!r}")
    return getattr(obj, field, *default)


def has_param_field(obj, field):
    """What ``hasattr(obj, field)`` answered before conversion (see ``param_field``)."""
    return param_field(obj, field, _MISSING) is not _MISSING


# The field helpers read a plain tensor's attributes by name, never through its
# ``__dict__``: torch.compile cannot trace a tensor's ``__dict__`` (``_attrs_of``),
# while it traces the field reads and writes these helpers stand for. A plain
# ``Parameter`` or ``Tensor`` has no ``__getattr__``, so a name its classes do not define
# finds only the instance's own attribute, as the dict lookup did. Any other object is
# read through its ``__dict__``.

#: A value no attribute holds.
_MISSING = object()
#: What a ``Parameter`` (or a ``Tensor``) has from its classes.
_TENSOR_NAMES = frozenset(dir(torch.nn.Parameter))


def _is_plain_tensor(obj):
    cls = type(obj)
    return cls is torch.nn.Parameter or cls is torch.Tensor


def _own_attr(obj, name):
    """``obj``'s own attribute ``name`` (what its ``__dict__`` holds), or ``_MISSING``."""
    if name not in _TENSOR_NAMES and _is_plain_tensor(obj):
        return getattr(obj, name, _MISSING)
    attrs = _attrs_or_none(obj)
    return attrs.get(name, _MISSING) if isinstance(attrs, dict) else _MISSING


def _drop_own(obj, name):
    """Remove ``obj``'s own attribute ``name`` if it has one (torch.compile cannot delete
    a tensor's attribute: ``_attrs_of`` breaks the graph here)."""
    _attrs_of(obj).pop(name, None)


def _kind_fields(obj):
    """The former-property fields of ``obj``'s converted kind ({} if it has none)."""
    if _is_plain_tensor(obj):
        if getattr(obj, "_param_features", _MISSING) is _MISSING:
            return {}
        fields = PARAM_FIELDS.get(getattr(obj, "_param_kind", None))
        if fields is not None:
            return fields
    attrs = _attrs_or_none(obj)
    if isinstance(attrs, dict) and "_param_features" in attrs:
        return _fields_of(attrs)
    return {}


def _attrs_of(obj):
    """``obj.__dict__``. A tensor's is read through ``object.__getattribute__``: at a plain
    tensor's ``__dict__`` torch.compile stops with an internal error (also outside
    ``fullgraph``), at this call it breaks the graph and runs it, as it did at the
    former subclass instance's ``__dict__``."""
    if isinstance(obj, torch.Tensor):
        return _GET_ATTRIBUTE(obj, "__dict__")
    return obj.__dict__


def _attrs_or_none(obj):
    """``_attrs_of(obj)``, None for an object without a ``__dict__``."""
    try:
        return _attrs_of(obj)
    except AttributeError:
        return None


def isinstance_or_param_feature(obj, classes, *features):
    """What ``isinstance(obj, (X, C, ...))`` answered when the tuple mixed former
    parameter classes (``features``) with ordinary classes (``classes``): ``obj`` and
    every class are evaluated once, in their order, as the tuple was; the features are
    asked first, as ``has_param_feature(p, ...) or isinstance(p, C)`` asks them."""
    return has_param_feature(obj, *features) or isinstance(obj, classes)


def param_kind_is(obj, *features):
    """What ``type(obj) in (X, ...)`` (or ``type(obj) is X``) answered for the former
    classes (False for anything but a tensor, as in ``has_param_feature``)."""
    if not isinstance(obj, torch.Tensor):
        return False
    return getattr(obj, "_param_kind", None) in features


def param_type(obj):
    """What ``type(obj)`` answered where it is compared with another object's type
    (``type(a) is type(b)``): for a converted parameter its former class's kind (one
    object per kind, also after a copy or pickling), for anything else ``type(obj)``."""
    cls = type(obj)
    if cls is torch.nn.Parameter:
        # By name, not through ``obj.__dict__``, which torch.compile cannot trace.
        kind = getattr(obj, "_param_kind", None)
        if kind is not None:
            return _INTERN(kind)
    return cls


def _install_copy_hooks(param):
    # One object answers both protocols: ``copy.deepcopy`` calls the hook with its memo
    # (a dict), ``pickle`` and ``copy.copy`` with a protocol number.
    hook = BoundParamMethod(_copy_param, param)
    attrs = _GET_ATTRIBUTE(param, "__dict__")
    attrs["__deepcopy__"] = hook
    attrs["__reduce_ex__"] = hook


def _copy_param(param, memo_or_protocol):
    if isinstance(memo_or_protocol, int):
        return _reduce_param(param, memo_or_protocol)
    return _deepcopy_param(param, memo_or_protocol)


def _deepcopy_param(param, memo):
    # Parameter.__deepcopy__ rebuilds a bare Parameter and drops every attribute; this
    # keeps them (deep-copied) and rebinds the copy's methods to the copy.
    if id(param) in memo:
        return memo[id(param)]
    result = torch.nn.Parameter(
        param.data.clone(memory_format=torch.preserve_format), param.requires_grad
    )
    memo[id(param)] = result
    result_ref = weakref.ref(result)
    for name, value in _GET_ATTRIBUTE(param, "__dict__").items():
        if isinstance(value, BoundParamMethod) and value.__self__ is param:
            if name not in ("__deepcopy__", "__reduce_ex__"):
                setattr(result, name, BoundParamMethod(value.__func__, result_ref))
        else:
            setattr(result, name, copy.deepcopy(value, memo))
    _install_copy_hooks(result)
    return result


def _reduce_param(param, protocol):
    # Weak references cannot be pickled: methods travel as their (module-level)
    # functions and are rebound to the rebuilt parameter.
    state = {}
    methods = {}
    for name, value in _GET_ATTRIBUTE(param, "__dict__").items():
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
    bind_param_methods(param, **methods)
    _install_copy_hooks(param)
    return param
