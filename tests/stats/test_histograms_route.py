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


def model_stats(engine, case, req, tree, name: str) -> Statistics:
    """The case's prepared Statistics for ``req`` (the sensitive hierarchy for hierarchical t), bound to it."""
    hs = [Hierarchy(attribute=q, rows=[list(r) for r in h]) for q, h in zip(case.qis, case.hier_rows)]
    extras = {"sensitive_hierarchy": Hierarchy(attribute="disease", rows=tree)} if name == "hierarchical" else {}
    stats = Statistics(engine, Source.open(case.path), case.qis, hs, sensitive=case.sensitive, needs=req.needs, keep_sets=4, **extras)
    stats.prepare()
    req.bind(stats)
    return stats


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
        stats = model_stats(engine, case, req, tree, name)
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
        monkeypatch.setattr(histograms, "PREFERRED", histograms.NEEDS - {"entropy_s"})
        assert not histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())  # entropy l alone: not preferred
        monkeypatch.setattr(histograms, "PREFERRED", histograms.NEEDS)
        assert histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())
        # an ok the evaluator does not know (a string comparison)
        assert not histograms.accepts(stats, nodes, exp.EQ(this=col("cnt"), expression=exp.Literal.string("x")), METRICS["precision"]())
        stats.local_rows = stats.base.rows - 1  # a user's row cap below the set
        assert not histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())
        stats.local_rows = stats.base.rows
        assert histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())
        assert (stats.memory.local.route[3] or "").startswith("in-process (histograms)")  # the report's local_route
        stats.memory.local.budget = 1  # a memory budget the histograms do not fit
        assert not histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())
        stats.memory.local.budget = None
        stats.local_rows = 0
        assert not histograms.accepts(stats, nodes, req.predicate(), METRICS["precision"]())
    finally:
        engine.close()


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_compiled_rollup_equals_a_python_grouping(seed, dense):
    """The compiled roll-up against a dict over random codes, maps and histograms: each class's
    mapped codes and summed histogram, classes in key order (both the dense and the sort form)."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("numba")
    from sqlanon.stats.local import histogram_kernels

    rng = random.Random(seed)
    q, n, m = rng.randint(1, 4), rng.randint(1, 300), rng.randint(1, 6)
    widths = [rng.randint(1, 9) for _ in range(q)]
    maps = [[rng.randrange(w) for _ in range(rng.randint(1, 12))] for w in widths]
    codes = np.asarray([[rng.randrange(len(mp)) for _ in range(n)] for mp in maps], dtype=np.int64).reshape(q, n)
    hist = np.asarray([[rng.randint(0, 5) for _ in range(m)] for _ in range(n)], dtype=np.int64)
    mults, span = histograms._mults(widths)
    flat = np.asarray([v for mp in maps for v in mp], dtype=np.int64)
    offsets = np.cumsum([0, *(len(mp) for mp in maps)]).astype(np.int64)
    got_codes, got_hist = histogram_kernels.rolled(codes, hist, flat, offsets, mults, span, dense)
    want: dict[tuple, list[int]] = {}
    for r in range(n):
        key = tuple(maps[i][int(codes[i, r])] for i in range(q))
        row = want.setdefault(key, [0] * m)
        for j in range(m):
            row[j] += int(hist[r, j])
    keys = sorted(want, key=lambda k: sum(v * int(mu) for v, mu in zip(k, mults)))
    assert [tuple(int(v) for v in got_codes[:, c]) for c in range(got_codes.shape[1])] == keys
    assert got_hist.tolist() == [want[k] for k in keys]


@pytest.mark.parametrize("seed", range(4))
def test_compiled_rollup_at_levels_and_source_pick_equal_python(seed):
    """The kernel that reads a node's maps from the tables of every QI's maps (``rolled_at``)
    equals :func:`rolled` given the maps, multipliers and range by Python; the compiled pick of
    the smallest kept set a node generalizes (``smallest_under``) equals a Python scan (the
    first of equals, -1 when none is below the limit)."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("numba")
    from sqlanon.stats.local import histogram_kernels

    rng = random.Random(1000 + seed)
    q, n, m, top = rng.randint(1, 4), rng.randint(1, 300), rng.randint(1, 5), 3
    widths = np.ones((q, top), dtype=np.int64)
    offsets = np.zeros((q, top, top), dtype=np.int64)
    parts, at = [], 0
    base = [rng.randint(1, 12) for _ in range(q)]
    for i in range(q):
        level_codes = [list(range(base[i]))]
        for _ in range(1, top):  # each level a coarsening of the one below
            width = max(1, (max(level_codes[-1]) + 1) // 2)
            level_codes.append([c * width // (max(level_codes[-1]) + 1) for c in level_codes[-1]])
        for lv in range(top):
            widths[i, lv] = max(level_codes[lv]) + 1
        for low in range(top):
            for lv in range(low, top):
                up = np.zeros(max(level_codes[low]) + 1, dtype=np.int64)
                up[level_codes[low]] = level_codes[lv]
                offsets[i, low, lv] = at
                parts.append(up)
                at += len(up)
    flat = np.concatenate(parts)
    src = np.asarray([rng.randint(0, 1) for _ in range(q)], dtype=np.int64)
    levels = np.asarray([rng.randint(int(s), top - 1) for s in src], dtype=np.int64)
    codes = np.asarray([[rng.randrange(int(widths[i, src[i]])) for _ in range(n)] for i in range(q)], dtype=np.int64).reshape(q, n)
    hist = np.asarray([[rng.randint(0, 5) for _ in range(m)] for _ in range(n)], dtype=np.int64)
    mults, span = histograms._mults(widths[np.arange(q), levels].tolist())
    for factor in (0, 8, 10**6):  # a sort, the default, a dense count
        got = histogram_kernels.rolled_at(codes, hist, flat, offsets, widths, src, levels, factor)
        want = histogram_kernels.rolled(codes, hist, flat, offsets[np.arange(q), src, levels], mults, span, span <= factor * n)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    slots = rng.randint(1, 30)
    grid = np.asarray([[rng.randint(0, 3) for _ in range(q)] for _ in range(slots)], dtype=np.int64).reshape(slots, q)
    rows = np.asarray([rng.choice([rng.randint(1, 9), histograms._EMPTY]) for _ in range(slots)], dtype=np.int64)
    for _ in range(20):
        node = np.asarray([rng.randint(0, 3) for _ in range(q)], dtype=np.int64)
        limit = rng.randint(1, 10)
        under = [s for s in range(slots) if all(grid[s, i] <= node[i] for i in range(q)) and rows[s] < limit]
        want_slot = min(under, key=lambda s: (rows[s], s)) if under else -1
        assert histogram_kernels.smallest_under(grid, rows, node, limit) == want_slot


@pytest.mark.parametrize("name", MODELS)
def test_numpy_and_compiled_rollups_give_the_same_node_stats(name, tmp_path, monkeypatch):
    """Every node's NodeStats by the compiled roll-up equal the numpy form's (the same class
    order: the finals' sums equal to the last bit)."""
    pytest.importorskip("numba")
    monkeypatch.setattr(histograms, "PREFERRED", histograms.NEEDS)
    rng = random.Random(77 + MODELS.index(name))
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(80, 220))
    tree = s_tree(case)
    req = Requirement([KAnonymity(rng.randint(1, 3)), model(name, rng, tree)])
    got = {}
    for compiled in (True, False):
        monkeypatch.setattr(histograms, "COMPILED", compiled)
        engine = connect(threads=1)
        try:
            stats = model_stats(engine, case, req, tree, name)
            req.budget = 3
            metric = METRICS["precision"]()
            finals = [("x_metric", exp.Sum(this=col("cnt")))]
            nodes = all_nodes(stats)
            out = stats.evaluate_many(nodes, req.predicate(), None, metric=metric, extra_finals=finals)
            got[compiled] = [(s.node, s.classes, s.rows, s.min_class, s.max_class, s.suppressed, s.bad_classes, s.extra) for s in out]
            assert (histograms._kernels(stats) is not None) == compiled
        finally:
            engine.close()
    assert got[True] == got[False]


@pytest.mark.parametrize("seed", range(6))
def test_class_columns_kernel_equals_python(seed):
    """The compiled class columns against plain Python over random histograms (zeros, ties, one
    value, more values than l): rows, distinct values, ``sum h ln h``, the ordered-distance EMD
    (t-closeness's Python twin) and recursive (c,l)-diversity's r_1 and r_l + ... + r_m."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("numba")
    import math

    from sqlanon.privacy.t_closeness import emd_ordered
    from sqlanon.stats.local import histogram_kernels

    rng = random.Random(seed)
    n, m, l = rng.randint(1, 60), rng.randint(1, 9), rng.randint(1, 5)
    hist = np.asarray([[rng.choice([0, 0, 1, 2, 3, rng.randint(0, 40)]) for _ in range(m)] for _ in range(n)], dtype=np.int64)
    weights = [rng.random() + 0.01 for _ in range(m)]
    q = np.asarray([w / sum(weights) for w in weights], dtype=np.float64)
    cnt, distinct, nlogn, emd, top, tail = histogram_kernels.class_columns(hist, q, True, True, l)
    for c in range(n):
        row = [int(v) for v in hist[c]]
        total = sum(row)
        assert cnt[c] == total and distinct[c] == sum(1 for v in row if v)
        assert nlogn[c] == pytest.approx(sum(v * math.log(v) for v in row if v), rel=1e-12, abs=1e-12)
        p = {j: v / max(total, 1) for j, v in enumerate(row)}
        assert emd[c] == pytest.approx(emd_ordered(p, dict(enumerate(q.tolist())), list(range(m))), rel=1e-12, abs=1e-12)
        ranked = sorted(row, reverse=True)
        assert top[c] == ranked[0] and tail[c] == sum(ranked[l - 1 :])
    assert not histogram_kernels.class_columns(hist, q, False, False, 0)[4].any()  # not asked: left zero


@pytest.mark.parametrize("seed", range(4))
def test_round_finals_equal_one_node_at_a_time(seed):
    """A round's finals over all its nodes' classes at once (vectors.compiled_segments) equal,
    to the last bit and type, each node's own (vectors.compiled_aggregate over its classes)."""
    np = pytest.importorskip("numpy")
    from sqlglot import parse_one

    from sqlanon.stats import vectors

    rng = random.Random(seed)
    sizes = np.asarray([rng.randint(1, 40) for _ in range(rng.randint(1, 12))], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    total = int(sizes.sum())
    cols = {"cnt": np.asarray([rng.randint(1, 50) for _ in range(total)], dtype=np.int64),
            "part": np.asarray([rng.random() * 10 ** rng.randint(-3, 3) for _ in range(total)]),
            "ok": np.asarray([rng.random() < 0.6 for _ in range(total)])}
    for text in ("SUM(CASE WHEN ok THEN part ELSE 0.0 END)", "SUM(cnt)", "SUM(CASE WHEN ok THEN 0 ELSE 1 END)", "MIN(cnt)", "MAX(part)",
                 "COUNT(*)", "SUM(ok)", "SUM(part) / CAST(COUNT(*) AS DOUBLE) + MAX(cnt) - 1", "2.5"):
        e = parse_one(text)
        got = vectors.compiled_segments(e)(cols, starts, sizes)
        one = vectors.compiled_aggregate(e)
        want = [one({k: v[a:a + n] for k, v in cols.items()}) for a, n in zip(starts.tolist(), sizes.tolist())]
        assert [(type(v), v) for v in got] == [(type(v), v) for v in want], text


ADULT = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "adult")


@pytest.mark.parametrize("sensitive", ["salary-class", "marital-status"])
@pytest.mark.parametrize("extra", [{"t": 0.2, "t_distance": "ordered"}, {"l": 2, "c": 3.0, "l_diversity": "recursive"}], ids=["ordered", "recursive"])
def test_ordered_and_recursive_search_in_process_same_as_sql(extra, sensitive, tmp_path):
    """Ordered t-closeness and recursive (c,l)-diversity search in-process by default, and the
    optimal search checks the same nodes and finds the same optimum as with every node by SQL
    (4,000 rows of Adult, 5 QIs)."""
    pytest.importorskip("numba")
    import sqlanon

    with open(os.path.join(ADULT, "adult.csv")) as f:
        lines = f.read().splitlines()[:4001]
    path = tmp_path / "adult.csv"
    path.write_text("\n".join(lines) + "\n")
    cols = [c for c in ("sex", "age", "race", "marital-status", "education", "workclass") if c != sensitive][:5]
    qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in cols}
    got = {}
    for local_rows in (None, 0):
        options = {} if local_rows is None else {"local_rows": 0}
        r = sqlanon.anonymize(input=str(path), delimiter=";", qi=qi, k=5, max_suppression=0.05, metric="precision", search="optimal",
                              search_options=options, sensitive_column=sensitive, **extra)
        got[local_rows] = (r.transformation, r.nodes_evaluated, r.metric.value, r.suppressed_rows)
        if local_rows is None:
            assert r.nodes_local >= 0.9 * r.nodes_evaluated, r.nodes_local  # all but a node or two checked on its own
        else:
            assert not r.nodes_local
    assert got[None] == got[0]
