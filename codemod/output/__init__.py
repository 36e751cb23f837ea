"""Rendering results for people and tools: unified diffs and ``check`` reporters."""

from __future__ import annotations

from codemod.output.diff import unified_diff
from codemod.output.reporters import render, render_statistics, sarif_log

__all__ = ["render", "render_statistics", "sarif_log", "unified_diff"]
