"""In-process evaluation over the fetched base frequency set (sqlanon/stats/local/).

Oracle: on small random tables and hierarchies, every node of the lattice gives the same
NodeStats (summary and every final, the metric's and extra ones) in-process and by the SQL batch
statement, for random k, budgets, every metric with batch terms, with and without attribute
weights; the same with the packed class key forced into many words (the multi-word hash path);
the generic grouping by arbitrary per-QI maps equals a dict grouping in Python; searches return
the same optimum either way (and the exhaustive one); a sensitive model, a metric the compiler
does not take, and a base set over the memory budget stay SQL.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import subprocess
import sys
import paths

import numpy as np
import pyarrow as pa
import pytest
from sqlglot import exp

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import check_optimal, make_stats  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.engine.base import Engine  # noqa: E402
from sqlanon.errors import UnsatisfiableError  # noqa: E402
from sqlanon.expr.atoms import col, if_, lit, sum_  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, KAnonymity, Requirement  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.search.lattice.run import LATTICE_SEARCHES  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.search.lightning import planner as lightning  # noqa: E402
from sqlanon.stats import batch, evaluate, local  # noqa: E402
from sqlanon.stats.memory import SEARCH_FIELDS  # noqa: E402

#: every metric whose node statistics come from the batch terms (CM needs the class column)
LOCAL_METRICS = [m for m in METRICS if m != "cm"]


@pytest.fixture(autouse=True, scope="module")
def kernels_loaded():
    """The compiled kernels loaded before the first node (:func:`sqlanon.stats.local.warm_up`)."""
    assert local.warm_up(wait=True)


def all_nodes(stats):
    return list(itertools.product(*[range(h.max_level + 1) for h in stats.hierarchies]))


def metric_of(name, rng, n_qi):
    cls = METRICS[name]
    if cls.weighted and rng.random() < 0.5:
        return cls(weights=[rng.choice([0.0, 0.5, 1.0, 2.0, 3.0]) for _ in range(n_qi)])
    if name == "loss" and rng.random() < 0.5:
        return cls(gs_factor=rng.choice([0.2, 0.8]))  # a suppressed part beside the released one
    return cls()


def extra_finals(rng):
    """Finals as the lattice passes them (a monotone part's suppressed rows) and a few more of
    the compiled shapes."""
    k2 = rng.randint(1, 6)
    return [
        ("mono_suppressed", sum_(if_(exp.GTE(this=col("cnt"), expression=lit(k2)), lit(0), col("cnt")))),
        ("big_classes", sum_(if_(exp.and_(exp.GT(this=col("cnt"), expression=lit(2)), exp.LTE(this=col("cnt"), expression=lit(9))), lit(1), lit(0)))),
        ("half_sq", sum_(exp.Div(this=exp.Mul(this=col("cnt"), expression=col("cnt")), expression=lit(2.0)))),
        ("smallest", exp.Min(this=col("cnt"))),
        ("n_classes", exp.Count(this=exp.Star())),
    ]


def same(a, b, where):
    assert a.node == b.node, where
    assert (a.classes, a.rows, a.min_class, a.max_class, a.suppressed, a.bad_classes) == (b.classes, b.rows, b.min_class, b.max_class, b.suppressed, b.bad_classes), where
    assert a.extra.keys() == b.extra.keys(), where
    for name, v in b.extra.items():
        assert a.extra[name] == pytest.approx(v, rel=1e-9, abs=1e-9), (where, name)


def by_sql(stats, nodes, ok, metric, finals=()):
    keep, stats.local_rows = stats.local_rows, 0
    try:
        return stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric, extra_finals=finals)
    finally:
        stats.local_rows = keep


def check_every_node(stats, rng, where):
    nodes = all_nodes(stats)
    rng.shuffle(nodes)
    for name in LOCAL_METRICS:
        metric = metric_of(name, rng, len(stats.qis))
        k = rng.randint(1, 6)
        ok = Requirement([KAnonymity(k)], budget=rng.randint(0, 10)).predicate()
        finals = extra_finals(rng) if rng.random() < 0.6 else []
        assert local.applies(stats, nodes, ok, metric, finals), name
        before = stats.nodes_local
        got = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric, extra_finals=finals)
        assert stats.nodes_local == before + len(nodes)
        for a, b in zip(got, by_sql(stats, nodes, ok, metric, finals)):
            same(a, b, f"{where} metric={name} k={k} node={a.node}")
        # one node at a time (the lattice's check) gives the same
        node = nodes[0]
        one = stats.evaluate(node, ok, metric.aggregates(stats, node), metric=metric, extra_finals=finals)
        same(one, got[0], f"{where} metric={name} one node")


@pytest.mark.parametrize("seed", range(6))
def test_every_node_equals_the_sql_statement(seed, tmp_path):
    rng = random.Random(6007 * seed + 1)
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(2, 4), n_rows=rng.randint(30, 300))
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        check_every_node(stats, rng, f"seed={seed}")
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(3))
def test_many_key_words_equal_the_sql_statement(seed, tmp_path, monkeypatch):
    """A packed key word holding at most a width of 3: most QIs take a word of their own, so the
    class key is several words (the hash confirms a hit on every word)."""
    monkeypatch.setattr(batch, "WORD", 4)
    rng = random.Random(15485863 * seed + 7)
    case = brute.random_case(rng, tmp_path, n_qi=4, n_rows=rng.randint(100, 300))
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        assert len(batch.words(stats)) >= 3
        check_every_node(stats, rng, f"words seed={seed}")
    finally:
        engine.close()


def dict_grouping(codes, cnt, maps):
    groups: dict = {}
    for row, n in zip(codes, cnt):
        key = tuple(int(m[c]) for m, c in zip(maps, row))
        groups[key] = groups.get(key, 0) + int(n)
    return groups


@pytest.mark.parametrize("seed", range(4))
def test_grouping_by_maps_equals_a_dict(seed):
    """The generic grouping (the genetic search's candidates): arbitrary released codes, some as
    large as 2**40 (a width that fills a key word on its own) or sharing one code for all."""
    rng = np.random.default_rng(seed)
    q, m = 5, 400
    leaves = rng.integers(2, 30, size=q)
    codes = np.stack([rng.integers(0, leaves[i], size=m) for i in range(q)], axis=1).astype(np.int32)
    cnt = rng.integers(1, 9, size=m).astype(np.int64)
    fetched = local.base.LocalSet(np.ascontiguousarray(codes), cnt)
    candidates = []
    for _ in range(6):
        maps = []
        for i in range(q):
            kind = rng.integers(0, 4)
            if kind == 0:
                maps.append(np.zeros(leaves[i], dtype=np.int64))
            elif kind == 1:
                maps.append(rng.integers(0, 1 << 40, size=leaves[i]))
            else:
                maps.append(rng.integers(0, 3, size=leaves[i]))
        candidates.append(maps)
    for maps, many in zip(candidates, local.sets.group_many(fetched, candidates, threads=2)):
        for got in (local.sets.group_by_maps(fetched, maps), many):
            expected = dict_grouping(codes, cnt, maps)
            assert len(got.cnt) == len(expected)
            assert int(got.cnt.sum()) == int(cnt.sum())
            for c, rep in enumerate(got.rep):
                key = tuple(int(mp[x]) for mp, x in zip(maps, codes[rep]))
                assert expected[key] == got.cnt[c]
            for r in range(m):  # every row in the class of its released codes
                assert tuple(int(mp[x]) for mp, x in zip(maps, codes[r])) == tuple(int(mp[x]) for mp, x in zip(maps, codes[got.rep[got.row_class[r]]]))


@pytest.mark.parametrize("seed", range(6))
def test_grouping_in_hash_parts_equals_a_dict(seed, monkeypatch):
    """A set grouped on several threads, each the rows whose key hashes to its part (roll-ups
    and a batch's leftover nodes), gives what one grouping gives: the classes of a dict, their
    counts, their first rows, in first-row order; and a part that would overfill its table (a
    skewed hash) falls back to one grouping with the same answer."""
    rng = np.random.default_rng(seed)
    m, words = int(rng.integers(1, 500)), int(rng.integers(1, 3))
    keys = rng.integers(0, int(rng.integers(1, 60)), size=(m, words)).astype(np.int64) * (1 << 40)
    cnt = rng.integers(1, 9, size=m).astype(np.int64)
    expected: dict = {}
    for r in range(m):
        key = tuple(int(v) for v in keys[r])
        first, total = expected.get(key, (r, 0))
        expected[key] = (first, total + int(cnt[r]))
    want = sorted(expected.values())
    monkeypatch.setattr(local.base, "THREAD_WORK", 1)
    monkeypatch.setattr(local.base, "CORES", 8)  # as many parts as threads, whatever this machine has
    for threads in (1, 2, 3, 5):
        cls_cnt, rep = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int32)
        n = local.rollups._group_in_parts(keys, cnt, threads, cls_cnt, rep)
        assert list(zip(rep[:n].tolist(), cls_cnt[:n].tolist())) == want, threads
    kern = local.base._kernels()
    tiny = np.empty(16, dtype=np.int32)  # 12 classes at most before it reports -1
    hashes = np.empty(m, dtype=np.uint64)
    kern.hash_rows(keys, 0, m, hashes)
    got = kern.group_part(keys, cnt, hashes, 0, 1, tiny, np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int32))
    assert got == (len(want) if len(want) <= 12 else -1)
    calls: list[int] = []
    monkeypatch.setattr(kern, "group_part", lambda *a: calls.append(a[3]) or -1)  # every part overfilled
    cls_cnt, rep = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int32)
    n = local.rollups._group_in_parts(keys, cnt, 2, cls_cnt, rep)
    assert list(zip(rep[:n].tolist(), cls_cnt[:n].tolist())) == want and calls == ([0, 1] if m >= 2 else [])


@pytest.mark.parametrize("room", [0, 400])
def test_groupings_on_reused_buffers_equal_fresh_ones(room, monkeypatch):
    """The roll-ups' working buffers (:class:`local.rollups.Scratch`, grown in steps or at once to the
    room for the largest set) are reused grouping after grouping, larger and smaller sets, whole
    and in hash parts: what a grouping left in a table, a class buffer or the first rows' marks
    never shows in the next one's answer."""
    rng = np.random.default_rng(5)
    monkeypatch.setattr(local.base, "THREAD_WORK", 1)
    monkeypatch.setattr(local.base, "CORES", 8)
    held = local.rollups.Scratch(room)
    for _ in range(30):
        m, words = int(rng.integers(1, 400)), int(rng.integers(1, 3))
        keys = rng.integers(0, int(rng.integers(1, 80)), size=(m, words)).astype(np.int64)
        cnt = rng.integers(1, 9, size=m).astype(np.int64)
        threads = int(rng.choice([1, 2, 3]))
        fresh = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int32)
        n = local.rollups._group_in_parts(keys, cnt, threads, *fresh)
        reused = held.get("classes", m, np.int64, held.rows), held.get("first_rows", m, np.int32, held.rows)
        assert local.rollups._group_in_parts(keys, cnt, threads, *reused, held) == n
        assert (reused[0][:n] == fresh[0][:n]).all() and (reused[1][:n] == fresh[1][:n]).all()
    if room:  # every buffer got its room at once: none was replaced by a larger one
        assert all(len(b) >= room for name, b in held._held.items() if not name.startswith("table"))


def test_no_more_parts_than_cores(monkeypatch):
    """Every part's thread reads all the rows: an engine set to more threads than the machine has
    cores groups in as many parts as cores (and in one below 2 x THREAD_WORK rows)."""
    kern = local.base._kernels()
    seen: list[int] = []
    part = kern.group_part
    monkeypatch.setattr(kern, "group_part", lambda *a: seen.append(a[4]) or part(*a))
    monkeypatch.setattr(local.base, "THREAD_WORK", 10)
    monkeypatch.setattr(local.base, "CORES", 2)
    keys, cnt = np.arange(100, dtype=np.int64).reshape(100, 1) % 7, np.ones(100, dtype=np.int64)
    cls_cnt, rep = np.empty(100, dtype=np.int64), np.empty(100, dtype=np.int32)
    assert local.rollups._group_in_parts(keys, cnt, 16, cls_cnt, rep) == 7 and seen == [2, 2]
    seen.clear()
    assert local.rollups._group_in_parts(keys[:19], cnt[:19], 16, cls_cnt, rep) == 7 and seen == []


@pytest.mark.parametrize("seed", range(4))
def test_a_large_fetched_set_is_sorted_by_its_codes(seed):
    """A large fetched set is sorted (the narrowest QI most significant): the rows of numpy's
    lexicographic sort, counts alongside; QIs whose codes do not all fit a 63-bit key order by
    those that do, the rest in row order (a stable sort)."""
    rng = np.random.default_rng(seed)
    kern = local.base._kernels()
    m = int(rng.integers(1, 3000))
    widths = rng.integers(1, 80, size=5)
    codes = np.ascontiguousarray(np.stack([rng.integers(0, w, m) for w in widths], axis=1).astype(np.int32))
    cnt = rng.integers(1, 9, m).astype(np.int64)
    order = rng.permutation(5)
    got_codes, got_cnt = kern.clustered_rows(codes, cnt, order.astype(np.int64))
    want = np.lexsort([codes[:, i] for i in order[::-1]])
    assert (got_codes == codes[want]).all() and (got_cnt == cnt[want]).all()
    wide = rng.integers(0, 1 << 20, size=(m, 4)).astype(np.int32)  # 3 QIs of 20 bits fit, the 4th not
    wide[0, :] = (1 << 20) - 1
    got_codes, got_cnt = kern.clustered_rows(wide, cnt, np.arange(4, dtype=np.int64))
    want = np.lexsort([wide[:, 2], wide[:, 1], wide[:, 0]])
    assert (got_codes == wide[want]).all() and (got_cnt == cnt[want]).all()


class _Leaves:
    def __init__(self, n: int) -> None:
        self.n = n

    def labels(self, level: int) -> list[str]:
        return [str(v) for v in range(self.n)]


class _FetchedStats:
    """What :func:`local.sets.sorted_from_arrow` reads of a Statistics: the QIs, their columns and leaves."""

    def __init__(self, widths) -> None:
        self.qis = [f"c{i}" for i in range(len(widths))]
        self.hierarchies = [_Leaves(int(w)) for w in widths]
        self.engine = Engine  # the base class's threads: None (the cores)

    def qcol(self, i: int) -> str:
        return f"q{i}"


@pytest.mark.parametrize("seed", range(6))
def test_the_fetched_set_sorted_from_arrow_equals_the_sorted_rows(seed):
    """The fetched set built from the Arrow columns (several chunks, int32 read in place, other
    integer types cast) and sorted by one key: the same codes and counts, in the same order, as
    the rows copied out and sorted (:func:`local.sets.clustered`); None, for the other path, when the
    QIs need over 63 bits, a code is outside its hierarchy's leaves, or a column has NULLs."""
    rng = np.random.default_rng(seed)
    q = int(rng.integers(1, 6))
    widths = rng.integers(1, 300, size=q)
    m = int(rng.integers(1, 5000))
    rows = set()
    while len(rows) < m:  # a base set: distinct code tuples
        rows.add(tuple(int(rng.integers(0, w)) for w in widths))
    codes = np.asarray(sorted(rows, key=lambda _: rng.random()), dtype=np.int32).reshape(m, q)
    cnt = rng.integers(1, 50, m).astype(np.int64)
    cut = int(rng.integers(0, m + 1))
    types = [pa.int32(), pa.int16(), pa.int64(), pa.uint16()]
    columns = {f"q{i}": pa.chunked_array([pa.array(codes[:cut, i], types[i % 4]), pa.array(codes[cut:, i], types[i % 4])]) for i in range(q)}
    table = pa.table({**columns, "n": pa.chunked_array([pa.array(cnt)])})
    stats = _FetchedStats(widths)
    got = local.sets.sorted_from_arrow(stats, table, cnt.copy())
    want = local.sets.clustered(stats, codes, cnt)
    assert got is not None
    assert (got[0] == want[0]).all() and (got[1] == want[1]).all() and got[0].flags["C_CONTIGUOUS"]
    order = sorted(range(q), key=lambda i: (widths[i], i))
    assert (np.lexsort([got[0][:, i] for i in order[::-1]]) == np.arange(m)).all()
    outside = dict(columns, q0=pa.chunked_array([pa.array(np.where(np.arange(m) == m - 1, widths[0], codes[:, 0]), pa.int32())]))
    assert local.sets.sorted_from_arrow(stats, pa.table({**outside, "n": table.column("n")}), cnt.copy()) is None
    nulls = dict(columns, q0=pa.chunked_array([pa.array([None, *codes[1:, 0].tolist()], pa.int32())]))
    assert local.sets.sorted_from_arrow(stats, pa.table({**nulls, "n": table.column("n")}), cnt.copy()) is None
    assert local.sets.sorted_from_arrow(_FetchedStats([1 << 22, 1 << 22, 1 << 22]), table, cnt.copy()) is None


@pytest.mark.parametrize("seed", range(4))
def test_searches_find_the_same_optimum(seed, tmp_path):
    rng = random.Random(7727 * seed + 3)
    n_qi = rng.randint(2, 4)
    case = brute.random_case(rng, tmp_path, n_qi=n_qi, n_rows=rng.randint(60, 260), depths=[rng.randint(1, 2 if n_qi > 2 else 3) for _ in range(n_qi)])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        k = rng.randint(2, 6)
        for fraction in (0.0, 0.08):
            # the exhaustive optimum, found in-process
            check_optimal(case, stats, [KAnonymity(k)], brute.Spec(k=k), fraction, ["loss", "lm", "discernibility", "precision"], f"seed={seed}")
            budget = math.floor(fraction * case.n + 1e-9)
            for mname in ("loss", "lm", "aecs"):
                answers = []
                for cap in (local.LOCAL_ROWS, 0):
                    stats.local_rows = cap
                    req = Requirement([KAnonymity(k)], budget=budget)
                    try:
                        opt = LATTICE_SEARCHES["optimal"](Lattice(stats, req, METRICS[mname]()))
                        light = lightning.run(stats, req, METRICS[mname](), [(0, h.max_level) for h in stats.hierarchies], {"time_limit": 600})
                    except UnsatisfiableError:
                        answers.append(None)
                        continue
                    answers.append((opt.node, round(opt.value, 9), light.node, round(light.value, 9)))
                stats.local_rows = local.LOCAL_ROWS
                assert answers[0] == answers[1], f"seed={seed} budget={budget} metric={mname}"
    finally:
        engine.close()


def test_a_sensitive_model_stays_sql(tmp_path):
    rng = random.Random(3)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=200)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(distinct_s=True))
        req = Requirement([KAnonymity(2), DistinctLDiversity(2)], budget=5)
        nodes = all_nodes(stats)
        metric = METRICS["loss"]()
        assert not local.applies(stats, nodes, req.predicate(), metric)
        got = stats.evaluate_many(nodes, req.predicate(), lambda n: metric.aggregates(stats, n), metric=metric)
        # not by the compiled kernels (their set is never fetched); the histogram route takes
        # them (tests/stats/test_histograms_route.py), else SQL
        route = evaluate.route_of(stats, evaluate.Ask(nodes, req.predicate(), None, metric, ())).name
        assert route in ("histograms", "batch"), route
        assert stats.nodes_evaluated == len(nodes) and len(got) == len(nodes)
        assert stats.memory.local.set is None  # nothing fetched
    finally:
        engine.close()


