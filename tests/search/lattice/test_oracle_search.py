"""Oracle tests for the lattice searches: on small random tables, each search's answer is checked
against exhaustive enumeration of the lattice, every node evaluated in pure Python."""

from __future__ import annotations

import csv
import itertools
import math
import os
import random
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402

import sqlanon.run.api  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.errors import UnsatisfiableError  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness  # noqa: E402
from sqlanon.search.lattice.run import LATTICE_SEARCHES  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402

SEEDS = list(range(6))
FRACTIONS = (0.0, 0.08)


def approx(x):
    return pytest.approx(x, rel=1e-9, abs=1e-9)


def make_stats(engine, case, needs: ClassNeeds, materialize_rows=0):
    hierarchies = [Hierarchy(attribute=q, rows=[list(r) for r in h]) for q, h in zip(case.qis, case.hier_rows)]
    stats = Statistics(
        engine,
        Source.open(case.path),
        case.qis,
        hierarchies,
        sensitive=case.sensitive,
        class_column=case.class_column,
        needs=needs,
        keep_sets=4,
        materialize_rows=materialize_rows,
    )
    stats.prepare()
    return stats


def models_for(name: str, rng: random.Random):
    k = rng.randint(2, 6)
    if name == "k":
        return [KAnonymity(k)], brute.Spec(k=k)
    if name == "k+distinct-l":
        return [KAnonymity(k), DistinctLDiversity(2)], brute.Spec(k=k, l_distinct=2)
    if name == "entropy-l":
        return [EntropyLDiversity(1.6)], brute.Spec(l_entropy=1.6)
    if name == "t-closeness":
        return [TCloseness(0.25, "equal")], brute.Spec(t_equal=0.25)
    raise AssertionError(name)


def satisfying(table: dict) -> dict:
    return {node: m for node, (_, ok, m) in table.items() if ok}


def check_optimal(case, stats, models, spec, fraction, metric_names, where):
    budget = math.floor(fraction * case.n + 1e-9)
    table = brute.exhaustive(case, spec, budget)
    sat = satisfying(table)
    if not sat:
        for search in LATTICE_SEARCHES.values():
            with pytest.raises(UnsatisfiableError):
                search(Lattice(stats, Requirement(models, budget=budget), METRICS["height"]()))
        return 0
    for mname in metric_names:
        expected = min(m[mname] for m in sat.values())
        lattice = Lattice(stats, Requirement(models, budget=budget), METRICS[mname]())
        res = LATTICE_SEARCHES["optimal"](lattice)
        tag = f"{where} budget={budget} metric={mname} optimal node={res.node}"
        assert res.node in sat, tag + " does not satisfy the requirement"
        assert table[res.node][0] == res.node_stats.suppressed, tag
        assert sat[res.node][mname] == approx(expected), tag
        assert res.value == approx(expected), tag
    return len(sat)


@pytest.mark.parametrize("seed", SEEDS)
def test_optimal_incognito_samarati_equal_exhaustive(seed, tmp_path):
    rng = random.Random(104729 * seed + 3)
    n_qi = rng.randint(2, 3)
    depths = [rng.randint(1, 3) for _ in range(2)] if n_qi == 2 else [rng.randint(1, 2) for _ in range(3)]
    case = brute.random_case(rng, tmp_path, n_qi=n_qi, n_rows=rng.randint(40, 220), depths=depths)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(distinct_s=True, majority_y=True), materialize_rows=rng.choice([0, 250_000, 250_000]))
        for name in ("k", "k+distinct-l"):
            models, spec = models_for(name, rng)
            for fraction in FRACTIONS:
                where = f"seed={seed} model={name}"
                if not check_optimal(case, stats, models, spec, fraction, list(METRICS), where):
                    continue
                budget = math.floor(fraction * case.n + 1e-9)
                table = brute.exhaustive(case, spec, budget)
                sat = satisfying(table)
                for mname in rng.sample(list(METRICS), 2):
                    metric = METRICS[mname]()
                    expected = min(m[mname] for m in sat.values())
                    # incognito: the same optimum
                    res = LATTICE_SEARCHES["incognito"](Lattice(stats, Requirement(models, budget=budget), metric))
                    tag = f"{where} budget={budget} metric={mname} incognito node={res.node}"
                    assert res.node in sat, tag
                    assert sat[res.node][mname] == approx(expected), tag
                    # samarati: a node of the minimal satisfying height, best of that height
                    h_min = min(sum(n) for n in sat)
                    res = LATTICE_SEARCHES["samarati"](Lattice(stats, Requirement(models, budget=budget), metric))
                    tag = f"{where} budget={budget} metric={mname} samarati node={res.node}"
                    assert res.node in sat, tag
                    assert sum(res.node) == h_min, tag
                    best_at_h = min(m[mname] for n, m in sat.items() if sum(n) == h_min)
                    assert sat[res.node][mname] == approx(best_at_h), tag
    finally:
        engine.close()


