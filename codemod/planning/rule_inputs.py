"""``RuleInputs``: what the class rules read besides the class itself."""

from __future__ import annotations

from dataclasses import dataclass

from codemod.analysis.index import ClassIndex
from codemod.types import BlockingUse


@dataclass(frozen=True)
class RuleInputs:
    """What the class rules read besides the class: the index and the configuration."""

    index: ClassIndex
    #: ``[tool.codemod] allow-classes`` (bare or qualified names).
    allow: frozenset[str]
    #: Qualname -> the use no rewrite covers that refuses it.
    forced: dict[str, BlockingUse]
    #: ``[tool.codemod] feature-prefix``: what the ``Features`` member names start with.
    feature_prefix: str = ""
