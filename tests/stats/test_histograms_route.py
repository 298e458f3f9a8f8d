"""The in-process model route (sqlanon/stats/histograms.py): on small random tables, for each
sensitive-attribute model (distinct, entropy and recursive (c,l)-diversity; equal, ordered and
hierarchical t-closeness) with k-anonymity and a random budget, every node's verdict per class,
suppressed rows, classes and metric equal the SQL route's (the batch statement, ``local_rows=0``)
and the Python twins' (``Requirement.released`` over the classes grouped in Python)."""

from __future__ import annotations

import os
import random
import sys
from collections import Counter

import pytest
from sqlglot import exp

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_batch import all_nodes  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.expr.atoms import col  # noqa: E402
from sqlanon.hierarchy import Hierarchy  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness  # noqa: E402
from sqlanon.privacy.recursive_cl import RecursiveCLDiversity  # noqa: E402
from sqlanon.stats import Statistics, evaluate, histograms  # noqa: E402

MODELS = ["distinct", "entropy", "recursive", "equal", "ordered", "hierarchical"]


def s_tree(case) -> list[list[str]]:
    """A two-level hierarchy of the sensitive values (leaf, half, *)."""
    values = sorted({r[case.sensitive] for r in case.rows})
    return [[v, f"g{i % 2}", "*"] for i, v in enumerate(values)]


def model(name: str, rng: random.Random, tree):
    if name == "distinct":
        return DistinctLDiversity(rng.randint(2, 3))
    if name == "entropy":
        return EntropyLDiversity(rng.choice([1.2, 1.5, 2.0]))
    if name == "recursive":
        return RecursiveCLDiversity(rng.choice([2.0, 3.0]), rng.randint(2, 3))
    if name == "hierarchical":
        return TCloseness(rng.choice([0.1, 0.2, 0.3]), "hierarchical", hierarchy=Hierarchy(attribute="disease", rows=tree))
    return TCloseness(rng.choice([0.1, 0.2, 0.35]), name)


def python_verdicts(case, req, node) -> tuple[list[tuple], int]:
    """Per class (by its generalized key, sorted) the twin's verdict, and the rows it suppresses."""
    groups = brute.group(case, node)
    keys = sorted(groups)
    classes = [{"cnt": len(groups[k]), "s_counts": dict(Counter(r[case.sensitive] for r in groups[k])), "key": k} for k in keys]
    ok = req.released(classes)
    return [(k, v) for k, v in zip(keys, ok)], sum(c["cnt"] for c, v in zip(classes, ok) if not v)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("seed", range(3))
def test_every_node_equals_sql_and_the_python_twin(name, seed, tmp_path, monkeypatch):
    monkeypatch.setattr(histograms, "PREFERRED", histograms.NEEDS)  # every model this route computes
    rng = random.Random(1000 * seed + MODELS.index(name))
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(2, 3), n_rows=rng.randint(40, 220))
    tree = s_tree(case)
    req = Requirement([KAnonymity(rng.randint(1, 4)), model(name, rng, tree)])
    engine = connect(threads=1)
    try:
        hs = [Hierarchy(attribute=q, rows=[list(r) for r in h]) for q, h in zip(case.qis, case.hier_rows)]
        extras = {"sensitive_hierarchy": Hierarchy(attribute="disease", rows=tree)} if name == "hierarchical" else {}
        stats = Statistics(engine, Source.open(case.path), case.qis, hs, sensitive=case.sensitive, needs=req.needs, keep_sets=4, **extras)
        stats.prepare()
        req.bind(stats)
        req.budget = rng.randint(0, case.n // 4)
        ok, metric = req.predicate(), METRICS["precision"]()
        finals = [("x_bad", exp.Sum(this=exp.If(this=col("ok"), true=exp.Literal.number(0), false=exp.Literal.number(1))))]
        nodes = all_nodes(stats)
        rng.shuffle(nodes)
        ask = evaluate.Ask(nodes, ok, None, metric, finals)
        assert evaluate.route_of(stats, ask).name == "histograms"
        before = stats.nodes_local
        got = stats.evaluate_many(nodes, ok, None, metric=metric, extra_finals=finals)
        assert stats.nodes_local == before + len(nodes)
        stats.local_rows = 0  # the same nodes by SQL
        assert evaluate.route_of(stats, ask).name == "batch"
        sql = stats.evaluate_many(nodes, ok, None, metric=metric, extra_finals=finals)
        for node, h, s in zip(nodes, got, sql):
            where = f"{name} seed={seed} node={node}"
            assert (h.node, h.classes, h.rows, h.min_class, h.max_class, h.suppressed, h.bad_classes) == (s.node, s.classes, s.rows, s.min_class, s.max_class, s.suppressed, s.bad_classes), where
            assert h.extra["x_bad"] == s.extra["x_bad"] == h.bad_classes, where
            assert metric.value(stats, node, h) == pytest.approx(metric.value(stats, node, s), rel=1e-12, abs=1e-12), where
            verdicts, suppressed = python_verdicts(case, req, node)
            assert h.suppressed == suppressed and h.bad_classes == sum(1 for _, v in verdicts if not v), where
            assert h.classes == len(verdicts), where
    finally:
        engine.close()


def test_refused_needs_go_to_sql(tmp_path, monkeypatch):
    """A need the route does not compute, one it computes but does not prefer, an expression it
    does not know and ``local_rows=0`` are left to SQL."""
    rng = random.Random(3)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=60)
    req = Requirement([KAnonymity(2), EntropyLDiversity(1.5)])
    engine = connect(threads=1)
    try:
        hs = [Hierarchy(attribute=q, rows=[list(r) for r in h]) for q, h in zip(case.qis, case.hier_rows)]
        stats = Statistics(engine, Source.open(case.path), case.qis, hs, sensitive=case.sensitive, class_column=case.class_column, needs=req.needs.merge(req.needs.__class__(majority_y=True)))
        stats.prepare()
        nodes = all_nodes(stats)
        assert not histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())  # majority_y: no form here
        stats = Statistics(engine, Source.open(case.path), case.qis, hs, sensitive=case.sensitive, needs=req.needs)
        stats.prepare()
        assert not histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())  # entropy l alone: not preferred
        monkeypatch.setattr(histograms, "PREFERRED", histograms.NEEDS)
        assert histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())
        # an ok the evaluator does not know (a string comparison)
        assert not histograms.accepts(stats, nodes, exp.EQ(this=col("cnt"), expression=exp.Literal.string("x")), METRICS["precision"]())
        stats.local_rows = 0
        assert not histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())
    finally:
        engine.close()