def test_a_shape_the_compiler_does_not_take_stays_sql(tmp_path):
    rng = random.Random(4)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=200)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        nodes = all_nodes(stats)
        metric = METRICS["lm"]()
        odd = exp.or_(exp.GTE(this=col("cnt"), expression=lit(3)), exp.EQ(this=col("cnt"), expression=lit(1)))
        assert not local.applies(stats, nodes, odd, metric)
        ok = Requirement([KAnonymity(3)], budget=5).predicate()
        nested = [("nested", sum_(if_(col("ok"), if_(exp.GTE(this=col("cnt"), expression=lit(4)), col("cnt"), lit(0)), lit(0))))]
        assert not local.applies(stats, nodes, ok, metric, nested)
        got = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric, extra_finals=nested)
        assert stats.nodes_local == 0
        for a, b in zip(got, by_sql(stats, nodes, ok, metric, nested)):
            same(a, b, "fallback")
    finally:
        engine.close()


def _small_case(rng, tmp_path, n_rows: int, metric: str):
    """A prepared 3-QI case on a one-thread engine: the engine, the stats, every node, ``metric``
    and a k=2 predicate with a budget of 5."""
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=n_rows)
    engine = connect(threads=1)
    stats = make_stats(engine, case, ClassNeeds())
    return engine, stats, all_nodes(stats), METRICS[metric](), Requirement([KAnonymity(2)], budget=5).predicate()


