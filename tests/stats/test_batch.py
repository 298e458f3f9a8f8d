"""The batch statement (many lattice nodes per statement, sqlanon/stats/batch.py): every node's
answer equals its one-node statement's, on random tables and hierarchies; the optimal search on
batches finds the exhaustive optimum; the DuckDB fast path binds its lists in the order the
statement numbers them."""

from __future__ import annotations

import itertools
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import check_optimal, make_stats  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.search.lattice import optimal  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.expr.atoms import Params  # noqa: E402
from sqlanon.stats import batch, store  # noqa: E402

#: the batch statements themselves are tested here: no node is answered in-process
pytestmark = pytest.mark.usefixtures("sql_only")

BATCH_METRICS = [m for m in METRICS if m != "cm"]  # CM needs the class column: per-node statements


def all_nodes(stats):
    return list(itertools.product(*[range(h.max_level + 1) for h in stats.hierarchies]))


@pytest.mark.parametrize("seed", range(6))
def test_batch_equals_one_statement_per_node(seed, tmp_path, monkeypatch):
    if seed >= 3:  # the narrowed statement (only the group's levels in its code table: large sets)
        monkeypatch.setattr(batch, "NARROW_BATCH", 10**9)
    if seed >= 4:  # one branch per node (large sets, large source sets)
        monkeypatch.setattr(batch, "BRANCH_ROWS", 0)
        monkeypatch.setattr(batch, "BRANCH_NODES", 10**9)
    if seed % 3 == 1:  # several groups per statement, each rolled up to its own meet
        monkeypatch.setattr(batch, "SPLIT_GROUPS", True)
    rng = random.Random(7919 * seed + 11)
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(2, 4), n_rows=rng.randint(30, 300))
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        if seed % 2:  # a saved set: groups roll up from it when their meet generalizes it
            node = tuple(min(1, h.max_level) for h in stats.hierarchies)
            store.materialize(stats, node, stats.base, 0)
        req = Requirement([KAnonymity(rng.randint(2, 5))], budget=rng.randint(0, 10))
        ok = req.predicate()
        nodes = all_nodes(stats)
        rng.shuffle(nodes)
        for name in BATCH_METRICS:
            metric = METRICS[name]()
            assert batch.supported(stats, metric)
            got = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
            for node, ns in zip(nodes, got):
                one = stats.evaluate(node, ok, metric.aggregates(stats, node))
                assert ns.node == node
                assert (ns.classes, ns.rows, ns.min_class, ns.max_class, ns.suppressed, ns.bad_classes) == (one.classes, one.rows, one.min_class, one.max_class, one.suppressed, one.bad_classes), (name, node)
                assert metric.value(stats, node, ns) == pytest.approx(metric.value(stats, node, one), rel=1e-12, abs=1e-12), (name, node)
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(6))
def test_batched_optimal_equals_exhaustive(seed, tmp_path):
    rng = random.Random(104723 * seed + 5)
    n_qi = rng.randint(2, 4)
    case = brute.random_case(rng, tmp_path, n_qi=n_qi, n_rows=rng.randint(40, 260))
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(), materialize_rows=rng.choice([0, 250_000]))
        k = rng.randint(2, 6)
        for fraction in (0.0, 0.08):
            check_optimal(case, stats, [KAnonymity(k)], brute.Spec(k=k), fraction, BATCH_METRICS, f"seed={seed}")
    finally:
        engine.close()


def test_batched_search_uses_fewer_statements_than_nodes(tmp_path):
    rng = random.Random(3)
    case = brute.random_case(rng, tmp_path, n_qi=4, n_rows=300, depths=[2, 2, 3, 2], weird=False)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        req = Requirement([KAnonymity(3)], budget=12)
        one = optimal.run(Lattice(stats, req, METRICS["precision"]()), batch=1, probes=1)
        many = optimal.run(Lattice(stats, req, METRICS["precision"]()))
        assert many.value == pytest.approx(one.value)
        assert one.statements == one.nodes_evaluated
        assert many.statements < many.nodes_evaluated
    finally:
        engine.close()


def test_duckdb_params_follow_the_statement_numbering(tmp_path):
    rng = random.Random(5)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=120, weird=False)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        nodes = all_nodes(stats)
        for name in ("lm", "precision"):
            metric = METRICS[name]()
            groups = batch.layout(stats, nodes)
            built = Params()
            batch.build(stats, groups, KAnonymity(2).predicate(), metric, built)
            assert list(batch.batch_params(stats, groups, metric)) == list(built)
    finally:
        engine.close()


