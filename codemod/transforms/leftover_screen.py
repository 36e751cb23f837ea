"""Find a file's leftover uses with CPython's parser, when that can be decided exactly.

What it does
    ``unconverted_uses`` (LibCST: parse, rewrite, scan, metadata) answers which uses of a
    converted class no rewrite covers. Most files need far less: every mention of a
    converted name is a construction call ``X(...)``, an ``isinstance(p, X)`` /
    ``isinstance(p, (X, Y))`` test, a plain annotation, or the class handed on as a value
    (an argument, ``{key: X}``, ``K = X``, a comparison, a default, a ``return``). The
    first three are always rewritten or left valid; a value use is a leftover unless
    ``analysis.class_values`` proves where it goes (``Plan.value_use_kept``, the same
    answer the LibCST path asks for) or ``allow-value-uses`` accepts it.
    ``screen_leftovers`` gives every mention in the CPython AST of the file its kind
    (``analysis.use_rules.UseKind``), acts as the kind's rule says, and returns the same
    list ``unconverted_uses`` would, or None as soon as one mention is in any other
    position (then the caller runs the LibCST path).
Why
    ``check`` and every planning round of ``apply`` need only the leftovers; CPython's
    parser is an order of magnitude faster than parsing, rewriting and resolving
    metadata with LibCST (vLLM 0.34's ``modelopt.py``: ~2 s with LibCST).
Fix safety
    A "decided" answer must equal LibCST's, mention for mention: a mention is only ever
    called safe or a leftover in positions where ``UseSiteTransformer``,
    ``use_scanner._UseScanner`` and ``Plan.value_use_kept`` are known to act that way; a
    name is resolved only when the file imports it under exactly one qualified name
    (``resolve`` then agrees whatever the order of the imports). Anything else is undecided. The equality is
    tested on every fixture tree, kind for kind (``screen_kinds``), and checked on vLLM
    trees by ``scripts/verify_screen.py``.
    One deliberate difference: a file that parses but does not compile, with no
    leftovers, is answered ``[]`` where the LibCST path reports a parse error (the plan
    is the same; ``check`` does not report that file's error).
"""

from __future__ import annotations

import ast
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.compiles import cpython_rejects
from codemod.analysis.python_trees import identifiers_as_written
from codemod.analysis.use_rules import USE_RULES, UseKind
from codemod.planning.plan import Plan
from codemod.transforms.mention_screen import Leftover, MentionScreen, Undecided


def screen_leftovers(path: Path, text: str, plan: Plan, names: frozenset[str]) -> list[Leftover] | None:
    """``unconverted_uses`` of ``path`` if CPython's AST decides it exactly, else None.

    ``names``: every identifier a use of a converted class can be spelled with (the
    ``hierarchy_names`` of the classes a rewrite changes; backing fields never name a
    class). None also when CPython cannot parse the file.
    """
    return screen_file(path, text, plan, names)[0]


def screen_file(path: Path, text: str, plan: Plan,
                names: frozenset[str]) -> tuple[list[Leftover] | None, bool]:
    """``screen_leftovers``, and whether no use-site rewrite can change the file.

    The second answer is True only when the leftovers are decided and none, the file
    compiles, and no mention is in a position ``UseSiteTransformer`` rewrites: every
    ``Name`` of ``names`` was classified (any other position is undecided) as the
    callee of a call (``X(...)``: the factory keeps the name), a value the plan keeps,
    or an annotation naming a class that stays one; no ``isinstance`` test or
    ``type(p)`` comparison names one, whichever class; no string annotation holds one;
    ``m.X`` is only ever called. Elsewhere (comments, other strings, import
    statements, keyword names) the transformer changes nothing. The caller rules out
    the other transformers (class definitions, backing fields, attribute-dict copies).
    """
    screened = _decided(path, text, plan, names)
    if screened is None:
        return None, False
    screen, tree, found = screened
    if found:
        return _unless_rejected(path, tree, found), False
    untouched = not screen.rewrite_sites and cpython_rejects(path, tree) is None
    return found, untouched


def leftovers_without_values(path: Path, text: str, plan: Plan,
                             names: frozenset[str]) -> list[Leftover] | None:
    """``screen_leftovers`` where no value proof can change the answer, asked of a plan
    that holds no proof yet (``Plan.values`` empty): the screen decides the file, and
    every leftover it finds needs a class (a value use, a leftover only while unproven,
    makes the answer wait: None). ``allow-value-uses`` keeps every value use already."""
    assert not plan.values.verdicts, "asked of a plan that holds proofs"
    screened = _decided(path, text, plan, names)
    if screened is None:
        return None
    screen, tree, found = screened
    if any(not USE_RULES[kind].needs_class for kind in screen.leftover_kinds.values()):
        return None
    return _unless_rejected(path, tree, found)


def screen_kinds(path: Path, text: str, plan: Plan, names: frozenset[str],
                 ) -> tuple[list[tuple[ast.Name | ast.Attribute, UseKind]], dict[Leftover, UseKind]] | None:
    """Where ``screen_leftovers`` decides ``path``: each mention it classified with its
    kind, and each leftover with the kind that made it one (for the tests that keep the
    screen's kinds equal to ``ast_uses.use_kind``'s and to LibCST's)."""
    screened = _decided(path, text, plan, names)
    if screened is None or _unless_rejected(path, screened[1], screened[2]) is None:
        return None
    return screened[0].kinds, screened[0].leftover_kinds


def _unless_rejected(path: Path, tree: ast.Module, found: list[Leftover]) -> list[Leftover] | None:
    """``found``, or None (undecided) when there are leftovers and CPython does not compile
    the file. Leftovers change the plan; the LibCST path would instead reject code that
    parses but does not compile (``return`` outside a function...) and report no
    leftovers. (Without leftovers both answers leave the plan as it is.)"""
    if found and cpython_rejects(path, tree) is not None:
        return None
    return found


def _decided(path: Path, text: str, plan: Plan, names: frozenset[str],
             ) -> tuple[MentionScreen, ast.Module, list[Leftover]] | None:
    """The screen of ``path`` run to the end, its tree and its leftovers; None when
    CPython's tree cannot decide the file exactly."""
    if not identifiers_as_written(text):
        return None  # CPython's AST normalises identifiers (NFKC); LibCST keeps them
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    screen = MentionScreen(text, tree, path, plan, names)
    try:
        return screen, tree, screen.run(tree)
    except Undecided:
        return None