def test_the_cap_is_honoured(tmp_path):
    engine, stats, nodes, metric, ok = _small_case(random.Random(5), tmp_path, 200, "precision")
    try:
        stats.local_rows = stats.base.rows - 1  # one row over the cap
        stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
        assert stats.nodes_local == 0 and stats.memory.local.set is None
        stats.local_rows = stats.base.rows  # at the cap
        stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
        assert stats.nodes_local == len(nodes)
    finally:
        engine.close()


def test_the_memory_limit_bounds_the_threads_holding_node_buffers(tmp_path, monkeypatch):
    """Each thread grouping nodes keeps its buffers for the search's life; within the memory
    limit (what ``enabled`` counts, plus the buffers) a batch's nodes use only as many threads as
    have room, and the answers stay the SQL statement's."""
    monkeypatch.setattr(local.base, "THREAD_WORK", 1)
    monkeypatch.setattr(local.base, "CORES", 8)
    monkeypatch.setattr(local.pool, "threads_for", lambda stats: 4)
    engine, stats, nodes, metric, ok = _small_case(random.Random(3), tmp_path, 250, "lm")
    try:
        per_thread = stats.base.rows * (8 * local.sets.layout(stats).n_words + 28)
        stats.memory.local.budget = local.sets.held_bytes(stats) + per_thread  # room for one more thread's buffers
        assert [local.sets.node_slots(stats, t) for t in (1, 2, 4)] == [1, 2, 2]
        got = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
        for a, b in zip(got, by_sql(stats, nodes, ok, metric)):
            same(a, b, f"bounded threads node={a.node}")
        held = local.rollups.scratch(stats)._held
        assert "node_keys1" in held and "node_keys2" not in held and "node_keys3" not in held
        stats.memory.local.budget = local.sets.held_bytes(stats) - 1  # none: still the one thread
        assert local.sets.node_slots(stats, 4) == 1
        stats.memory.local.budget = 10**15  # room for all: every thread
        assert local.sets.node_slots(stats, 4) == 4
    finally:
        engine.close()