def test_batch_size_shrinks_with_the_set():
    sizes = [batch.batch_size(n) for n in (10, 20_000, 200_000, 2_000_000, 50_000_000)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == batch.MAX_NODES and sizes[-1] == 1
    assert all(batch.batch_size(n) * n <= batch.JOIN_ROWS for n in (200_000, 2_000_000))


def test_statements_are_cut_at_the_engines_join_rows(tmp_path):
    """A batch is cut into statements of at most ``join_rows // set rows`` nodes, the engine's
    ``join_rows`` when it has one (Spark: a statement per round), else JOIN_ROWS; the answers do
    not depend on the cut."""
    rng = random.Random(3)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=200, weird=False)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        nodes = all_nodes(stats)[:12]
        ok, metric = KAnonymity(3).predicate(), METRICS["precision"]()
        answers = []
        engine.keep_log = True
        for join_rows, statements in ((None, 1), (stats.base.rows * 5, 3), (stats.base.rows, 12)):
            engine.join_rows = join_rows
            engine.log.clear()
            got = stats.evaluate_many(nodes, ok, metric=metric)
            # the batch statements (a set saved on its second use is a CREATE besides them)
            assert sum(1 for text in engine.log if text.lstrip().upper().startswith("WITH")) == statements, join_rows
            answers.append([(ns.classes, ns.suppressed, ns.bad_classes, ns.min_class) for ns in got])
        assert answers[0] == answers[1] == answers[2]
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(4))
def test_saved_meets_answer_like_one_statement_per_node(seed, tmp_path, monkeypatch):
    """Large sets (forced: ``materialize_rows`` 0, a tiny join budget): a group's meet that more
    than one statement would roll up is saved first (``batch.save_meets``), with its rows counted,
    and within ``store.SAVED_ROWS`` times the base set's rows; every node's answer is its one-node
    statement's."""
    monkeypatch.setattr(batch, "NARROW_BATCH", 10**9)  # groups by the widest QI's level, as at 10M rows
    if seed % 2:  # one branch per node, as over sets of BRANCH_ROWS rows
        monkeypatch.setattr(batch, "BRANCH_ROWS", 0)
        monkeypatch.setattr(batch, "BRANCH_NODES", 10**9)
    rng = random.Random(104729 * seed + 3)
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(2, 4), n_rows=rng.randint(60, 300))
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        stats.materialize_rows = 0
        engine.join_rows = 2 * stats.base.rows  # two nodes per statement from the base set
        req = Requirement([KAnonymity(rng.randint(2, 5))], budget=rng.randint(0, 10))
        ok = req.predicate()
        nodes = all_nodes(stats)
        rng.shuffle(nodes)
        metric = METRICS["precision"]()
        got = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
        assert stats.saved, "no meet was saved"
        for fs in stats.saved:
            assert fs.rows == engine.scalar(f'SELECT COUNT(*) FROM "{fs.table}"')


        assert sum(fs.rows for fs in stats.saved) <= store.SAVED_ROWS * stats.base.rows or len(stats.saved) == 1
        for node, ns in zip(nodes, got):
            one = stats.evaluate(node, ok, metric.aggregates(stats, node))
            assert (ns.node, ns.classes, ns.rows, ns.min_class, ns.max_class, ns.suppressed, ns.bad_classes) == (node, one.classes, one.rows, one.min_class, one.max_class, one.suppressed, one.bad_classes)
    finally:
        engine.close()


def test_meets_are_saved_only_within_the_memory_limit(tmp_path, monkeypatch):
    """With the engine's memory limit too small for the base set and one more set of its size,
    no meet is saved (``Statistics.has_room``); with room, they are; the answers are the same."""
    monkeypatch.setattr(batch, "NARROW_BATCH", 10**9)
    rng = random.Random(7)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=250)
    answers = {}
    for budget in (None, 1):  # no limit / a limit no saved set fits
        engine = connect(threads=1)
        try:
            monkeypatch.setattr(engine, "memory_bytes", lambda budget=budget: budget)
            stats = make_stats(engine, case, ClassNeeds())
            stats.materialize_rows = 0
            engine.join_rows = 2 * stats.base.rows
            assert stats.has_room(stats.base.rows) == (budget is None)
            ok = Requirement([KAnonymity(3)], budget=5).predicate()
            nodes = all_nodes(stats)
            metric = METRICS["precision"]()
            saved_meets = []
            save_set = stats.save_set
            monkeypatch.setattr(stats, "save_set", lambda node, frm: saved_meets.append(node) or save_set(node, frm))
            got = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
            assert bool(saved_meets) == (budget is None), budget
            answers[budget] = [(ns.classes, ns.suppressed, ns.bad_classes) for ns in got]
        finally:
            engine.close()
    assert answers[None] == answers[1]


