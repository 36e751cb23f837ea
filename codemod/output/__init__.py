"""Rendering results for people and tools: unified diffs and ``check`` reporters."""

from __future__ import annotations

from codemod.output.diff import unified_diff

__all__ = ["unified_diff"]