def test_the_search_memory_goes_when_the_search_is_done(tmp_path, monkeypatch):
    """After the search (``Statistics.search_done``, called by every run) the roll-ups, stones,
    moved keys and working buffers are gone, the fetched set stays (no new fetch), and a node
    evaluated after that still equals the SQL statement."""
    monkeypatch.setattr(local.base, "STONE_ROWS", 1)
    monkeypatch.setattr(local.base, "THREAD_WORK", 1)
    monkeypatch.setattr(local.pool, "threads_for", lambda stats: 2)
    rng = random.Random(8)
    engine, stats, nodes, metric, ok = _small_case(rng, tmp_path, 250, "loss")
    try:
        _evaluated_in_batches(stats, rng, nodes, ok, metric)
        held = [name for name in SEARCH_FIELDS if getattr(stats.memory.local, name)]
        assert "scratch" in held and "meets" in held, held
        fetched = local.sets.local_set(stats)
        fetches: list[str] = []
        fetch_arrow = engine.fetch_arrow
        engine.fetch_arrow = lambda *a, **kw: fetches.append("arrow") or fetch_arrow(*a, **kw)
        stats.search_done()
        assert not [name for name in SEARCH_FIELDS if getattr(stats.memory.local, name)]
        assert local.sets.local_set(stats) is fetched
        got = stats.evaluate_many(nodes[-4:], ok, lambda n: metric.aggregates(stats, n), metric=metric)
        for a, b in zip(got, by_sql(stats, nodes[-4:], ok, metric)):
            same(a, b, f"after the search node={a.node}")
        assert fetches == []
    finally:
        engine.close()


def test_a_run_lets_the_search_memory_go(tmp_path, monkeypatch):
    """``anonymize`` ends the search with ``Statistics.search_done`` before the verification."""
    import sqlanon.run.api as api
    from sqlanon.stats.core import Statistics

    calls: list[str] = []
    done = Statistics.search_done
    monkeypatch.setattr(Statistics, "search_done", lambda self: calls.append("done") or done(self))
    verify = api.verify_plan
    monkeypatch.setattr(api, "verify_plan", lambda *a, **kw: calls.append("verify") or verify(*a, **kw))
    adult = str(paths.ROOT / "examples" / "adult")
    qi = {c: os.path.join(adult, f"adult_hierarchy_{c}.csv") for c in ("age", "sex", "race")}
    api.anonymize(keep_others=True, input=os.path.join(adult, "adult.csv"), qi=qi, k=5, delimiter=";", output=str(tmp_path / "out.csv"))
    assert calls == ["done", "verify"]


def test_the_set_is_fetched_once(tmp_path):
    """One statement fetches the set's codes; every node after that runs none."""
    rng = random.Random(6)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=200)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        nodes = all_nodes(stats)
        metric = METRICS["loss"]()
        ok = Requirement([KAnonymity(2)], budget=5).predicate()
        ran = []
        fetch_all, fetch_arrow = engine.fetch_all, engine.fetch_arrow
        engine.fetch_all = lambda *a, **kw: ran.append("all") or fetch_all(*a, **kw)
        engine.fetch_arrow = lambda *a, **kw: ran.append("arrow") or fetch_arrow(*a, **kw)
        for _ in range(3):
            stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
            for node in nodes[:3]:
                stats.evaluate(node, ok, metric.aggregates(stats, node), metric=metric)
        assert ran == ["arrow"]
    finally:
        engine.close()


@pytest.mark.parametrize("search", ["optimal", "lightning"])
def test_the_search_option_keeps_every_node_in_sql(search, adult):
    """``local_rows=0``: no node in-process (the report has no ``nodes_local``), and the same plan
    as with the default."""
    import sqlanon

    qi = {c: adult["qi"][c] for c in adult["columns"][:6]}
    reports = {}
    for cap in (0, None):
        options = {"local_rows": cap} if cap is not None else {}
        if search == "lightning":
            options["step_limit"] = 300
        reports[cap] = sqlanon.anonymize(keep_others=True, input=adult["csv"], delimiter=";", qi=qi, k=10, max_suppression=0.02, metric="loss", search=search, search_options=options, dry_run=True)
    assert reports[0].nodes_local is None
    assert reports[None].nodes_local >= reports[None].nodes_evaluated > 0
    assert reports[None].queries < reports[0].queries
    assert reports[None].transformation == reports[0].transformation
    assert reports[None].metric.value == pytest.approx(reports[0].metric.value, rel=1e-9)


def test_nodes_wait_for_the_kernels_while_they_load(tmp_path, monkeypatch):
    """While the background load of the kernels goes on (a fresh process), a node that may go
    in-process waits for it and goes in-process: the route does not depend on how fast the load
    is; the figures are the SQL statement's."""
    import threading

    rng = random.Random(8)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=150)
    engine = connect(threads=1)
    loading = threading.Event()
    warm: dict = {}

    def load():
        loading.wait(0.3)  # a slow load: done only after the nodes were asked
        warm["ready"] = True

    warm["thread"] = threading.Thread(target=load, daemon=True)
    monkeypatch.setattr(local, "_WARM", warm)  # still loading
    try:
        stats = make_stats(engine, case, ClassNeeds())
        nodes = all_nodes(stats)
        metric = METRICS["loss"]()
        ok = Requirement([KAnonymity(2)], budget=5).predicate()
        warm["thread"].start()
        got = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
        assert warm.get("ready") and stats.nodes_local == len(nodes)
        for a, b in zip(got, by_sql(stats, nodes, ok, metric)):
            same(a, b, "after waiting for the load")
    finally:
        loading.set()
        engine.close()


