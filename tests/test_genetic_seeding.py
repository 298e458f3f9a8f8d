"""The genetic search seeded with the lattice optimum never ends worse than the lattice (LM)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from test_genetic import make_ctx, random_table, write_parquet  # noqa: E402

from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective  # noqa: E402
from sqlanon.search.lattice import optimal  # noqa: E402
from sqlanon.search.genetic import planner as genetic
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.search.genetic.seeding import lattice_seed, node_chromosome  # noqa: E402


@pytest.mark.parametrize("seed,k,budget", [(0, 5, 0), (1, 10, 6), (2, 20, 15)])
def test_seeded_genetic_never_loses_to_the_lattice(tmp_path, seed, k, budget):
    rows, ha, hb = random_table(seed)
    path = write_parquet(tmp_path / "t.parquet", [{"a": r["a"], "b": r["b"]} for r in rows])
    ctx = make_ctx(path, {"a": ha, "b": hb}, k, "lm", None, {"iterations": 0, "population": 2, "seed": 1}, budget=budget)
    lat = optimal.run(Lattice(ctx.stats, ctx.requirement, METRICS["lm"]()))
    # the lattice optimum as a chromosome is the same solution: the flexible LM scores it alike
    layout = genetic.layout_for(ctx.qis, ctx.hierarchies, ctx.stats.column_freqs, ctx.options)
    bits = node_chromosome(layout, ctx.hierarchies, lat.node)
    assert layout.is_valid(bits)
    objective, costs = build_objective("lm", {}, None)
    ev = FlexibleEvaluator(ctx.stats, layout, objective, ctx.requirement.predicate(), ctx.requirement.budget, costs)
    ev.prepare()
    agg = ev.score([bits])[0]
    ev.drop()
    assert agg["feasible"] and agg["value"] == pytest.approx(lat.value, abs=1e-9)
    assert lattice_seed(ctx, layout, "lm") == [bits]
    # no iterations at all: the seeded population's best is the lattice optimum (or better)
    plan = genetic.run(ctx)
    assert plan.metric_value <= lat.value + 1e-9
    # without the seed, two random-ish members need not reach it (the seed is what guarantees it)
    unseeded = genetic.run(make_ctx(path, {"a": ha, "b": hb}, k, "lm", None, {"iterations": 0, "population": 2, "seed": 1, "seed_lattice": "false"}, budget=budget))
    assert unseeded.metric_value >= plan.metric_value - 1e-12


def test_no_seed_for_numeric_or_cm(tmp_path):
    rows, ha, hb = random_table(3)
    path = write_parquet(tmp_path / "t.parquet", [{"a": r["a"], "b": r["b"], "x": r["x"]} for r in rows])
    ctx = make_ctx(path, {"a": ha, "b": hb, "x": "numeric"}, 5, "lm", None, {"numeric": ["x"]})
    layout = genetic.layout_for(ctx.qis, ctx.hierarchies, ctx.stats.column_freqs, ctx.options)
    assert lattice_seed(ctx, layout, "lm") == []  # a numeric QI has no levels
    ctx2 = make_ctx(path, {"a": ha, "b": hb}, 5, "lm", None, {})
    layout2 = genetic.layout_for(ctx2.qis, ctx2.hierarchies, ctx2.stats.column_freqs, ctx2.options)
    assert lattice_seed(ctx2, layout2, "cm") == []
