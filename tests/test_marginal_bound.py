"""The marginal suppression bound of the lattice searches (``Lattice.marginal_suppression``,
:mod:`sqlanon.stats.marginals`): with k-anonymity, the rows of a value or a value pair held by fewer
than k rows (at the node's levels) are all suppressed. Checked against exhaustive enumeration: never
above a node's real suppressed rows, exact where one QI or one pair alone decides, and the optimal
search with it (nodes over the budget tagged as failing without a query) still finds the
exhaustive optimum."""

from __future__ import annotations

import math
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import approx, make_stats, satisfying  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, KAnonymity, Requirement  # noqa: E402
from sqlanon.search import optimal  # noqa: E402
from sqlanon.search.lattice import FAILS, Lattice  # noqa: E402
from sqlanon.stats import ClassNeeds  # noqa: E402


def test_marginal_bound_never_exceeds_the_real_suppression(tmp_path):
    positive = 0
    for seed in range(8):
        positive += _check_bound(seed, tmp_path / str(seed))
    assert positive > 0  # rare values exist in these skewed tables: the bound bites


def _check_bound(seed, tmp_path) -> int:
    tmp_path.mkdir()
    rng = random.Random(15485863 * seed + 5)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(40, 200), depths=[rng.randint(1, 3) for _ in range(3)])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        positive = 0
        for k in (2, 4, 9):
            lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=0), METRICS["precision"]())
            low = lattice.marginal_suppression()
            for idx in range(len(lattice)):
                node = lattice.node(idx)
                real = brute.evaluate(case, node, brute.Spec(k=k)).suppressed
                assert 0 <= low[idx] <= real, (seed, k, node, int(low[idx]), real)
                # one QI or a pair alone: the bound is then exact (the other QIs at their root)
                if sum(1 for i, lv in enumerate(node) if lv < lattice.maxes[i]) <= 2:
                    assert low[idx] == real, (seed, k, node, int(low[idx]), real)
            positive += int((low > 0).sum())
        # no k-anonymity model: no bound
        lattice = Lattice(stats, Requirement([DistinctLDiversity(2)], budget=0), METRICS["precision"]())
        assert not lattice.marginal_suppression().any()
        return positive
    finally:
        engine.close()


def test_optimal_with_marginal_tags_finds_the_exhaustive_optimum(tmp_path):
    tagged = 0
    for seed in range(6):
        tagged += _check_optimal(seed, tmp_path / str(seed))
    assert tagged > 0  # some nodes were over the budget by their rare values alone


def _check_optimal(seed, tmp_path) -> int:
    tmp_path.mkdir()
    rng = random.Random(32452843 * seed + 7)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(60, 250), depths=[rng.randint(1, 3) for _ in range(3)])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        tagged = 0
        for k in (2, 5):
            for fraction in (0.0, 0.05):
                budget = math.floor(fraction * case.n + 1e-9)
                table = brute.exhaustive(case, brute.Spec(k=k), budget)
                sat = satisfying(table)
                for mname in ("precision", "lm", "discernibility"):
                    lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=budget), METRICS[mname]())
                    if not sat:
                        with pytest.raises(Exception):
                            optimal.run(lattice)
                        continue
                    res = optimal.run(lattice)
                    tag = f"seed={seed} k={k} budget={budget} metric={mname} node={res.node}"
                    assert res.node in sat, tag
                    assert table[res.node][0] == res.node_stats.suppressed, tag
                    assert res.value == approx(min(m[mname] for m in sat.values())), tag
                    # every node tagged failing without a query really is over the budget
                    for idx in (lattice.status == FAILS).nonzero()[0]:
                        assert table[lattice.node(int(idx))][0] > budget or not table[lattice.node(int(idx))][1], tag
                    tagged += int((lattice.marginal_suppression() > budget).sum())
        return tagged
    finally:
        engine.close()
