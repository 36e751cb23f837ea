"""``scripts/whole_tree.py``: a second ``apply`` that only refuses again the classes the
first run kept is a no-op (``apply`` exits 1 whenever it refuses a class)."""

from __future__ import annotations

from scripts.whole_tree import parse_apply_summary, second_run_is_no_op

REFUSED_AGAIN = """changed 0 file(s) of 12 scanned (3 parsed)
refused 1 class(es), left unchanged:
  pkg/params.py:4: Keep: used as a class at pkg/user.py:3 (`Keep`), a use no rewrite covers
"""


def test_refusals_again_are_a_no_op() -> None:
    assert second_run_is_no_op(1, parse_apply_summary(REFUSED_AGAIN))


def test_clean_second_run_is_a_no_op() -> None:
    assert second_run_is_no_op(0, parse_apply_summary("changed 0 file(s) of 12 scanned (0 parsed)\n"))


def test_changes_or_errors_are_not() -> None:
    assert not second_run_is_no_op(1, parse_apply_summary(REFUSED_AGAIN.replace("changed 0", "changed 2")))
    assert not second_run_is_no_op(1, parse_apply_summary("changed 0 file(s) of 12 scanned (0 parsed)\n"))
    assert not second_run_is_no_op(2, parse_apply_summary(REFUSED_AGAIN))