def test_kernels_that_cannot_load_leave_every_node_to_sql(tmp_path, monkeypatch):
    """numba missing or broken (the load done, not ready): every node by SQL."""
    import threading

    thread = threading.Thread(target=lambda: None)
    thread.start()
    monkeypatch.setattr(local, "_WARM", {"thread": thread, "error": "ImportError: no numba"})
    engine, stats, nodes, metric, ok = _small_case(random.Random(9), tmp_path, 120, "lm")
    try:
        assert not local.applies(stats, nodes, ok, metric)
        stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
        assert stats.nodes_local == 0
    finally:
        engine.close()


def test_threads_give_the_same_answer(tmp_path, monkeypatch):
    """A batch spread over threads (each writes its own nodes' rows) answers exactly as one
    thread does."""
    rng = random.Random(9)
    case = brute.random_case(rng, tmp_path, n_qi=4, n_rows=300)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        nodes = all_nodes(stats)
        metric = METRICS["loss"](weights=[1.0, 2.0, 0.5, 1.0])
        ok = Requirement([KAnonymity(3)], budget=5).predicate()
        monkeypatch.setattr(local.base, "THREAD_WORK", 1)
        monkeypatch.setattr(local.base, "CORES", 8)
        answers = []
        for threads in (1, 3):
            monkeypatch.setattr(local.pool, "threads_for", lambda stats, threads=threads: threads)
            stats.memory.local.meets = {}
            answers.append([(ns.classes, ns.rows, ns.min_class, ns.max_class, ns.suppressed, ns.bad_classes, ns.extra) for ns in local.evaluate(stats, nodes, ok, metric)])
        assert answers[0] == answers[1]
    finally:
        engine.close()


def _kernels_not_loaded(seed, tmp_path, monkeypatch):
    """A small prepared case in a process whose kernels are not loaded (``warm_up`` records its
    calls in ``started``): the engine, the stats, its nodes, an LM metric, a k=2 predicate."""
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=60)
    engine = connect(threads=1)
    started: list[bool] = []
    monkeypatch.setattr(local, "_WARM", {})
    monkeypatch.setattr(local, "warm_up", lambda wait=False: started.append(wait) or False)
    stats = make_stats(engine, case, ClassNeeds())
    return engine, stats, all_nodes(stats), METRICS["lm"](), Requirement([KAnonymity(2)], budget=3).predicate(), started


def test_a_node_that_may_go_in_process_waits_for_the_load(tmp_path, monkeypatch):
    """Kernels not loaded: the first node that may go in-process asks for the load and waits for
    it (``wait=True``), however short the search; one that may not (``local_rows=0``) asks
    nothing."""
    engine, stats, nodes, metric, ok, started = _kernels_not_loaded(10, tmp_path, monkeypatch)
    started.clear()  # what the base scan's timer may have started
    try:
        stats.local_rows = 0
        assert not local.applies(stats, nodes, ok, metric) and not started
        stats.local_rows = local.LOCAL_ROWS
        assert not local.applies(stats, nodes, ok, metric) and started == [True]
    finally:
        engine.close()


def _evaluated_in_batches(stats, rng, nodes, ok, metric):
    """Every node, in random batches of 1-6 (as a search asks them), in-process."""
    got, at = [], 0
    while at < len(nodes):
        size = rng.randint(1, 6)
        got += stats.evaluate_many(nodes[at:at + size], ok, lambda n: metric.aggregates(stats, n), metric=metric)
        at += size
    return got


def _batches_equal_sql(stats, rng, where: str) -> tuple:
    """Every node, shuffled, in random batches (:func:`_evaluated_in_batches`) under a random
    metric and k-anonymity predicate, equals the SQL statement; returns the nodes, the
    predicate and the metric."""
    nodes = all_nodes(stats)
    rng.shuffle(nodes)
    metric = metric_of(rng.choice(LOCAL_METRICS), rng, len(stats.qis))
    ok = Requirement([KAnonymity(rng.randint(2, 5))], budget=rng.randint(0, 10)).predicate()
    got = _evaluated_in_batches(stats, rng, nodes, ok, metric)
    for a, b in zip(got, by_sql(stats, nodes, ok, metric)):
        same(a, b, f"{where} node={a.node}")
    return nodes, ok, metric


@pytest.mark.parametrize("seed", range(3))
def test_nodes_on_kept_buffers_equal_the_sql_statement(seed, tmp_path, monkeypatch):
    """Batches of nodes on three threads, each taking the next node as it finishes one, on
    buffers kept from batch to batch (grown for a larger set, reused for smaller ones): every
    node equals the SQL statement, and the threads' buffers are the ones kept."""
    monkeypatch.setattr(local.base, "THREAD_WORK", 1)
    monkeypatch.setattr(local.base, "CORES", 8)
    monkeypatch.setattr(local.pool, "threads_for", lambda stats: 3)
    rng = random.Random(31 * seed + 1)
    engine = connect(threads=1)
    ran: list[int] = []
    on, split = local.nodes_on_threads, local._evaluate_split
    monkeypatch.setattr(local, "nodes_on_threads", lambda stats, tasks, items, threads: ran.append(len(items)) or on(stats, tasks, items, threads))
    monkeypatch.setattr(local, "_evaluate_split", lambda *a: ran.append(1) or split(*a))  # a batch's leftover node, over all threads
    try:
        case = brute.random_case(rng, tmp_path, n_qi=rng.randint(3, 4), n_rows=rng.randint(150, 300))
        stats = make_stats(engine, case, ClassNeeds())
        nodes, _, _ = _batches_equal_sql(stats, rng, f"kept buffers seed={seed}")
        held = local.rollups.scratch(stats)._held
        assert sum(ran) == len(nodes) and max(ran) >= 3  # every node grouped once, some batches on 3 threads
        assert {"moved_keys", "node_keys1", "node_keys2", "table0", "node_classes2", "node_first_rows1"} <= set(held)
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(4))
def test_stepping_stones_equal_the_sql_statement(seed, tmp_path, monkeypatch):
    """A source over STONE_ROWS rows is first rolled up to a stepping stone (an evaluated node it
    generalizes with few classes, or the source with its most shrinking QI raised), kept apart:
    with the threshold at a few rows nearly every batch goes through stones, on two threads, and
    every node still equals the SQL statement."""
    from sqlanon.stats import store

    monkeypatch.setattr(local.base, "STONE_ROWS", 1)
    monkeypatch.setattr(local.base, "THREAD_WORK", 1)
    monkeypatch.setattr(local.base, "SORT_ROWS", 1)  # the fetched set sorted, as a large one is
    monkeypatch.setattr(store, "PARTIAL_GAIN", 1.01)
    rng = random.Random(7919 * seed + 3)
    engine = connect(threads=2)
    made = []
    stone = local.rollups.stepping_stone
    monkeypatch.setattr(local.rollups, "stepping_stone", lambda *a: made.append(stone(*a)) or made[-1])
    try:
        for _attempt in range(20):  # a case whose base set has rows to roll up
            case = brute.random_case(rng, tmp_path, n_qi=rng.randint(3, 4), n_rows=rng.randint(150, 300))
            stats = make_stats(engine, case, ClassNeeds())
            if stats.base.rows >= 12:
                break
        _, ok, metric = _batches_equal_sql(stats, rng, f"stones seed={seed}")
        stones = stats.memory.local.stones
        assert stones and any(s is not None for s in made), (made, stats.base.rows)
        fetched = local.sets.local_set(stats)
        order = sorted(range(len(stats.qis)), key=lambda i: (len(stats.hierarchies[i].labels(0)), i))
        assert (np.lexsort([fetched.codes[:, i] for i in order[::-1]]) == np.arange(fetched.rows)).all()  # fetched sorted
        for levels, (_codes, cnt, _keys) in stones.items():  # a stone is its levels' grouping of the base set
            assert int(cnt.sum()) == stats.rows and len(cnt) == stats.evaluate(levels, ok, metric.aggregates(stats, levels), metric=metric).classes
    finally:
        engine.close()


