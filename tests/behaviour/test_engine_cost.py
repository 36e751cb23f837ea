"""``bench/engine_cost.py`` on the fixture engine, with tiny counts: it runs, prints its
table, and the converted parameters compile as one graph with no break and no recompile."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


def test_engine_cost_on_the_fixture(capsys):
    from bench.engine_cost import main

    assert main(["--only", "fixture", "--reps", "1", "--count", "5", "--calls", "2"]) == 0
    table = capsys.readouterr().out
    assert "## fixture (fixtures/engine)" in table
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in table.splitlines()
            if line.startswith("| ")}
    for name in ("ModelWeightParameter", "PackedvLLMParameter", "PerTensorScaleParameter"):
        assert f"construct {name}" in rows and f"memory {name}" in rows, name
    for fn in ("forward F.linear(x, p) * 2", "loader p.load_row_parallel_weight(w)"):
        original, converted = rows[f"compile {fn}: graphs / graph breaks"][2:4]
        assert converted == "1 / 0", (fn, converted, original)
        assert rows[f"compile {fn}: graphs recompiled for a 2nd parameter"][3] == "0", fn