@pytest.mark.parametrize("seed", [1, 6, 8, 21])
@pytest.mark.parametrize("name", ["entropy-l", "t-closeness"])
def test_searches_with_entropy_l_and_t_closeness_and_a_budget(seed, name, tmp_path):
    """Entropy l-diversity and t-closeness are monotone only without suppression: with a budget a
    generalization can suppress more rows than its specialization (and fail where it passes). The
    searches must still find the exhaustive optimum (these seeds broke predictive tagging)."""
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=rng.randint(20, 80), depths=[rng.randint(1, 3), rng.randint(1, 3)], weird=False)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(entropy_s=True, emd_equal=True), materialize_rows=250_000)
        models, spec = ([EntropyLDiversity(1.8)], brute.Spec(l_entropy=1.8)) if name == "entropy-l" else ([TCloseness(0.2)], brute.Spec(t_equal=0.2))
        for fraction in (0.0, 0.1, 0.25, 0.4):
            where = f"seed={seed} model={name}"
            if not check_optimal(case, stats, models, spec, fraction, ["precision", "lm"], where):
                continue
            budget = math.floor(fraction * case.n + 1e-9)
            sat = satisfying(brute.exhaustive(case, spec, budget))
            res = LATTICE_SEARCHES["incognito"](Lattice(stats, Requirement(models, budget=budget), METRICS["precision"]()))
            assert res.node in sat and sat[res.node]["precision"] == approx(min(m["precision"] for m in sat.values())), where
            res = LATTICE_SEARCHES["samarati"](Lattice(stats, Requirement(models, budget=budget), METRICS["lm"]()))
            assert res.node in sat and sum(res.node) == min(sum(n) for n in sat), where
    finally:
        engine.close()


def test_monotonicity_flags():
    assert Requirement([KAnonymity(3), DistinctLDiversity(2)], budget=10).monotone
    assert Requirement([EntropyLDiversity(2)], budget=0).monotone
    assert not Requirement([EntropyLDiversity(2)], budget=1).monotone
    assert not Requirement([KAnonymity(2), TCloseness(0.2)], budget=1).monotone


def test_the_lattice_holds_every_node_within_its_bounds_in_product_order(tmp_path):
    """``Lattice.nodes`` (built by numpy) is every level combination within the bounds, in
    itertools.product's order, so ``idx`` and ``node`` invert each other."""
    rng = random.Random(7)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=60, depths=[2, 1, 3])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        req = Requirement([KAnonymity(2)], budget=0)
        full = [(0, h.max_level) for h in stats.hierarchies]
        narrow = [(1, 2), (0, 1), (1, 3)]
        assert [hi for _, hi in full] == [2, 1, 3]
        for bounds in (None, full, narrow, [(2, 2), (1, 1), (0, 0)]):
            lattice = Lattice(stats, req, METRICS["precision"](), bounds=bounds)
            spans = [range(lo, hi + 1) for lo, hi in (bounds or full)]
            expected = [tuple(n) for n in itertools.product(*spans)]
            assert [lattice.node(i) for i in range(len(lattice))] == expected
            assert lattice.nodes.flags.c_contiguous and lattice.nodes.dtype == np.int16
            assert [lattice.idx(n) for n in expected] == list(range(len(expected)))
            assert list(lattice.height) == [sum(n) for n in expected]
    finally:
        engine.close()


def test_unsatisfiable_when_the_top_node_fails(tmp_path):
    rng = random.Random(99)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=80)
    distinct = len({r[case.sensitive] for r in case.rows})
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(distinct_s=True))
        # l larger than the number of sensitive values: even one class of every row fails
        req = Requirement([KAnonymity(2), DistinctLDiversity(distinct + 1)], budget=case.n - 1)
        for _name, search in LATTICE_SEARCHES.items():
            with pytest.raises(UnsatisfiableError, match=r"within the suppression budget of \d+ rows .*distinct-l-diversity l=\d+ fails .*Closest: .* suppresses \d+ rows"):
                search(Lattice(stats, req, METRICS["precision"]()))
        # the whole table may be suppressed: a release of nothing is still no answer (it used to
        # come back as the "optimum", height 0, with every row suppressed)
        req = Requirement([DistinctLDiversity(distinct + 1)], budget=case.n)
        for _name, search in LATTICE_SEARCHES.items():
            with pytest.raises(UnsatisfiableError, match="suppress every row"):
                search(Lattice(stats, req, METRICS["height"]()))
    finally:
        engine.close()


