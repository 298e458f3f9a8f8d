"""The genetic search's in-process fitness (:mod:`sqlanon.search.genetic.local`) against its SQL path.

Oracle: on random tables (flexible and full-domain cuts of random trees, numeric interval cuts, up to 26 QIs so
that the SQL key takes several words), random flexible cuts, random k and budgets, the local
path's result dict equals the SQL statement's for every candidate, with and without the LM, per
column, and under the ``lm_within`` shortcut. A seeded search takes the same path with the local
path on and off. Requirements beyond class sizes, class targets and a frequency set over the cap
fall back to SQL.
"""

from __future__ import annotations

import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from test_genetic import make_ctx, random_table as small_table, write_parquet  # noqa: E402
from test_genetic_oracle import random_table  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, KAnonymity, Requirement  # noqa: E402
from sqlanon.search.genetic import local  # noqa: E402
from sqlanon.search.genetic import planner as genetic  # noqa: E402
from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective  # noqa: E402
from sqlanon.search.genetic.seeding import node_chromosome  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402


@pytest.fixture(autouse=True)
def kernels_loaded():
    """Batches go to SQL until the compiled kernels are loaded: load them first."""
    from sqlanon.stats import local as stats_local

    assert stats_local.warm_up(wait=True)


def candidates(ev, chroms):
    """The batch dicts :meth:`GeneticStats.evaluate` takes, as the evaluator builds them."""
    out = []
    for ch in chroms:
        parts = [ev.part(i, p) for i, p in enumerate(ev.layout.split(ch))]
        out.append({"codes": [p["codes"] for p in parts], "groups": [p["groups"] for p in parts],
                    "leaf_loss": [p["loss"] for p in parts], "group_loss": [p["group_loss"] for p in parts]})
    return out


def same(mine: dict, theirs: dict, where) -> None:
    assert list(mine) == list(theirs), where
    for key in theirs:
        a, b = mine[key], theirs[key]
        if b is None or a is None:
            assert a is None and b is None, (key, a, b, where)
        elif isinstance(b, float) or isinstance(a, float):
            assert float(a) == pytest.approx(float(b), rel=1e-9, abs=1e-9), (key, where)
        else:
            assert int(a) == int(b), (key, a, b, where)


def evaluators(stats, layout, req, weights=None):
    objective, costs = build_objective("lm", {}, None)
    out = []
    for on in (True, False):
        ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs, weights=weights, local=on)
        ev.prepare()
        out.append(ev)
    fast, slow = out
    assert fast.gstats.local_reason is None and slow.gstats.local_reason is not None
    return fast, slow


