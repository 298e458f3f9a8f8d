"""Privacy models in the batch statement (sqlanon/stats/batch.py): l-diversity's and t-closeness's
class columns computed for many nodes in one statement, from a per-class histogram of the
sensitive values (small domains) or from per-class, per-value rows (larger ones), equal a slow
pure-Python computation (tests/oracle_brute.py: its own EMD, entropy and distinct counts) on small
random tables; and the optimal search with k-anonymity plus a model that is not monotone with
suppression (t-closeness, entropy l-diversity), which tags and bounds by the k-anonymity part,
finds the exhaustive optimum."""

from __future__ import annotations

import math
import os
import random
import sys

import numpy as np
import pytest
from sqlglot import exp

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_batch import all_nodes  # noqa: E402
from test_oracle_search import check_optimal, make_stats  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.expr.atoms import as_double, col  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.search.lattice import optimal  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.stats import batch  # noqa: E402

ALL_NEEDS = ClassNeeds(distinct_s=True, entropy_s=True, emd_equal=True, emd_ordered=True)


def model_columns() -> list[tuple[str, exp.Expr]]:
    """Per node, the extremes of every model column over its classes."""
    n = as_double(col("cnt"))
    entropy = exp.Sub(this=exp.Ln(this=n), expression=exp.Div(this=col("nlogn_s"), expression=n.copy()))
    return [
        ("x_min_distinct", exp.Min(this=col("distinct_s"))),
        ("x_min_entropy", exp.Min(this=entropy)),
        ("x_max_emd_equal", exp.Max(this=col("emd_equal"))),
        ("x_max_emd_ordered", exp.Max(this=col("emd_ordered"))),
    ]


def requirement(rng: random.Random):
    k = rng.randint(1, 4)
    l_d, l_e, t_e, t_o = rng.randint(2, 3), rng.choice([1.5, 2.0]), rng.choice([0.1, 0.2, 0.35]), rng.choice([0.1, 0.2])
    models = [KAnonymity(k), DistinctLDiversity(l_d), EntropyLDiversity(l_e), TCloseness(t_e, "equal"), TCloseness(t_o, "ordered")]
    return Requirement(models), brute.Spec(k=k, l_distinct=l_d, l_entropy=l_e, t_equal=t_e, t_ordered=t_o)


@pytest.mark.parametrize("shape", ["histogram", "values", "histogram-branches", "values-branches"])
@pytest.mark.parametrize("seed", range(4))
def test_batched_model_columns_equal_brute_force(shape, seed, tmp_path, monkeypatch):
    if shape.startswith("values"):  # the domain counted as too large for a histogram
        monkeypatch.setattr(batch, "HISTOGRAM_VALUES", 0)
    if shape.endswith("branches"):  # one branch per node (large sets)
        monkeypatch.setattr(batch, "NARROW_BATCH", 10**9)
        monkeypatch.setattr(batch, "BRANCH_ROWS", 0)
        monkeypatch.setattr(batch, "BRANCH_NODES", 10**9)
    rng = random.Random(31 * seed + 7)
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(2, 3), n_rows=rng.randint(30, 200))
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ALL_NEEDS)
        stats.local_rows = 0  # the batch statement (the in-process route: tests/stats/test_histograms_route.py)
        assert (batch.histogram(stats) is None) == shape.startswith("values")
        req, spec = requirement(rng)
        req.budget = rng.randint(0, 20)
        mono = req.monotone_predicate()
        extra = model_columns() + ([("mono", exp.Sum(this=exp.If(this=mono, true=exp.Literal.number(0), false=col("cnt"))))] if mono is not None else [])
        metric = METRICS["precision"]()
        assert batch.supported(stats, metric)
        nodes = all_nodes(stats)
        rng.shuffle(nodes)
        got = stats.evaluate_many(nodes, req.predicate(), None, metric=metric, extra_finals=extra)
        monotone_part = brute.Spec(k=spec.k, l_distinct=spec.l_distinct)  # k-anonymity and distinct l-diversity
        for node, ns in zip(nodes, got):
            b = brute.evaluate(case, node, spec)
            where = f"seed={seed} shape={shape} node={node}"
            assert (ns.node, ns.classes, ns.rows, ns.min_class, ns.max_class) == (node, b.classes, b.rows, b.min_class, b.max_class), where
            assert (ns.suppressed, ns.bad_classes) == (b.suppressed, b.bad_classes), where
            assert ns.extra["x_min_distinct"] == b.min_distinct, where
            assert ns.extra["x_min_entropy"] == pytest.approx(b.min_entropy, abs=1e-9), where
            assert ns.extra["x_max_emd_equal"] == pytest.approx(b.max_emd_equal, abs=1e-9), where
            assert ns.extra["x_max_emd_ordered"] == pytest.approx(b.max_emd_ordered, abs=1e-9), where
            assert metric.value(stats, node, ns) == pytest.approx(b.metrics["precision"], rel=1e-9, abs=1e-9), where
            if mono is not None:  # the rows the monotone models suppress
                assert ns.extra["mono"] == brute.evaluate(case, node, monotone_part).suppressed, where
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(5))
def test_has_above_and_maximal_open_equal_pairwise_comparison(seed, tmp_path):
    """``Lattice.has_above`` (one pass down the heights) equals comparing every pair of nodes, and
    ``optimal.maximal_open`` returns the candidates no other candidate generalizes (in order when
    they fit the batch, else by their levels of the widest QIs)."""
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=40, depths=[rng.randint(1, 3) for _ in range(3)], weird=False)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(), materialize_rows=250_000)
        lattice = Lattice(stats, Requirement([KAnonymity(2)], budget=0), METRICS["precision"]())
        nodes = lattice.nodes.astype(int)
        for _ in range(20):
            mask = [rng.random() < rng.choice([0.1, 0.5, 0.9]) for _ in range(len(lattice))]
            expected = [any(mask[j] and j != i and (nodes[j] >= nodes[i]).all() for j in range(len(lattice))) for i in range(len(lattice))]
            assert lattice.has_above(np.array(mask)).tolist() == expected
            cands = np.array(rng.sample(range(len(lattice)), rng.randint(1, len(lattice))))
            maximal = [int(i) for i in cands if not any(j != i and (nodes[j] >= nodes[i]).all() for j in cands)]
            assert optimal.maximal_open(lattice, cands, len(lattice)) == maximal
            # more than a statement holds: the QI with most values first, highest levels first
            wide = sorted(range(3), key=lambda i: (-optimal._values(lattice, i), i))
            ranked = sorted(maximal, key=lambda i: ([-int(nodes[i][q]) for q in wide], maximal.index(i)))
            assert optimal.maximal_open(lattice, cands, 2) == (ranked if len(maximal) > 2 else maximal)[:2]
    finally:
        engine.close()


