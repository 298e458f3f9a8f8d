"""Partial sets (sqlanon/stats/store.py ``partial_levels``): a set saved from a large
set is rolled up from the large set with only its most shrinking QI generalized, and that partial
set is kept for later roll-ups. Forced on small random tables, every node's answer equals its
one-node statement's without partial sets, and the optimal search finds the same optimum."""

from __future__ import annotations

import itertools
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import make_stats  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.search.lattice import optimal  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.stats import batch, store  # noqa: E402
from sqlanon.stats.frequency import FrequencySet  # noqa: E402

pytestmark = pytest.mark.usefixtures("sql_only")  # the statements, not the in-process evaluator of small sets


def _answers(got):
    return [(ns.node, ns.classes, ns.rows, ns.min_class, ns.max_class, ns.suppressed, ns.bad_classes) for ns in got]


def _forced(monkeypatch):
    monkeypatch.setattr(store, "PARTIAL_ROWS", 0)
    monkeypatch.setattr(store, "PARTIAL_GAIN", 1.0 + 1e-9)  # any QI whose values shrink at all


@pytest.mark.parametrize("seed", range(4))
def test_partial_sets_answer_like_no_partial_sets(seed, tmp_path, monkeypatch):
    rng = random.Random(15485863 * seed + 5)
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(3, 4), n_rows=rng.randint(150, 300), depths=[2, 2, 2, 2])
    req = Requirement([KAnonymity(rng.randint(2, 5))], budget=rng.randint(0, 10))
    metric = METRICS["precision"]()
    answers = {}
    for forced in (False, True):
        engine = connect(threads=1)
        try:
            with monkeypatch.context() as m:
                if forced:
                    _forced(m)
                m.setattr(batch, "NARROW_BATCH", 10**9)  # large-set shapes: meets saved, groups by the widest QI
                stats = make_stats(engine, case, ClassNeeds())
                engine.join_rows = 2 * stats.base.rows
                nodes = list(itertools.product(*[range(h.max_level + 1) for h in stats.hierarchies]))
                rng2 = random.Random(seed)
                rng2.shuffle(nodes)
                ok = req.predicate()
                got = stats.evaluate_many(nodes, ok, metric=metric)
                got += [stats.evaluate(n, ok) for n in nodes[: len(nodes) // 2]]
                answers[forced] = _answers(got)
                if forced:
                    partials = [fs for fs in stats.saved if fs.table in stats.partials]
                    assert partials, "no partial set was saved"
                    for fs in partials:  # rows counted
                        assert fs.rows == engine.scalar(f'SELECT COUNT(*) FROM "{fs.table}"')
                    # a partial set is kept while others are dropped (keep_sets 4 besides them)
                    assert len(stats.saved) <= stats.keep_sets + len(partials)
        finally:
            engine.close()
    assert answers[True] == answers[False]


def test_partial_levels_picks_the_most_shrinking_qi(tmp_path):
    rng = random.Random(3)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=200, depths=[2, 2, 2])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        base = stats.base
        top = tuple(h.max_level for h in stats.hierarchies)
        eff = [stats.effective_values(i, 0) / stats.effective_values(i, top[i]) for i in range(3)]
        best = max(range(3), key=lambda i: (eff[i], -i))
        got = stats.partial_levels(top, FrequencySet(base.table, base.levels, base.rows))
        if eff[best] >= store.PARTIAL_GAIN:
            assert got == tuple(top[i] if i == best else 0 for i in range(3))
        else:
            assert got is None
        # the inverse Simpson index: equal shares count every value, the top level one
        assert stats.effective_values(0, stats.hierarchies[0].max_level) == pytest.approx(1.0)
        counts = stats.column_freqs[1]
        total = sum(counts)
        assert stats.effective_values(1, 0) == pytest.approx(1 / sum((c / total) ** 2 for c in counts))
        # a node that differs from the set in that QI only: nothing between them
        only = tuple(top[i] if i == best else 0 for i in range(3))
        assert stats.partial_levels(only, base) is None
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(3))
def test_optimal_search_with_partial_sets(seed, tmp_path, monkeypatch):
    rng = random.Random(32452843 * seed + 1)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(100, 300))
    req_args = (rng.randint(2, 6), rng.randint(0, 8))
    found = {}
    for forced in (False, True):
        engine = connect(threads=1)
        try:
            with monkeypatch.context() as m:
                if forced:
                    _forced(m)
                stats = make_stats(engine, case, ClassNeeds())
                req = Requirement([KAnonymity(req_args[0])], budget=req_args[1])
                metric = METRICS["precision"]()
                lattice = Lattice(stats, req, metric)
                try:
                    res = optimal.run(lattice)
                    found[forced] = (tuple(res.node), round(res.value, 12))
                except Exception as err:  # unsatisfiable: the same either way
                    found[forced] = type(err).__name__
        finally:
            engine.close()
    assert found[True] == found[False]


def test_the_released_node_set_is_kept_once(tmp_path):
    """``keep_final``: the released node's set is saved (one roll-up) when the smallest saved set
    it generalizes is over ``materialize_rows``, once, and the node's answers read from it are
    the same; a set at most ``materialize_rows`` keeps nothing."""
    rng = random.Random(21)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=300)
    engine = connect(threads=1)
    try:
        ok = Requirement([KAnonymity(3)], budget=10).predicate()
        small = make_stats(engine, case, ClassNeeds(), materialize_rows=10**9)
        node = tuple(h.max_level // 2 + (h.max_level > 0) for h in small.hierarchies)
        small.keep_final(node)
        assert store.smallest_saved(small, node) is small.base and not small.saved
        stats = make_stats(engine, case, ClassNeeds(), materialize_rows=0)
        before = _answers([stats.evaluate(node, ok, [])])
        stats.keep_final(node)
        kept = store.smallest_saved(stats, node)
        assert kept.levels == node and kept is not stats.base
        saved = len(stats.saved)
        stats.keep_final(node)
        assert len(stats.saved) == saved
        assert _answers([stats.evaluate(node, ok, [])]) == before
        assert stats.class_histogram(node) == small.class_histogram(node)
    finally:
        engine.close()


def test_the_released_node_set_is_one_roll_up_without_a_partial_set(tmp_path, monkeypatch):
    """``keep_final`` after the search: partial sets forced on (any shrinking QI, any set size),
    the released node's set is rolled up straight from the base set (one statement, no partial
    set made for later roll-ups there are none of), and answers as the base set does."""
    rng = random.Random(8)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=300, depths=[2, 2, 2])
    engine = connect(threads=1)
    try:
        ok = Requirement([KAnonymity(3)], budget=10).predicate()
        plain = make_stats(engine, case, ClassNeeds(), materialize_rows=10**9)
        node = tuple(h.max_level for h in plain.hierarchies)
        before = _answers([plain.evaluate(node, ok, [])])
        _forced(monkeypatch)
        stats = make_stats(engine, case, ClassNeeds(), materialize_rows=0)
        assert stats.partial_levels(node, stats.base) is not None  # a partial set would be made on the way
        stats.keep_final(node)
        assert [fs.levels for fs in stats.saved] == [node] and not stats.partials
        assert _answers([stats.evaluate(node, ok, [])]) == before
    finally:
        engine.close()
