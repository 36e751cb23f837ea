"""The names of the runtime functions that converted code calls, one constant each.

Every rewrite, screen and check that writes or recognises a call of the runtime
(``param_runtime.py``, the text below ``BEGIN RUNTIME``, which ``apply`` copies into each
family's runtime module) spells the function with one of these. ``codemod`` never imports
the runtime itself (it imports torch), so the names cannot be read from it while
converting; ``tests/unit/test_runtime_helpers.py`` checks instead that the runtime defines
each of them, and that no other module of ``codemod`` spells one as a string of its own.
"""

from __future__ import annotations

#: ``isinstance(p, X)`` -> ``has_param_feature(p, Features.X)``.
HAS_PARAM_FEATURE = "has_param_feature"
#: ``isinstance(p, (X, K))`` with ``K`` a class that stays a class.
ISINSTANCE_OR_PARAM_FEATURE = "isinstance_or_param_feature"
#: ``type(p) is X`` -> ``param_kind_is(p, Features.X)``.
PARAM_KIND_IS = "param_kind_is"
#: ``type(a) is type(b)`` -> ``param_type(a) is param_type(b)``.
PARAM_TYPE = "param_type"
#: A former property's backing field: written, read, tested.
SET_PARAM_FIELD = "set_param_field"
PARAM_FIELD = "param_field"
HAS_PARAM_FIELD = "has_param_field"
#: What a converted module records once per kind, at import.
REGISTER_PARAM_FIELDS = "register_param_fields"
REGISTER_PARAM_KIND = "register_param_kind"
#: What a factory calls.
INIT_PARAM_KIND = "init_param_kind"
CHECK_PARAM_KWARGS = "check_param_kwargs"
#: Reads and copies of an attribute dict.
PARAM_ATTR_DICT = "param_attr_dict"
REBIND_PARAM_METHODS = "rebind_param_methods"

#: Every name above.
ALL = frozenset({
    HAS_PARAM_FEATURE, ISINSTANCE_OR_PARAM_FEATURE, PARAM_KIND_IS, PARAM_TYPE,
    SET_PARAM_FIELD, PARAM_FIELD, HAS_PARAM_FIELD, REGISTER_PARAM_FIELDS,
    REGISTER_PARAM_KIND, INIT_PARAM_KIND, CHECK_PARAM_KWARGS, PARAM_ATTR_DICT,
    REBIND_PARAM_METHODS,
})

#: The attributes the runtime keeps a converted parameter's kind in: a class that uses
#: one of these names itself is refused.
RESERVED_ATTRIBUTES = frozenset({"_param_features", "_param_kind"})