@pytest.mark.parametrize("seed", range(6))
def test_branch_shape_equals_one_statement_per_node(seed, tmp_path, monkeypatch):
    """The branch shape of wide sets (sqlanon/stats/deltas.py, forced here on small random
    tables): each node's key is its keyed set's key plus a lookup per QI it moves; every node's
    answer (and every metric's value) equals its one-node statement's, with or without a saved
    set, over batches of the successors or predecessors of a node and over arbitrary batches."""
    from sqlanon.stats import deltas

    monkeypatch.setattr(deltas, "DELTA_ROWS", 0)
    monkeypatch.setattr(deltas, "DELTA_DIFF", 10**9)
    monkeypatch.setattr(deltas, "DELTA_QIS", 0)
    if seed % 3 == 1:
        monkeypatch.setattr(batch, "SPLIT_GROUPS", True)
    rng = random.Random(15485863 * seed + 1)
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(2, 5), n_rows=rng.randint(30, 300))
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        if seed % 2:
            store.materialize(stats, tuple(min(1, h.max_level) for h in stats.hierarchies), stats.base, 0)
        req = Requirement([KAnonymity(rng.randint(2, 5))], budget=rng.randint(0, 10))
        ok = req.predicate()
        nodes = all_nodes(stats)
        middle = nodes[len(nodes) // 2]
        ups = [middle[:i] + (middle[i] + 1,) + middle[i + 1 :] for i in range(len(middle)) if middle[i] < stats.hierarchies[i].max_level]
        downs = [middle[:i] + (middle[i] - 1,) + middle[i + 1 :] for i in range(len(middle)) if middle[i] > 0]
        rng.shuffle(nodes)
        nodes = nodes[:64]  # an arbitrary batch: a 5-QI lattice's every node took 80 s of one-node checks
        engine.keep_log = True
        for name in BATCH_METRICS:
            metric = METRICS[name]()
            for batch_nodes in (nodes, ups, downs):
                if len(batch_nodes) < 2:
                    continue
                engine.log.clear()
                got = stats.evaluate_many(batch_nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
                if deltas.split_finals(metric, stats) is not None:
                    assert any("keyed" in text for text in engine.log), name
                for node, ns in zip(batch_nodes, got):
                    one = stats.evaluate(node, ok, metric.aggregates(stats, node))
                    assert ns.node == node
                    assert (ns.classes, ns.rows, ns.min_class, ns.max_class, ns.suppressed, ns.bad_classes) == (one.classes, one.rows, one.min_class, one.max_class, one.suppressed, one.bad_classes), (name, node)
                    assert metric.value(stats, node, ns) == pytest.approx(metric.value(stats, node, one), rel=1e-12, abs=1e-12), (name, node)
    finally:
        engine.close()


def test_branch_shape_params_follow_the_statement_numbering(tmp_path):
    from sqlanon.stats import deltas

    rng = random.Random(11)
    case = brute.random_case(rng, tmp_path, n_qi=4, n_rows=150, weird=False)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        nodes = all_nodes(stats)
        for name in ("lm", "loss", "precision"):
            metric = METRICS[name]()
            groups, _ = deltas.canonical(batch.layout(stats, nodes))
            built = Params()
            deltas.build(stats, groups, KAnonymity(2).predicate(), metric, built, ["a"] * len(groups))
            assert list(deltas.params_of(stats, groups, metric)) == list(built)
            for (_, group_nodes, frm, meet), ref in zip(groups, deltas._refs(groups)):
                used = deltas._used([(None, group_nodes, frm, meet)], [ref])[0]
                built = Params()
                deltas.keyed_select(stats, meet or frm, frm, meet, ref, used, built)
                assert deltas.keyed_params(stats, frm, meet, ref) == list(built)
    finally:
        engine.close()


def test_metric_values_are_read_from_their_table(tmp_path, monkeypatch):
    """On DuckDB a metric's value lists are saved once in a table and read from it by every
    batch statement (not bound again each time): the same answers as with the lists bound."""
    rng = random.Random(23)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=120, weird=False)
    ok = KAnonymity(3).predicate()
    got = {}
    for table in (True, False):
        monkeypatch.setattr(batch, "VALUES_TABLE", table)
        engine = connect(threads=1)
        try:
            stats = make_stats(engine, case, ClassNeeds())
            engine.keep_log = True
            metric = METRICS["loss"]()
            nodes = all_nodes(stats)
            answers = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
            got[table] = [(ns.classes, ns.suppressed, metric.value(stats, n, ns)) for n, ns in zip(nodes, answers)]
            assert (batch.values_table(stats, metric, Params()) is not None) == table
            assert any('"vt"' in text for text in engine.log) == table
        finally:
            engine.close()
    assert [a[:2] for a in got[True]] == [a[:2] for a in got[False]]
    assert [a[2] for a in got[True]] == pytest.approx([a[2] for a in got[False]], rel=1e-12, abs=1e-12)
