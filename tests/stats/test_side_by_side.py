"""Statements side by side (sqlanon/engine/duckdb.py ``fetch_all_many``, sqlanon/stats/batch.py
``side_by_side``): on an engine of its own in-memory database with two threads, a round of nodes
over small sets is split into statements run at once on two connections; every node's answer is
the one-statement-at-a-time answer, and the optimal search finds the same optimum."""

from __future__ import annotations

import itertools
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import make_stats  # noqa: E402

from sqlanon.dialect import DUCKDB  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.engine.duckdb import DuckDBEngine  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.search.lattice import optimal  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.stats import batch  # noqa: E402

pytestmark = pytest.mark.usefixtures("sql_only")  # the statements, not the in-process evaluator of small sets


@pytest.fixture(autouse=True)
def small_base_sets_too(monkeypatch):
    monkeypatch.setattr(batch, "SIDE_BASE_ROWS", 0)  # side by side over these small base sets too


def _answers(got):
    """The answers, a metric's sums to 12 digits: two statements may add a set's rows in another
    order (the order its grouping left them in), and a float sum then differs in its last bit."""
    return [(ns.node, ns.classes, ns.rows, ns.min_class, ns.max_class, ns.suppressed, ns.bad_classes, _digits(ns.extra)) for ns in got]


def _digits(extra):
    return {k: float(f"{v:.12g}") if isinstance(v, float) else v for k, v in extra.items()} if isinstance(extra, dict) else extra


def test_engine_runs_statements_side_by_side_over_its_tables():
    engine = connect(threads=2)
    try:
        assert isinstance(engine, DuckDBEngine) and engine.shared_tables and engine.concurrency() == 2
        engine.execute(DUCKDB.create_temp("sqlanon_t_1", "SELECT range AS i FROM range(1000)"))
        statements = [(f"SELECT COUNT(*), SUM(i) FROM sqlanon_t_1 WHERE i % {m} = 0", None) for m in (1, 2, 3, 5, 7)]
        before = engine.queries
        got = engine.fetch_all_many(statements)
        assert engine.queries == before + len(statements)
        assert got == [engine.fetch_all(sql) for sql, _ in statements]
        assert len(engine._cursors) == 1  # a second connection, kept
    finally:
        engine.close()
    # one thread, or a caller's connection: one statement at a time, temporary tables
    one = connect(threads=1)
    try:
        assert one.concurrency() == 1
    finally:
        one.close()
    import duckdb

    con = duckdb.connect()
    try:
        borrowed = DuckDBEngine(connection=con, threads=2)
        assert not borrowed.shared_tables and borrowed.concurrency() == 1
        borrowed.close()
    finally:
        con.close()


@pytest.mark.parametrize("seed", range(4))
def test_side_by_side_answers_like_one_at_a_time(seed, tmp_path, monkeypatch):
    rng = random.Random(49979687 * seed + 7)
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(2, 4), n_rows=rng.randint(60, 300))
    req = Requirement([KAnonymity(rng.randint(2, 5))], budget=rng.randint(0, 10))
    metric = METRICS[rng.choice(["precision", "lm", "loss", "discernibility"])]()
    answers, runs = {}, []
    for threads in (1, 2):
        engine = connect(threads=threads)
        try:
            many = engine.fetch_all_many
            monkeypatch.setattr(engine, "fetch_all_many", lambda statements, many=many: runs.append(len(statements)) or many(statements))
            stats = make_stats(engine, case, ClassNeeds())
            nodes = list(itertools.product(*[range(h.max_level + 1) for h in stats.hierarchies]))
            rng2 = random.Random(seed)
            rng2.shuffle(nodes)
            ok = req.predicate()
            got = []
            for start in range(0, len(nodes), 7):  # rounds of a few nodes, as a search asks them
                got += stats.evaluate_many(nodes[start : start + 7], ok, metric=metric)
            answers[threads] = _answers(got)
        finally:
            engine.close()
    assert answers[1] == answers[2]
    assert runs and max(runs) == 2  # the two-thread engine ran statements two at a time


@pytest.mark.parametrize("seed", range(3))
def test_optimal_search_side_by_side(seed, tmp_path):
    rng = random.Random(67867967 * seed + 3)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(100, 300))
    k, budget = rng.randint(2, 6), rng.randint(0, 8)
    found = {}
    for threads in (1, 2):
        engine = connect(threads=threads)
        try:
            stats = make_stats(engine, case, ClassNeeds())
            lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=budget), METRICS["precision"]())
            try:
                res = optimal.run(lattice)
                found[threads] = (tuple(res.node), round(res.value, 12), res.nodes_evaluated)
            except Exception as err:  # unsatisfiable: the same either way
                found[threads] = type(err).__name__
        finally:
            engine.close()
    assert found[1] == found[2]


def test_split_and_width(tmp_path):
    assert batch.split(list(range(7)), 2) == [[0, 1, 2, 3], [4, 5, 6]]
    assert batch.split([1, 2], 3) == [[1], [2]]
    rng = random.Random(1)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=100)
    engine = connect(threads=2)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        nodes = [tuple(0 for _ in stats.qis), tuple(h.max_level for h in stats.hierarchies)]
        assert batch.side_by_side(stats, nodes, 1) == 2
        assert batch.side_by_side(stats, nodes, 2) == 1  # as many statements as connections already
        assert batch.side_by_side(stats, nodes[:1], 1) == 1  # one node: one statement
        batch.SIDE_BASE_ROWS = stats.base.rows + 1  # (restored by the fixture)
        assert batch.side_by_side(stats, nodes, 1) == 1  # a small base set: as it was
    finally:
        engine.close()