def write_hierarchy_csvs(case, tmp_path) -> dict:
    specs = {}
    for i, (q, rows) in enumerate(zip(case.qis, case.hier_rows)):
        path = tmp_path / f"h{i}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, delimiter=";", lineterminator="\n").writerows(rows)
        specs[q] = str(path)
    return specs


@pytest.mark.parametrize("seed", [21, 22])
def test_api_dry_run_finds_the_exhaustive_optimum(seed, tmp_path):
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=150, depths=[2, 1, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    for search, metric, k, frac, l in [("optimal", "lm", 3, 0.05, None), ("optimal", "cm", 4, 0.0, 2), ("incognito", "discernibility", 2, 0.1, 2), ("samarati", "height", 5, 0.02, None)]:
        report = sqlanon.run.api.anonymize(
            input=case.path, qi=qi, k=k, l=l, sensitive_column=case.sensitive if l else None,
            class_column=case.class_column if metric == "cm" else None, metric=metric, search=search, max_suppression=frac, dry_run=True,
        )
        budget = math.floor(frac * case.n + 1e-9)
        spec = brute.Spec(k=k, l_distinct=int(l) if l else None)
        table = brute.exhaustive(case, spec, budget)
        sat = satisfying(table)
        node = tuple(report.transformation[q] for q in case.qis)
        tag = f"seed={seed} {search} {metric} node={node}"
        assert node in sat, tag
        assert report.suppressed_rows == table[node][0], tag
        assert report.suppression_budget == budget
        assert report.rows == case.n
        if search == "samarati":
            assert sum(node) == min(sum(n) for n in sat), tag
        else:
            assert report.metric.value == approx(min(m[metric] for m in sat.values())), tag
        assert report.output is None


@pytest.mark.parametrize("seed", [3, 14, 15, 92])
def test_top_known_without_a_query_same_searches(seed, tmp_path, monkeypatch):
    """Under k-anonymity alone, with one label at every QI's top level, the top is one class of
    every row: :meth:`Lattice.require_top` tags it and offers its value without a query. Every
    lattice search finds the exhaustive optimum as it did when the top was evaluated (the same
    node and value), and the top is never evaluated unless it is the answer. With a level bound
    below a QI's top (two labels there), or a model needing sensitive values, it is evaluated."""
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(60, 200), depths=[2, 1, 2])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        top = tuple(h.max_level for h in stats.hierarchies)
        assert all(len(h.labels(lv)) == 1 for h, lv in zip(stats.hierarchies, top))
        k = rng.randint(2, 6)
        for fraction in FRACTIONS:
            budget = math.floor(fraction * case.n + 1e-9)
            sat = satisfying(brute.exhaustive(case, brute.Spec(k=k), budget))
            for mname in ("precision", "lm", "discernibility"):
                found = {}
                for known in (True, False):
                    if not known:
                        monkeypatch.setattr(Lattice, "top_known", lambda self: None)
                    for name in ("optimal", "incognito", "samarati"):
                        lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=budget), METRICS[mname]())
                        res = LATTICE_SEARCHES[name](lattice)
                        found[(name, known)] = (res.node, res.value)
                        assert res.node in sat
                        if name == "incognito":
                            continue  # its lattices are per QI subset: the full one is checked last
                        if known and mname != "discernibility" and res.node != top:
                            assert lattice.top not in lattice.evaluated, (name, mname)
                        if not known or mname == "discernibility":  # no value without data: evaluated
                            assert lattice.top in lattice.evaluated, (name, mname)
                    monkeypatch.undo()
                for name in ("optimal", "incognito", "samarati"):
                    assert found[(name, True)][0] == found[(name, False)][0], (name, mname, fraction)
                    assert found[(name, True)][1] == approx(found[(name, False)][1]), (name, mname, fraction)
        # a bound below a QI's top level (more than one label there): the top is evaluated
        i = next(j for j, h in enumerate(stats.hierarchies) if h.max_level >= 1 and len(h.labels(h.max_level - 1)) > 1)
        bounds = [(0, h.max_level - (j == i)) for j, h in enumerate(stats.hierarchies)]
        lattice = Lattice(stats, Requirement([KAnonymity(2)], budget=case.n - 1), METRICS["precision"](), bounds=bounds)
        assert lattice.top_known() is None
        lattice.require_top()
        assert lattice.top in lattice.evaluated
        # a model over sensitive values: evaluated
        stats_s = make_stats(engine, case, ClassNeeds(distinct_s=True))
        lattice = Lattice(stats_s, Requirement([KAnonymity(2), DistinctLDiversity(2)], budget=case.n - 1), METRICS["precision"]())
        assert lattice.top_known() is None
    finally:
        engine.close()