def test_a_stepping_stone_is_an_evaluated_node_or_a_partial_set(tmp_path):
    """An evaluated node between the source and the target with under a quarter of the source's
    rows wins (the fewest classes, used once); else the source with its most shrinking QI at the
    target's level; else none."""
    rng = random.Random(12)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=200)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        top = tuple(h.max_level for h in stats.hierarchies)
        leaves = (0, 0, 0)
        stats.sets.seen.clear()
        stats.sets.seen[(1, 0, 0)] = 40
        stats.sets.seen[top] = 1  # the target itself: never its own stone
        stats.sets.seen[(0, 1, 0)] = 10
        assert local.rollups.stepping_stone(stats, top, leaves, 100) == (0, 1, 0)
        assert (0, 1, 0) not in stats.sets.seen  # used once
        assert local.rollups.stepping_stone(stats, top, leaves, 100) is None or local.rollups.stepping_stone(stats, top, leaves, 100) != (1, 0, 0)
        stats.sets.seen.clear()
        partial = stats.partial_levels(top, local.rollups._Levels(leaves))
        assert local.rollups.stepping_stone(stats, top, leaves, 100) == partial
    finally:
        engine.close()


def test_spread_by_weights_covers_every_item_once():
    """Slices of about equal weight, each item in exactly one, in order, on at most the threads."""
    rng = random.Random(5)
    for _ in range(200):
        n = rng.randint(1, 40)
        weights = [rng.choice([1, 10, 1000, 200_000]) for _ in range(n)]
        threads = rng.randint(1, 4)
        seen: list[tuple[int, int]] = []
        local.pool.spread(n, 0, threads, lambda a, z: seen.append((a, z)), weights=weights)
        assert sorted(i for a, z in seen for i in range(a, z)) == list(range(n))
        assert 1 <= len(seen) <= threads and all(z > a for a, z in seen)


def test_the_base_scan_starts_the_load(tmp_path, monkeypatch):
    """The base scan's timer starts the load in the background (not waiting) when it fires; one
    cancelled before it fires starts nothing."""
    engine, stats, nodes, metric, ok, started = _kernels_not_loaded(13, tmp_path, monkeypatch)
    started.clear()  # what the base scan's timer may have started
    try:
        local.warm_up_during(0.0).join()
        assert started == [False]
        timer = local.warm_up_during(60.0)
        timer.cancel()
        timer.join()
        assert started == [False]
    finally:
        engine.close()


def _fresh_route(stats) -> None:
    """Forget the budget and the route decided (as a new Statistics would start)."""
    stats.memory.local.budget, stats.memory.local.route, stats.memory.local.set = None, None, None


def test_the_memory_budget_decides_the_route(tmp_path, monkeypatch):
    """Fake budgets, no row count: a base set whose fetched codes, kept roll-ups and buffers
    (``held_bytes``) fit the budget goes in-process, one byte less and it goes by SQL, the same
    figures either way; the route taken and why is reported (``route``)."""
    engine, stats, nodes, metric, ok = _small_case(random.Random(14), tmp_path, 200, "lm")
    try:
        need = local.sets.held_bytes(stats)
        assert need == stats.base.rows * (4 * 3 + 16) * (3 + 2 * local.base.KEPT + local.base.STONES)
        # the engine's memory is not this process's here (as a server's): the budget is the limit
        monkeypatch.setattr(type(engine), "held_bytes", lambda self: None)
        monkeypatch.setattr(local.sets, "available_bytes", lambda: 10**15)
        monkeypatch.setattr(type(engine), "memory_bytes", lambda self: need - 1)
        _fresh_route(stats)
        by_statement = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
        assert stats.nodes_local == 0 and stats.memory.local.set is None
        assert local.sets.route(stats).startswith(f"sql: {stats.base.rows:,} tuples need")
        monkeypatch.setattr(type(engine), "memory_bytes", lambda self: need)
        _fresh_route(stats)
        in_process = stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)
        assert stats.nodes_local == len(nodes)
        assert local.sets.route(stats).startswith(f"in-process: {stats.base.rows:,} tuples need")
        for a, b in zip(in_process, by_statement):
            same(a, b, f"budget route node={a.node}")
    finally:
        engine.close()


def test_without_an_engine_limit_the_budget_is_half_the_available_memory(tmp_path, monkeypatch):
    """No engine memory limit (a server engine): the budget is AVAILABLE_SHARE of the memory
    available (faked here), and decides as the engine's limit does."""
    engine, stats, nodes, metric, ok = _small_case(random.Random(16), tmp_path, 200, "lm")
    try:
        need = local.sets.held_bytes(stats)
        monkeypatch.setattr(type(engine), "memory_bytes", lambda self: None)
        monkeypatch.setattr(type(engine), "held_bytes", lambda self: None)
        monkeypatch.setattr(local.sets, "available_bytes", lambda: 2 * need)
        _fresh_route(stats)
        assert local.sets.budget(stats) == int(local.sets.AVAILABLE_SHARE * 2 * need) and local.sets.enabled(stats)
        monkeypatch.setattr(local.sets, "available_bytes", lambda: 2 * need - 2)
        _fresh_route(stats)
        assert not local.sets.enabled(stats) and local.sets.route(stats).startswith("sql:")
        stats.local_rows = stats.base.rows - 1  # the row cap (a sanity bound) still holds
        monkeypatch.setattr(local.sets, "available_bytes", lambda: 10**15)
        _fresh_route(stats)
        assert not local.sets.enabled(stats) and "over local_rows" in local.sets.route(stats)
    finally:
        engine.close()


def test_the_budget_leaves_the_engine_its_share_of_the_same_memory():
    """Fake memory figures: the in-process path and an engine in this process (DuckDB) take the
    same memory, so the budget is the room (the limit, at most a share of the available memory)
    less the engine's share, never less than the engine holds; a server engine keeps nothing
    of this process's; the parts add up to the room and the budget is never negative."""
    MiB = 2**20
    share, engine_share = local.sets.AVAILABLE_SHARE, local.sets.ENGINE_SHARE
    got = local.sets.plan_budget(1024 * MiB, 64 * 1024 * MiB, 10 * MiB)
    assert got.room == 1024 * MiB and got.engine == int(engine_share * 1024 * MiB) and got.bytes == got.room - got.engine
    assert got.bytes < 1024 * MiB  # the old budget (the limit itself) counted DuckDB's memory twice
    tight = local.sets.plan_budget(1024 * MiB, 600 * MiB, 10 * MiB)  # little available: half of it
    assert tight.room == int(share * 600 * MiB) and tight.bytes == tight.room - int(engine_share * tight.room)
    holding = local.sets.plan_budget(1024 * MiB, 64 * 1024 * MiB, 900 * MiB)  # the engine holds most of its room
    assert holding.engine == 900 * MiB and holding.bytes == 124 * MiB
    full = local.sets.plan_budget(1024 * MiB, 64 * 1024 * MiB, 5000 * MiB)  # more than the room: nothing left
    assert full.bytes == 0 and full.engine == full.room
    server = local.sets.plan_budget(1024 * MiB, 64 * 1024 * MiB, None)
    assert server.bytes == server.room == 1024 * MiB and server.engine == 0
    unlimited = local.sets.plan_budget(None, 8 * 1024 * MiB, 0)
    assert unlimited.room == int(share * 8 * 1024 * MiB) and unlimited.bytes == unlimited.room - int(engine_share * unlimited.room)
    assert "left to the engine" in got.describe() and "left to the engine" not in server.describe()


