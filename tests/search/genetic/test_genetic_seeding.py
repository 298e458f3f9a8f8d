"""The genetic search seeded with the lattice optimum never ends worse than the lattice (LM)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from test_genetic import make_ctx, random_table, write_parquet  # noqa: E402

from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
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
    ev = FlexibleEvaluator(ctx.stats, layout, objective, ctx.requirement, costs)
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


def test_no_seed_for_cm_and_a_flat_numeric_qi_seeded_by_its_two_levels(tmp_path):
    rows, ha, hb = random_table(3)
    path = write_parquet(tmp_path / "t.parquet", [{"a": r["a"], "b": r["b"], "x": r["x"]} for r in rows])
    ctx = make_ctx(path, {"a": ha, "b": hb, "x": "numeric"}, 5, "lm", None, {"numeric": ["x"]})
    layout = genetic.layout_for(ctx.qis, ctx.hierarchies, ctx.stats.column_freqs, ctx.options)
    seeds = lattice_seed(ctx, layout, "lm")
    # a flat numeric hierarchy has two levels: every value its own interval, or one interval
    assert len(seeds) == 1
    x_bits = layout.split(seeds[0])[2]
    assert len(set(x_bits)) == 1
    ctx2 = make_ctx(path, {"a": ha, "b": hb}, 5, "lm", None, {})
    layout2 = genetic.layout_for(ctx2.qis, ctx2.hierarchies, ctx2.stats.column_freqs, ctx2.options)
    assert lattice_seed(ctx2, layout2, "cm") == []


def _bands(values, widths):
    """A numeric QI's bands hierarchy: value, then ``value // w`` per width, then ``*``."""
    return Hierarchy("x", [[str(v)] + [f"{v // w}" for w in widths] + ["*"] for v in values])


@pytest.mark.parametrize("k,budget", [(5, 0), (10, 12), (25, 30)])
def test_seeded_genetic_with_a_numeric_qi_never_loses_to_the_lattice(tmp_path, k, budget):
    """With ``numeric x`` the genetic search cuts x into intervals; the lattice optimum's bands of x
    become interval cuts (the same partition of the rows), so the seeded search, even with no
    iteration, ends no worse than the lattice optimum."""
    rows, ha, hb = random_table(4)
    hx = _bands([1, 2, 3, 5, 8, 13, 21, 34], (4, 16))
    path = write_parquet(tmp_path / "t.parquet", [{"a": r["a"], "b": r["b"], "x": r["x"]} for r in rows])
    options = {"iterations": 0, "population": 2, "seed": 1, "numeric": ["x"]}
    ctx = make_ctx(path, {"a": ha, "b": hb, "x": hx}, k, "lm", None, options, budget=budget)
    lat = optimal.run(Lattice(ctx.stats, ctx.requirement, METRICS["lm"]()))
    layout = genetic.layout_for(ctx.qis, ctx.hierarchies, ctx.stats.column_freqs, ctx.options)
    assert layout.coders[2].numeric
    bits = node_chromosome(layout, ctx.hierarchies, lat.node)
    assert layout.is_valid(bits)
    # the intervals hold exactly the values of the optimum's bands of x
    ivs = layout.coders[2].intervals(layout.split(bits)[2])
    group = hx.leaf_to_level(lat.node[2])
    band = {float(r[0]): group[i] for i, r in enumerate(hx.rows)}
    held = [{band[v] for v in layout.coders[2].distinct if lo <= v <= hi} for lo, hi in ivs]
    assert all(len(h) == 1 for h in held) and len({min(h) for h in held}) == len(held)
    objective, costs = build_objective("lm", {}, None)
    ev = FlexibleEvaluator(ctx.stats, layout, objective, ctx.requirement, costs)
    ev.prepare()
    agg = ev.score([bits])[0]
    ev.drop()
    # the same classes: the same rows suppressed, and the requirement holds
    assert agg["feasible"] and agg["suppressed"] == lat.node_stats.suppressed
    assert lattice_seed(ctx, layout, "lm") == [bits]
    plan = genetic.run(ctx)
    # no worse than the lattice optimum, by the genetic search's own LM (intervals) and by the
    # lattice's (on this table an interval's span is a smaller share of x's range than its band's
    # leaves are of the hierarchy's)
    assert plan.metric_value <= agg["value"] + 1e-9
    assert plan.metric_value <= lat.value + 1e-9
