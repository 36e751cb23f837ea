"""Which expressions a statement writes or deletes, so that a rewrite of reads leaves them alone.

Two sets, for two questions:

* ``StoreTargets._stores``: the whole target of an assignment, an augmented or annotated
  assignment, or a ``del`` (``p._f`` in ``p._f = v``). A rewrite that replaces the whole
  statement (``p._f = v`` -> ``set_param_field(...)``) owns these; an expression inside a
  tuple target is not among them.
* ``WrittenTargets._written``: every expression written or deleted, also inside tuple and
  list targets, and the targets of ``for``, comprehensions and ``with ... as``: where a
  rewrite of reads must not act at all (``X.CONST = v`` changed the class itself).
"""

from __future__ import annotations

import libcst as cst

#: The statements whose ``target`` is written or deleted as a whole.
_TargetStatement = cst.AssignTarget | cst.AugAssign | cst.AnnAssign | cst.Del


class StoreTargets(cst.CSTTransformer):
    """Records the ids of the nodes statements write or delete (assignment, augmented or
    annotated assignment and ``del`` targets), so that a rewrite of reads can leave them
    alone."""

    def __init__(self) -> None:
        super().__init__()
        #: ids of target nodes (an attribute read elsewhere is not among them).
        self._stores: set[int] = set()

    def _store(self, target: cst.BaseExpression) -> None:
        """Record ``target``, which a statement writes or deletes as a whole."""
        self._stores.add(id(target))

    def _visit_statement_target(self, node: _TargetStatement) -> None:
        self._store(node.target)

    visit_AssignTarget = visit_AugAssign = visit_AnnAssign = visit_Del = _visit_statement_target


class WrittenTargets(StoreTargets):
    """``StoreTargets`` that also records every expression written inside a target, and
    loop, comprehension and ``with`` targets (``_written``)."""

    def __init__(self) -> None:
        super().__init__()
        #: ids of every expression written or deleted, also inside tuple, list and starred
        #: targets and as a ``for``/``with``/comprehension target (``_note_written``).
        self._written: set[int] = set()

    def _store(self, target: cst.BaseExpression) -> None:
        super()._store(target)
        self._note_written(target)

    def _note_written(self, target: cst.BaseExpression) -> None:
        """Record ``target`` as written, and through tuple, list and starred targets every
        expression inside it (``X.A, b = ...``, ``for (X.A, b) in ...``)."""
        self._written.add(id(target))
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._note_written(element.value)

    def _visit_loop_target(self, node: cst.For | cst.CompFor) -> None:
        self._note_written(node.target)

    visit_For = visit_CompFor = _visit_loop_target

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._note_written(node.asname.name)