def test_duckdb_keeps_its_share_of_the_budget_and_the_route_says_so(tmp_path, monkeypatch):
    """On DuckDB the budget is its memory limit less what it keeps (its share, at least the
    memory it holds: the base set), read from the engine itself; the route says the budget and
    the engine's part, and a set that fits the limit but not what DuckDB leaves goes by SQL."""
    engine, stats, nodes, metric, ok = _small_case(random.Random(17), tmp_path, 200, "lm")
    try:
        held = engine.held_bytes()
        assert held is not None and held > 0  # the base set and code tables are DuckDB's memory
        need = local.sets.held_bytes(stats)
        monkeypatch.setattr(local.sets, "available_bytes", lambda: 10**15)
        limit = int(need / (1 - local.sets.ENGINE_SHARE)) + held + 4096
        monkeypatch.setattr(type(engine), "memory_bytes", lambda self: limit)
        _fresh_route(stats)
        figures = local.sets.plan_budget(limit, 10**15, engine.held_bytes())
        assert local.sets.budget(stats) == figures.bytes < limit
        assert local.sets.enabled(stats)
        route = local.sets.route(stats)
        assert route.startswith("in-process:") and figures.describe() in route and "left to the engine" in route
        monkeypatch.setattr(type(engine), "memory_bytes", lambda self: need + 1)  # the limit alone would fit
        _fresh_route(stats)
        assert not local.sets.enabled(stats) and "left to the engine" in local.sets.route(stats)
    finally:
        engine.close()


def test_the_available_memory_is_read():
    """psutil's figure or /proc/meminfo's, not the fallback: on Linux within a factor of two of
    the kernel's MemAvailable read here."""
    got = local.sets.available_bytes()
    assert got != local.sets.FALLBACK_AVAILABLE
    with open("/proc/meminfo", encoding="ascii") as fh:
        kernel = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("MemAvailable:"))
    assert kernel / 2 <= got <= kernel * 2


def test_the_base_scan_starts_the_kernel_load_after_its_statement(tmp_path, monkeypatch):
    """By default (``AFTER_SCAN``) the kernels start loading once the base scan's statement has
    run (their memory does not come on top of the scan's), when nodes may go in-process; not
    with ``local_rows=0`` or a requirement needing more than class sizes."""
    rng = random.Random(15)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=60)
    engine = connect(threads=1)
    calls = []
    executed = engine.execute

    def execute(stmt, *a, **kw):
        calls.append("statement")
        return executed(stmt, *a, **kw)

    monkeypatch.setattr(engine, "execute", execute)
    monkeypatch.setattr(local, "warm_up", lambda wait=False: calls.append("load"))
    monkeypatch.setattr(local, "compiled", lambda: True)  # a filled kernel cache (an empty one: the next test)
    monkeypatch.setattr(local, "warm_up_during", lambda seconds=local.SCAN_SECONDS: pytest.fail("no load during the scan"))
    try:
        make_stats(engine, case, ClassNeeds())
        assert calls.count("load") == 1 and "statement" in calls[:calls.index("load")]
        calls.clear()
        make_stats(engine, case, ClassNeeds(distinct_s=True))
        assert "load" not in calls
        monkeypatch.setattr(local, "LOCAL_ROWS", 0)
        make_stats(engine, case, ClassNeeds())
        assert "load" not in calls
    finally:
        engine.close()


@pytest.mark.parametrize("after_scan, cache", [(False, "filled"), (True, "empty")])
def test_the_base_scan_times_the_kernel_load(tmp_path, monkeypatch, after_scan, cache):
    """With ``AFTER_SCAN`` off, or on an empty kernel cache (the load compiles: it overlaps the
    scan), the base scan starts a load timer (and stops it after the scan) when nodes may go
    in-process; none with ``local_rows=0`` or a requirement needing more than class sizes."""
    monkeypatch.setattr(local, "AFTER_SCAN", after_scan)
    monkeypatch.setattr(local, "compiled", lambda: cache == "filled")
    rng = random.Random(15)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=60)
    engine = connect(threads=1)
    timers = []

    class Timer:
        def __init__(self):
            self.cancelled = False
            timers.append(self)

        def cancel(self):
            self.cancelled = True

    monkeypatch.setattr(local, "warm_up_during", lambda seconds=local.SCAN_SECONDS: Timer())
    try:
        make_stats(engine, case, ClassNeeds())
        assert len(timers) == 1 and timers[0].cancelled
        make_stats(engine, case, ClassNeeds(distinct_s=True))
        assert len(timers) == 1
        monkeypatch.setattr(local, "LOCAL_ROWS", 0)
        make_stats(engine, case, ClassNeeds())
        assert len(timers) == 1
    finally:
        engine.close()


@pytest.mark.parametrize("numba_first", [False, True], ids=["sqlanon-imports-numba", "host-imported-numba-first"])
def test_numba_leaves_the_process_streams_alone(numba_first):
    """Loading the kernels never lets numba's error highlighting rebind sys.stdout and sys.stderr
    (colorama's init/deinit, process-wide: from the background loading thread that closed a CLI
    test runner's stdout under it). numba first imported by sqlanon: highlighting off, plain
    messages. numba imported by the host before sqlanon with highlighting on (as a test module's
    ``pytest.importorskip("numba")`` did): its colours stay, colorama is never called. A fresh
    interpreter each."""
    import subprocess

    code = (
        "import os, colorama; calls = []\n"
        "for name in ('init', 'reinit', 'deinit'):\n"  # numba binds colorama's functions when it is imported
        "    setattr(colorama, name, lambda *a, _n=name, **k: calls.append(_n))\n"
        + ("import numba\n" if numba_first else "")
        + "import sqlanon.stats.local.kernels\n"
        "from numba.core import errors\n"
        "from numba.core.types import functions\n"
        "for scheme in (errors.termcolor(), functions._termcolor):\n"
        "    assert 'x' in scheme.errmsg('x') and 'x' in scheme.highlight('x')\n"
        "errors.TypingError('a message')\n"
        "plain = type(errors.termcolor()).__name__ == 'NOPColorScheme'\n"
        f"assert not calls and plain is not {numba_first!r}, (calls, type(errors.termcolor()))\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"}
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode == 0 and got.stdout.strip() == "ok", got.stderr[-2000:]