@pytest.mark.parametrize("seed,n_qi,n", [(41, 3, 150), (42, 6, 260), (43, 26, 220)])
def test_local_batches_equal_the_sql_statement(seed, n_qi, n, tmp_path):
    qis, rows, hs = random_table(seed, n_qi, n)
    path = write_parquet(tmp_path / "t.parquet", rows)
    rng = random.Random(seed)
    eng = connect(threads=2)
    try:
        stats = Statistics(eng, Source.open(path), qis, hs)
        stats.prepare()
        layout = genetic.layout_for(qis, hs, stats.column_freqs, {})
        for k, budget in ((rng.choice([2, 3, 5]), 0), (rng.choice([2, 4, 10]), n // 10), (1, n), (n + 1, n)):
            models = [KAnonymity(k)] + ([KAnonymity(max(1, k - 1))] if k % 2 else [])  # a conjunction of thresholds too
            req = Requirement(models, budget=budget)
            weights = [rng.choice([0.5, 1.0, 0.25]) for _ in qis] if k % 2 else None
            fast, slow = evaluators(stats, layout, req, weights)
            densities = [0.0, 1.0] + [rng.random() for _ in range(12)]
            chroms = [layout.repair([rng.random() < d for _ in range(layout.nbits)]) for d in densities]
            # full-domain cuts too (a level per QI, as the lattice seed gives)
            chroms += [node_chromosome(layout, hs, [rng.randint(0, h.max_level) for h in hs]) for _ in range(4)]
            cands = candidates(fast, chroms)
            for lm, per_column in ((False, False), (True, False), (True, True)):
                got = fast.gstats.evaluate(cands, lm=lm, per_column=per_column)
                want = slow.gstats.evaluate(cands, lm=lm, per_column=per_column)
                for c, (a, b) in enumerate(zip(got, want, strict=True)):
                    same(a, b, (k, budget, lm, per_column, layout.transformation(chroms[c])))
            # the lm_within shortcut: NULL beyond the bound exactly when the SQL path decodes
            for bound in (0, budget, n):
                got = fast.gstats.evaluate(cands, lm=True, lm_within=bound)
                want = slow.gstats.evaluate(cands, lm=True, lm_within=bound)
                for a, b in zip(got, want, strict=True):
                    same(a, b, (k, budget, "within", bound))
            # and the scored figures the search ranks on
            for a, b in zip(fast.score(chroms), slow.score(chroms), strict=True):
                assert (a["suppressed"], a["feasible"]) == (b["suppressed"], b["feasible"])
                assert a["value"] == pytest.approx(b["value"], rel=1e-9, abs=1e-12)
            assert fast.gstats.local_evaluations > 0 and slow.gstats.local_evaluations == 0
            fast.drop()
            slow.drop()
    finally:
        eng.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_local_numeric_intervals_equal_sql(seed, tmp_path, monkeypatch):
    """Interval cuts of a numeric QI beside categorical cuts, random k and budget (with the block
    lists' cache cleared at every entry)."""
    monkeypatch.setattr(local, "BLOCK_CACHE_BYTES", 1)
    rows, ha, hb = small_table(seed)
    path = write_parquet(tmp_path / "r.parquet", rows)
    rng = random.Random(seed)
    k = rng.choice([2, 3, 6])
    ctx = make_ctx(path, {"a": ha, "b": hb, "x": "numeric"}, k, "lm", None, {"numeric": ["x"]}, budget=rng.choice([0, 20, 300]))
    layout = genetic.layout_for(ctx.qis, ctx.hierarchies, ctx.stats.column_freqs, ctx.options)
    fast, slow = evaluators(ctx.stats, layout, ctx.requirement)
    chroms = [layout.repair([rng.random() < d for _ in range(layout.nbits)]) for d in [0.0, 1.0] + [rng.random() for _ in range(10)]]
    chroms += [node_chromosome(layout, ctx.hierarchies, [rng.randint(0, h.max_level) for h in ctx.hierarchies]) for _ in range(4)]
    cands = candidates(fast, chroms)
    for lm, per_column in ((True, False), (True, True), (True, False), (False, False)):
        for a, b in zip(fast.gstats.evaluate(cands, lm=lm, per_column=per_column), slow.gstats.evaluate(cands, lm=lm, per_column=per_column), strict=True):
            same(a, b, (k, per_column))
    fast.drop()
    slow.drop()


@pytest.mark.parametrize("seed,budget", [(8, 3), (11, 40), (5, 300)])
def test_same_seed_same_search_with_local_on_and_off(tmp_path, seed, budget):
    rows, ha, hb = small_table(seed)
    path = write_parquet(tmp_path / "r.parquet", rows)
    runs = []
    for on in (True, False):
        opts = {"numeric": ["x"], "iterations": 300, "population": 16, "seed": 2, "batch": 4, **({} if on else {"local_rows": 0})}
        runs.append(genetic.run(make_ctx(path, {"a": ha, "b": hb, "x": "numeric"}, 6, "lm", None, opts, budget=budget)))
    fast, slow = runs
    assert fast.extra["local_evaluations"] == fast.extra["evaluations"] > 0 and fast.extra["local_reason"] is None
    assert slow.extra["local_evaluations"] == 0 and slow.extra["local_reason"] == "turned off (local_rows=0)"
    assert fast.extra["chromosome"] == slow.extra["chromosome"] and fast.metric_value == pytest.approx(slow.metric_value, rel=1e-12)
    assert fast.suppressed_rows == slow.suppressed_rows and fast.extra["evaluations"] == slow.extra["evaluations"]
    assert [{k: v for k, v in s.items() if k != "seconds"} for s in fast.extra["best_so_far"]] == \
        [{k: v for k, v in s.items() if k != "seconds"} for s in slow.extra["best_so_far"]]


def test_class_targets_sensitive_models_and_large_sets_fall_back_to_sql(tmp_path):
    rows, ha, hb = small_table(3)
    path = write_parquet(tmp_path / "r.parquet", rows)
    # a class target (CM objective): scored by SQL, and the search still runs
    ctx = make_ctx(path, {"a": ha, "b": hb}, 4, "cm", "y", {"iterations": 20, "population": 8, "seed": 1})
    plan = genetic.run(ctx)
    assert plan.extra["local_evaluations"] == 0 and "class or regression targets" in plan.extra["local_reason"]
    # the LM objective on the same data is local
    plan = genetic.run(make_ctx(path, {"a": ha, "b": hb}, 4, "lm", None, {"iterations": 20, "population": 8, "seed": 1}))
    assert plan.extra["local_evaluations"] == plan.extra["evaluations"] > 0
    # a sensitive model: SQL
    eng = connect()
    try:
        stats = Statistics(eng, Source.open(path), ["a", "b"], [ha, hb], sensitive="y", needs=DistinctLDiversity(2).needs)
        stats.prepare()
        layout = genetic.layout_for(["a", "b"], [ha, hb], stats.column_freqs, {})
        req = Requirement([KAnonymity(2), DistinctLDiversity(2)], budget=30)
        objective, costs = build_objective("lm", {}, None)
        ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs)
        ev.prepare()
        assert "more than class sizes" in ev.gstats.local_reason
        ev.score([layout.repair([1] * layout.nbits)])
        assert ev.gstats.local_evaluations == 0 and ev.gstats.evaluations == 1
        ev.drop()
        # a frequency set over the cap: SQL
        stats.local_rows = 3
        req = Requirement([KAnonymity(2)], budget=30)
        ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs)
        ev.prepare()
        assert "local cap 3" in ev.gstats.local_reason
        ev.drop()
    finally:
        eng.close()


