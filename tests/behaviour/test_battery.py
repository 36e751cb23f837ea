"""The release-check battery (``battery.py``) on ``fixtures/engine``.

``scripts/release_check.py`` runs the same battery on the published vLLM sources; this
keeps it working in the default run, and checks that it reports what it should.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from . import tally  # noqa: E402
from .battery import Report, run_battery  # noqa: E402
from .scenarios import LOAD_CASES  # noqa: E402
from .twin import load_twin  # noqa: E402


@pytest.fixture(scope="module")
def twin(converted_trees):
    with load_twin(*converted_trees) as loaded:
        yield loaded


def test_battery_passes_on_the_fixture(twin):
    report = run_battery(twin, compile_backend="aot_eager")
    assert report.ok, report.summary()
    assert report.by_section["loaders"] == 2 * len(LOAD_CASES)
    assert report.tensors > 2000
    tally.count("battery on fixtures/engine parameter.py", report.tensors)


def test_battery_reports_failures_instead_of_raising():
    report = Report()
    report.run("section", "passes", lambda: None)
    report.run("section", "fails", lambda: report.same_tensor(torch.zeros(2), torch.ones(2), "x"))
    assert report.cases == 2 and report.tensors == 0
    assert len(report.failures) == 1 and report.failures[0].startswith("section/fails")
    assert "failures: 1" in report.summary()