@pytest.mark.parametrize("seed", range(4))
def test_the_radix_sort_on_threads_equals_the_one_thread_sort(seed, monkeypatch):
    """``local.sets.radix_sorted`` over row slices on threads gives the one-thread kernel's order
    (stable: ties in row order) for every slice count, key width and payload type."""
    rng = np.random.default_rng(seed)
    kern = local.base._kernels()
    monkeypatch.setattr(local.base, "THREAD_WORK", 7)
    monkeypatch.setattr(local.base, "CORES", 8)
    for bits in (1, 5, 16, 17, 33, 63):
        m = int(rng.integers(1, 300))
        key = rng.integers(0, 1 << min(bits, 62), size=m, dtype=np.int64) if bits < 63 else rng.integers(0, (1 << 63) - 1, size=m, dtype=np.int64)
        key[rng.integers(0, m, size=m // 3)] = key[0]  # ties
        payload = rng.integers(0, 1000, size=m).astype(rng.choice([np.int64, np.int32]))
        given = key.copy(), payload.copy()
        want_key, want_payload = kern.radix_sort(key, payload, bits)
        for threads in (1, 2, 3, 5):
            got_key, got_payload = local.sets.radix_sorted(key, payload, bits, threads)
            assert got_key.tolist() == want_key.tolist() and got_payload.tolist() == want_payload.tolist(), (bits, threads)
            assert got_payload.dtype == payload.dtype
            assert (key == given[0]).all() and (payload == given[1]).all()  # the inputs are left as they were
        order = np.argsort(key, kind="stable")
        assert want_key.tolist() == key[order].tolist() and want_payload.tolist() == payload[order].tolist()


@pytest.mark.parametrize("seed", range(4))
def test_the_first_row_order_on_threads_equals_the_one_thread_order(seed, monkeypatch):
    """``local.rollups.in_first_row_order`` (classes marked, then counted and placed per row slice on
    threads) gives ``first_row_order``'s classes in the same order for every slice count."""
    rng = np.random.default_rng(seed)
    kern = local.base._kernels()
    monkeypatch.setattr(local.base, "THREAD_WORK", 5)
    monkeypatch.setattr(local.base, "CORES", 8)
    for _ in range(6):
        m = int(rng.integers(1, 400))
        n = int(rng.integers(1, m + 1))
        reps = rng.permutation(m)[:n].astype(np.int32)  # the parts' first rows, in parts' order
        cnts = rng.integers(1, 100, size=n).astype(np.int64)
        want_rep, want_cnt = np.full(m, -7, dtype=np.int32), np.full(m, -7, dtype=np.int64)
        k = kern.first_row_order(m, reps, cnts, want_rep, want_cnt)
        assert k == n and want_rep[:n].tolist() == sorted(reps.tolist())
        for threads in (1, 2, 3, 7):
            rep, cnt = np.full(m, -7, dtype=np.int32), np.full(m, -7, dtype=np.int64)
            # on a marks buffer a grouping before left dirty, or on fresh zeros
            marks = rng.integers(-3, 50, size=m + int(rng.integers(0, 9))).astype(np.int32) if threads % 2 else None
            assert local.rollups.in_first_row_order(m, reps, cnts, rep, cnt, threads, marks) == n
            assert rep[:n].tolist() == want_rep[:n].tolist() and cnt[:n].tolist() == want_cnt[:n].tolist(), (m, n, threads)
            assert dict(zip(rep[:n].tolist(), cnt[:n].tolist())) == dict(zip(reps.tolist(), cnts.tolist()))


@pytest.mark.parametrize("seed", range(3))
def test_the_leaf_keys_on_threads_equal_the_packed_keys(seed, monkeypatch, tmp_path):
    """``local.sets.leaf_keys`` (row slices on threads into one array) gives ``packed_keys``'s words."""
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(local.base, "THREAD_WORK", 3)
    monkeypatch.setattr(local.base, "CORES", 8)
    case = brute.random_case(random.Random(seed), tmp_path, n_qi=3, n_rows=int(rng.integers(20, 200)))
    engine = connect(threads=3)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        fetched = local.sets.local_set(stats)
        lay = local.sets.layout(stats)
        want = local.base._kernels().packed_keys(fetched.codes, lay.kp_flat, lay.kp_off[:, 0].copy(), np.ones(len(stats.qis), dtype=np.int64), lay.word_of, lay.n_words)
        got = local.sets.leaf_keys(stats, fetched.codes)
        assert got.shape == want.shape and (got == want).all()
    finally:
        engine.close()


def test_the_sort_keys_from_chunks_on_threads_equal_the_one_column_at_a_time_keys(monkeypatch):
    """Columns chunked alike go chunk by chunk to the threads, others one column at a time: the
    same sorted set either way, and a code outside its leaves in any chunk still says no."""
    rng = np.random.default_rng(3)
    monkeypatch.setattr(local.base, "THREAD_WORK", 4)
    monkeypatch.setattr(local.base, "CORES", 8)
    widths = [7, 3, 40]
    m = 500
    rows = set()
    while len(rows) < m:
        rows.add(tuple(int(rng.integers(0, w)) for w in widths))
    codes = np.asarray(sorted(rows, key=lambda _: rng.random()), dtype=np.int32)
    cnt = rng.integers(1, 9, m).astype(np.int64)
    cuts = [0, 60, 61, 300, 420, m]
    alike = {f"q{i}": pa.chunked_array([pa.array(codes[a:b, i]) for a, b in zip(cuts, cuts[1:])]) for i in range(3)}
    unlike = dict(alike, q1=pa.chunked_array([pa.array(codes[:250, 1]), pa.array(codes[250:, 1])]))
    stats = _FetchedStats(widths)
    want = local.sets.clustered(stats, codes, cnt)
    for columns in (alike, unlike):
        got = local.sets.sorted_from_arrow(stats, pa.table({**columns, "n": pa.array(cnt)}), cnt.copy())
        assert got is not None and (got[0] == want[0]).all() and (got[1] == want[1]).all()
        bad = codes[:, 2].copy()
        bad[450] = widths[2]
        outside = dict(columns, q2=pa.chunked_array([pa.array(bad[a:b]) for a, b in zip(cuts, cuts[1:])]))
        assert local.sets.sorted_from_arrow(stats, pa.table({**outside, "n": pa.array(cnt)}), cnt.copy()) is None


def test_the_load_compiles_only_what_every_evaluation_calls():
    """The kernel load (:func:`sqlanon.stats.local.warm_up`) runs every kernel of
    :mod:`sqlanon.stats.local.kernels` but those of :data:`sqlanon.stats.local.LAZY`, which load
    (or compile, on an emptied cache) on their first call: a fresh interpreter shows which have a
    compiled signature after the load alone."""
    code = (
        "import json, numba\n"
        "from sqlanon.stats import local\n"
        "import sqlanon.stats.local.kernels as k\n"
        "assert local.warm_up(wait=True)\n"
        "print(json.dumps({n: len(getattr(k, n).signatures) for n in dir(k) if not n.startswith('_')"
        " and isinstance(getattr(k, n), numba.core.registry.CPUDispatcher)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    compiled = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(local.LAZY) <= set(compiled)
    assert {n for n, sigs in compiled.items() if not sigs} == set(local.LAZY)