def test_count_threshold_reads_size_thresholds_only():
    from sqlglot import exp

    from sqlanon.expr.atoms import col, lit

    assert local.count_threshold(Requirement([KAnonymity(4), KAnonymity(7)]).predicate()) == 7
    assert local.count_threshold(Requirement([]).predicate()) == 1
    assert local.count_threshold(Requirement([KAnonymity(2), DistinctLDiversity(2)]).predicate()) is None
    assert local.count_threshold(exp.GT(this=col("cnt"), expression=lit(3))) is None
    assert local.count_threshold(exp.GTE(this=col("cnt"), expression=lit("3"))) is None
    assert local.count_threshold(exp.GTE(this=col("cnt", "x"), expression=lit(3))) is None
    assert local.count_threshold(exp.Or(this=exp.GTE(this=col("cnt"), expression=lit(3)), expression=exp.Boolean(this=True))) is None


def test_threshold_many_summarizes_group_many():
    """The kernel variant the genetic path calls: per candidate what :func:`group_many`'s classes
    give under a size threshold, on any number of threads, with several key words."""
    import numpy as np

    from sqlanon.stats import local as stats_local

    rng = np.random.default_rng(5)
    sizes = [3, 70, 8, 2, 40] * 6  # 30 QIs: the all-specific key needs several words
    codes = np.stack([np.minimum(s - 1, (s * rng.random(400) ** 2).astype(np.int32)) for s in sizes], axis=1).astype(np.int32)
    fetched = stats_local.LocalSet(np.ascontiguousarray(codes), rng.integers(1, 5, 400).astype(np.int64))
    cands = [[np.arange(s) // max(1, int(rng.integers(1, s + 1))) if rng.random() < 0.7 else np.arange(s) for s in sizes] for _ in range(9)]
    losses = [[rng.random(s) for s in sizes] for _ in cands]
    for k in (1, 2, 5):
        for threads in (1, 3):
            summary, sums = stats_local.threshold_many(fetched, cands, k, losses, threads)
            for c, classes in enumerate(stats_local.group_many(fetched, cands, 1)):
                bad = classes.cnt < k
                assert summary[c].tolist() == [len(classes.cnt), int(classes.cnt.min()), int(classes.cnt[bad].sum()), int(bad.sum())]
                reps = codes[classes.rep[bad]]
                want = [float(np.dot(classes.cnt[bad], losses[c][i][reps[:, i]])) for i in range(len(sizes))]
                assert sums[c].tolist() == pytest.approx(want, rel=1e-12, abs=1e-12)
    summary, sums = stats_local.threshold_many(fetched, cands, 3)
    assert not sums.any() and summary[:, 0].min() >= 1


def test_threshold_many_grouped_by_blocks_reads_losses_at_leaf_codes():
    """Grouped by blocks of QIs in mixed radix (fewer lookups a row) with the per-QI losses read
    at each class's first row's leaf codes (``loss_codes``): the same summaries and the same
    per-QI sums, bit for bit, as grouping by the QIs themselves (the genetic search's per-column
    batches, the share metrics', take the block path)."""
    import numpy as np

    from sqlanon.search.genetic.local import block_list
    from sqlanon.stats import local as stats_local

    rng = np.random.default_rng(11)
    sizes = [5, 3, 40, 4, 6, 2]
    blocks, strides = [[0, 1], [2], [3, 4, 5]], [1, 5, 1, 1, 4, 24]
    codes = np.stack([rng.integers(0, s, 500) for s in sizes], axis=1).astype(np.int32)
    fetched = stats_local.LocalSet(np.ascontiguousarray(codes), rng.integers(1, 4, 500).astype(np.int64))
    by_block = np.stack([sum(codes[:, i].astype(np.int64) * strides[i] for i in b) for b in blocks], axis=1).astype(np.int32)
    blocked = stats_local.LocalSet(np.ascontiguousarray(by_block), fetched.cnt)
    cands = [[np.arange(s) // int(rng.integers(1, s + 1)) for s in sizes] for _ in range(7)]
    losses = [[rng.random(s) for s in sizes] for _ in cands]
    groups = [[int(m.max()) + 1 for m in c] for c in cands]
    block_maps = []
    for c, g in zip(cands, groups):
        maps = []
        for b in blocks:
            radix, m = [], 1
            for i in b:
                radix.append(m)
                m *= g[i]
            maps.append(block_list([c[i] for i in b], radix))
        block_maps.append(maps)
    for k in (2, 4, 9):
        want = stats_local.threshold_many(fetched, cands, k, losses, 1)
        got = stats_local.threshold_many(blocked, block_maps, k, losses, 2, loss_codes=fetched.codes)
        assert got.summary.tolist() == want.summary.tolist() and got.sums.tolist() == want.sums.tolist()
        assert want.sums.any()
    with pytest.raises(ValueError, match="loss_codes have 3 rows"):
        stats_local.threshold_many(blocked, block_maps, 2, losses, 1, loss_codes=fetched.codes[:3])
