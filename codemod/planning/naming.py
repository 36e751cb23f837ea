"""Names of the generated functions, derived from the class names (no vLLM spelling baked in)."""

from __future__ import annotations

import re

# A lower-case letter that prefixes an acronym of three or more capitals: "BasevLLMParameter"
# -> "Base_vllm_Parameter". Two capitals after a lower-case letter end a word instead:
# "DeepSpeedFPParameter" -> "Deep_Speed_FP_Parameter".
_PREFIXED_ACRONYM = re.compile(r"(?<=[a-z])([a-z][A-Z]{3,})(?=[A-Z][a-z]|$)")
_LOWER_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_UPPER_WORD = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(class_name: str) -> str:
    """``_ColumnvLLMParameter`` -> ``column_vllm_parameter``; ``FooBar`` -> ``foo_bar``."""
    name = class_name.lstrip("_")
    name = _PREFIXED_ACRONYM.sub(lambda m: f"_{m.group(1).lower()}_", name)
    name = _LOWER_UPPER.sub("_", name)
    name = _UPPER_WORD.sub("_", name)
    return re.sub("_+", "_", name).lower()


def wrap_name(class_name: str) -> str:
    """Name of the wrap function that attaches a class's attributes and methods."""
    return f"wrap_{snake_case(class_name)}"


def method_function_name(class_name: str, method: str) -> str:
    """Name of the module-level function implementing ``class_name.method``.

    It never equals ``method`` itself: torch.compile refuses a per-instance callable whose
    ``__name__`` equals the attribute it is stored under (docs/ARCHITECTURE.md, "The contract").
    """
    return f"_{snake_case(class_name)}_{method}"


def constant_name(class_name: str, attr: str) -> str:
    """Module-level name holding a class-level attribute's single shared value."""
    return f"_{snake_case(class_name).upper()}_{attr.lstrip('_').upper()}"
