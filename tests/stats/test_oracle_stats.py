"""Oracle tests for Statistics: on small random tables and random tree hierarchies, every number the
generated SQL answers equals a slow pure-Python computation (tests/oracle_brute.py)."""

from __future__ import annotations

import math
import os
import random
import sys

import pytest
from sqlglot import exp

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.expr.atoms import col
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402

SEEDS = list(range(20))
REL = 1e-9


def approx(x):
    return pytest.approx(x, rel=REL, abs=1e-9)


def make_requirement(name: str, rng: random.Random):
    """(library Requirement, brute Spec, whether the class column is asked for)."""
    k = rng.randint(2, 8)
    l_d = rng.randint(2, 3)
    l_e = rng.choice([1.5, 2.0, 2.5])
    t_e = rng.choice([0.1, 0.2, 0.35])
    t_o = rng.choice([0.05, 0.1, 0.2])
    if name == "k":
        return Requirement([KAnonymity(k)]), brute.Spec(k=k), False
    if name == "k+cm":
        return Requirement([KAnonymity(k)]), brute.Spec(k=k), True
    if name == "distinct":
        return Requirement([DistinctLDiversity(l_d)]), brute.Spec(l_distinct=l_d), False
    if name == "entropy":
        return Requirement([EntropyLDiversity(l_e)]), brute.Spec(l_entropy=l_e), False
    if name == "t-equal":
        return Requirement([TCloseness(t_e, "equal")]), brute.Spec(t_equal=t_e), False
    if name == "t-ordered":
        return Requirement([TCloseness(t_o, "ordered")]), brute.Spec(t_ordered=t_o), False
    if name == "all":
        models = [KAnonymity(k), DistinctLDiversity(l_d), EntropyLDiversity(l_e), TCloseness(t_e, "equal"), TCloseness(0.5, "ordered")]
        return Requirement(models), brute.Spec(k=k, l_distinct=l_d, l_entropy=l_e, t_equal=t_e, t_ordered=0.5), True
    raise AssertionError(name)


def make_stats(case, req, with_y, rng):
    needs = req.needs.merge(ClassNeeds(majority_y=with_y))
    hierarchies = [Hierarchy(attribute=q, rows=[list(r) for r in h]) for q, h in zip(case.qis, case.hier_rows)]
    engine = connect()
    stats = Statistics(
        engine,
        Source.open(case.path),
        case.qis,
        hierarchies,
        sensitive=case.sensitive if needs.sensitive else None,
        class_column=case.class_column if with_y else None,
        needs=needs,
        keep_sets=rng.choice([0, 1, 3, 12]),
        materialize_rows=rng.choice([0, 0, 250_000]),  # 0: every node rolls up from a saved set
    )
    stats.prepare()
    return stats


def extra_aggregates(needs: ClassNeeds, with_y: bool) -> list:
    aggs = []
    if needs.distinct_s:
        aggs.append(("x_min_distinct", exp.Min(this=col("distinct_s"))))
    if needs.entropy_s:
        n = exp.Cast(this=col("cnt"), to=exp.DataType.build("DOUBLE"))
        ent = exp.Sub(this=exp.Ln(this=n), expression=exp.Div(this=col("nlogn_s"), expression=n))
        aggs.append(("x_min_entropy", exp.Min(this=ent)))
    if needs.emd_equal:
        aggs.append(("x_max_emd_equal", exp.Max(this=col("emd_equal"))))
    if needs.emd_ordered:
        aggs.append(("x_max_emd_ordered", exp.Max(this=col("emd_ordered"))))
    if with_y:
        aggs.append(("x_sum_maxy", exp.Sum(this=col("maxy"))))
    return aggs


def combined_aggregates(stats, node, metrics, extra):
    """Every metric's aggregates plus ours, as one list (or one callable when a metric binds
    parameters: ``aggregates(stats, node)`` may return ``f(params) -> [(name, expr)]``)."""
    parts = [m.aggregates(stats, node) for m in metrics]
    if not any(callable(p) for p in parts):
        return [a for p in parts for a in p] + extra

    def build(params=None):
        out = []
        for p in parts:
            out.extend(p(params) if callable(p) else p)
        return out + extra

    return build


def pick_nodes(case, rng, count=4):
    nodes = case.all_nodes()
    chosen = {nodes[0], nodes[-1]}
    chosen.update(rng.sample(nodes, min(count, len(nodes))))
    chosen = sorted(chosen, key=sum) if rng.random() < 0.5 else rng.sample(sorted(chosen), len(chosen))
    return chosen