def test_monotone_part_of_a_requirement():
    assert Requirement([KAnonymity(3), TCloseness(0.2)], budget=0).monotone_predicate() is None  # monotone without a budget
    assert Requirement([KAnonymity(3), DistinctLDiversity(2)], budget=5).monotone_predicate() is None  # monotone as a whole
    assert Requirement([TCloseness(0.2)], budget=5).monotone_predicate() is None  # no monotone model
    assert Requirement([KAnonymity(1), TCloseness(0.2)], budget=5).monotone_predicate() is None  # k=1 holds everywhere
    part = Requirement([KAnonymity(3), DistinctLDiversity(2), EntropyLDiversity(2)], budget=5).monotone_predicate()
    assert part is not None and part.sql() == exp.and_(KAnonymity(3).predicate(), DistinctLDiversity(2).predicate()).sql()


@pytest.mark.parametrize("stale", [optimal.STALE_ROUNDS, 0])
@pytest.mark.parametrize("seed", [1, 6, 8, 21, 33, 40])
@pytest.mark.parametrize("name", ["entropy-l", "t-closeness"])
def test_optimal_with_k_and_a_model_not_monotone_with_suppression(seed, name, stale, tmp_path, monkeypatch):
    """k-anonymity plus t-closeness or entropy l-diversity with a budget: the search walks the
    k-anonymity part with Flash's probes, then top-down (``stale`` 0: from the second round on),
    fails the specializations of a node whose k part alone exceeds the budget and bounds their
    suppressed rows by it, and must still find the exhaustive optimum."""
    monkeypatch.setattr(optimal, "STALE_ROUNDS", stale)
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=rng.randint(2, 3), n_rows=rng.randint(30, 120), weird=False)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(entropy_s=True, emd_equal=True), materialize_rows=250_000)
        k = rng.randint(2, 4)
        models, spec = (
            ([KAnonymity(k), EntropyLDiversity(1.5)], brute.Spec(k=k, l_entropy=1.5)) if name == "entropy-l" else ([KAnonymity(k), TCloseness(0.25)], brute.Spec(k=k, t_equal=0.25))
        )
        checked = 0
        for fraction in (0.05, 0.1, 0.25, 0.4):
            assert Requirement(models, budget=math.floor(fraction * case.n + 1e-9)).monotone_predicate() is not None or fraction * case.n < 1
            checked += check_optimal(case, stats, models, spec, fraction, ["precision", "lm", "loss"], f"seed={seed} model={name} fraction={fraction}")
        for fraction in (0.1, 0.25):  # and with one node per statement
            budget = math.floor(fraction * case.n + 1e-9)
            lattice = Lattice(stats, Requirement(models, budget=budget), METRICS["precision"]())
            if not any(ok for _, ok, _ in brute.exhaustive(case, spec, budget).values()):
                continue
            res = optimal.run(lattice, batch=1, probes=1)
            table = brute.exhaustive(case, spec, budget)
            best = min(m["precision"] for _, ok, m in table.values() if ok)
            assert table[res.node][1] and res.value == pytest.approx(best, rel=1e-9, abs=1e-9), f"seed={seed} {name} one node per statement"
    finally:
        engine.close()
