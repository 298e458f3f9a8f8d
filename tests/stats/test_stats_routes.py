"""Node evaluation is an ordered tuple of routes (sqlanon/stats/evaluate.py): the first that
accepts the nodes answers them, in the order in-process, batch statement, one node, UNION ALL."""

from __future__ import annotations

import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import make_stats  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.stats import evaluate, local  # noqa: E402


def test_the_routes_in_their_order_of_preference(tmp_path):
    assert [r.name for r in evaluate.ROUTES] == ["in_process", "histograms", "batch", "one_node", "union"]
    assert local.warm_up(wait=True)
    case = brute.random_case(random.Random(5), tmp_path, n_qi=3, n_rows=200)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        ok, metric = Requirement([KAnonymity(2)], budget=3).predicate(), METRICS["lm"]()
        nodes = [(0, 0, 0), (1, 1, 0), (1, 1, 1)]
        aggs = lambda n: metric.aggregates(stats, n)  # noqa: E731

        def route(nodes, aggregates=None, metric=None):
            return evaluate.route_of(stats, evaluate.Ask(nodes, ok, aggregates, metric, ())).name

        assert route(nodes, aggs, metric) == "in_process"
        before = stats.nodes_local
        stats.evaluate_many(nodes, ok, aggs, metric=metric)
        assert stats.nodes_local == before + len(nodes)
        stats.local_rows = 0  # every node by SQL
        assert route(nodes, aggs, metric) == "batch"
        assert route(nodes[:1], aggs, metric) == "one_node"
        assert route(nodes[:1]) == "one_node"
        assert route(nodes, aggs) == "union"
        union = stats.evaluate_many(nodes, ok, aggs)
        one = [stats.evaluate(n, ok, aggs(n)) for n in nodes]
        assert [(u.classes, u.suppressed, u.extra) for u in union] == [(o.classes, o.suppressed, o.extra) for o in one]
    finally:
        engine.close()