@pytest.mark.parametrize("seed", SEEDS)
def test_statistics_equal_brute_force(seed, tmp_path):
    rng = random.Random(7919 * seed + 11)
    case = brute.random_case(rng, tmp_path)
    nodes = pick_nodes(case, rng)
    configs = ["all", rng.choice(["k", "k+cm"]), rng.choice(["distinct", "entropy", "t-equal", "t-ordered"])]
    for name in configs:
        req, spec, with_y = make_requirement(name, rng)
        stats = make_stats(case, req, with_y, rng)
        try:
            assert stats.rows == case.n
            metric_names = [m for m in METRICS if m != "cm" or with_y]
            metrics = {m: METRICS[m]() for m in metric_names}
            values = {}
            for node in nodes:
                aggs = combined_aggregates(stats, node, metrics.values(), extra_aggregates(stats.needs, with_y))
                ns = stats.evaluate(node, req.predicate(), aggs)
                b = brute.evaluate(case, node, spec)
                where = f"seed={seed} config={name} node={node}"
                assert ns.classes == b.classes, where
                assert ns.rows == b.rows == case.n, where
                assert ns.min_class == b.min_class, where
                assert ns.max_class == b.max_class, where
                assert ns.suppressed == b.suppressed, where
                assert ns.bad_classes == b.bad_classes, where
                if stats.needs.distinct_s:
                    assert ns.extra["x_min_distinct"] == b.min_distinct, where
                if stats.needs.entropy_s:
                    assert ns.extra["x_min_entropy"] == pytest.approx(b.min_entropy, abs=1e-9), where
                if stats.needs.emd_equal:
                    assert ns.extra["x_max_emd_equal"] == pytest.approx(b.max_emd_equal, abs=1e-9), where
                if stats.needs.emd_ordered:
                    assert ns.extra["x_max_emd_ordered"] == pytest.approx(b.max_emd_ordered, abs=1e-9), where
                if with_y:
                    assert ns.extra["x_sum_maxy"] == b.sum_maxy, where
                assert stats.class_histogram(node) == b.histogram, where
                for mname, metric in metrics.items():
                    got = metric.value(stats, node, ns)
                    assert got == approx(b.metrics[mname]), f"{where} metric={mname}"
                    # the search's bounds must really be lower bounds
                    assert metric.prior_bound(stats, node) <= b.metrics[mname] + 1e-9, f"{where} prior {mname}"
                    values[(mname, node)] = (metric.query_bound(stats, node, ns), b.metrics[mname])
            # a query bound holds for the node and every generalization of it
            for mname in metric_names:
                for lo in nodes:
                    qb = values[(mname, lo)][0]
                    if qb is None:
                        continue
                    for hi in nodes:
                        if all(a <= c for a, c in zip(lo, hi)):
                            assert qb <= values[(mname, hi)][1] + 1e-9, f"seed={seed} {mname} bound {lo} -> {hi}"
        finally:
            stats.engine.close()


@pytest.mark.parametrize("seed", [101, 202])
def test_column_frequencies_and_level_rollup(seed, tmp_path):
    """Per-column leaf frequencies (entropy, LM bounds) and level-to-level code maps."""
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=3, depths=[3, 2, 1])
    req, spec, _ = make_requirement("k", rng)
    stats = make_stats(case, req, False, rng)
    try:
        for i, q in enumerate(case.qis):
            h = stats.hierarchies[i]
            counts = {}
            for r in case.rows:
                counts[r[q]] = counts.get(r[q], 0) + 1
            assert stats.column_freqs[i] == [counts.get(leaf, 0) for leaf in h.leaves]
            for lo in range(h.max_level + 1):
                for hi in range(lo, h.max_level + 1):
                    m = h.level_to_level(lo, hi)
                    for row in case.hier_rows[i]:
                        assert h.labels(hi)[m[h.labels(lo).index(row[lo])]] == row[hi]
                leaves = [sum(1 for r in case.hier_rows[i] if r[lo] == lab) for lab in h.labels(lo)]
                assert h.leaves_under(lo) == leaves
    finally:
        stats.engine.close()


def test_entropy_metric_is_suppression_agnostic(tmp_path):
    """ARX's non-uniform entropy does not change with what is suppressed."""
    rng = random.Random(5)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=120)
    node = tuple(1 for _ in case.qis)
    values = []
    for k in (1, 5, 40, 120):
        req = Requirement([KAnonymity(k)])
        stats = make_stats(case, req, False, rng)
        try:
            ns = stats.evaluate(node, req.predicate(), [])
            values.append(METRICS["entropy"]().value(stats, node, ns))
        finally:
            stats.engine.close()
    assert values == [approx(values[0])] * 4
    assert values[0] == approx(brute.evaluate(case, node, brute.Spec(k=1)).metrics["entropy"])
    assert not math.isnan(values[0])


def test_single_sensitive_value_keeps_every_class(tmp_path):
    """With one sensitive value in the whole table every EMD is 0 (no class may vanish from a join)."""
    rng = random.Random(77)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=60)
    for r in case.rows:
        r[case.sensitive] = "42"
    case.path = brute.write_csv(tmp_path / "one_value.csv", case)
    req = Requirement([TCloseness(0.0, "ordered"), TCloseness(0.0, "equal"), DistinctLDiversity(1)])
    stats = make_stats(case, req, True, rng)
    try:
        for node in case.all_nodes():
            ns = stats.evaluate(node, req.predicate(), extra_aggregates(stats.needs, True))
            b = brute.evaluate(case, node, brute.Spec(t_ordered=0.0, t_equal=0.0, l_distinct=1))
            assert (ns.classes, ns.suppressed, ns.min_class) == (b.classes, 0, b.min_class), node
            assert ns.extra["x_max_emd_ordered"] == 0.0 and ns.extra["x_max_emd_equal"] == pytest.approx(0.0, abs=1e-12)
    finally:
        stats.engine.close()
