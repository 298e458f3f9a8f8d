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
import paths

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import approx, make_stats, satisfying  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.errors import UnsatisfiableError  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, KAnonymity, Requirement  # noqa: E402
from sqlanon.search.lattice import optimal  # noqa: E402
from sqlanon.search.lattice.lattice import FAILS, Lattice  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402


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
                        with pytest.raises(UnsatisfiableError):
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


# -- QI triples ---------------------------------------------------------------------------------


def test_rare_by_levels_is_the_brute_force_count():
    """Every level combination of two or three QIs at once (one bincount over stacked codes) gives
    the rows of the combinations held by fewer than k rows, as counted cell by cell in Python."""
    import itertools

    import numpy as np

    from sqlanon.stats.marginals import rare_by_levels

    rng = random.Random(7)
    for _ in range(30):
        d = rng.choice((2, 3))
        maps = []
        for _j in range(d):
            leaves = rng.randint(1, 9)
            per_level = [list(range(leaves))]
            for _lv in range(rng.randint(0, 3)):
                parents = rng.randint(1, max(1, max(per_level[-1]) + 1))
                step = [rng.randrange(parents) for _ in range(max(per_level[-1]) + 1)]
                per_level.append([step[c] for c in per_level[-1]])
            maps.append([np.asarray(m, dtype=np.int64) for m in per_level])
        cells = sorted({tuple(rng.randrange(len(m[0])) for m in maps) for _ in range(rng.randint(0, 40))})
        cnts = np.asarray([rng.randint(1, 12) for _ in cells], dtype=np.int64)
        codes = [np.asarray([c[j] for c in cells], dtype=np.int64) for j in range(d)]
        k = rng.randint(2, 15)
        got = rare_by_levels(codes, cnts, maps, k)
        assert got.shape == tuple(len(m) for m in maps)
        for levels in itertools.product(*[range(len(m)) for m in maps]):
            counts: dict = {}
            for cell, n in zip(cells, cnts):
                key = tuple(int(maps[j][lv][cell[j]]) for j, lv in enumerate(levels))
                counts[key] = counts.get(key, 0) + int(n)
            assert got[levels] == sum(n for n in counts.values() if n < k), (levels, k)


def test_triple_bound_never_exceeds_the_real_suppression(tmp_path):
    """Four QIs: with the triples the bound is still never above a node's real suppressed rows,
    never below the bound from single QIs and pairs, exact where the chosen triples decide (the
    fourth QI at its root), and tighter than the pairs somewhere."""
    from sqlanon.stats import marginals

    tighter = 0
    for seed in range(6):
        tmp = tmp_path / str(seed)
        tmp.mkdir()
        rng = random.Random(49979687 * seed + 3)
        case = brute.random_case(rng, tmp, n_qi=4, n_rows=rng.randint(60, 220), depths=[rng.randint(1, 2) for _ in range(4)])
        engine = connect(threads=1)
        try:
            stats = make_stats(engine, case, ClassNeeds())
            for k in (2, 4, 7):
                lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=3), METRICS["precision"]())
                low = lattice.marginal_suppression(triples=True)
                pairs_only = lattice.marginal_suppression(triples=False)
                chosen = marginals.chosen_triples(stats, k)
                assert len(chosen) <= marginals.TRIPLES
                for idx in range(len(lattice)):
                    node = lattice.node(idx)
                    real = brute.evaluate(case, node, brute.Spec(k=k)).suppressed
                    assert pairs_only[idx] <= low[idx] <= real, (seed, k, node, int(low[idx]), real)
                    below_root = tuple(i for i, lv in enumerate(node) if lv < lattice.maxes[i])
                    if len(below_root) <= 2 or (len(below_root) == 3 and below_root in chosen):
                        assert low[idx] == real, (seed, k, node, int(low[idx]), real)
                tighter += int((low > pairs_only).sum())
        finally:
            engine.close()
    assert tighter > 0  # the triples bite where no single value or pair does


def test_chosen_triples_are_the_most_promising_within_the_limit(tmp_path, monkeypatch):
    """At most ``TRIPLES`` triples, those with the most rare rows expected under independence;
    none above ``TRIPLE_SET_ROWS`` base rows."""
    import itertools

    from sqlanon.stats import marginals

    rng = random.Random(11)
    case = brute.random_case(rng, tmp_path, n_qi=4, n_rows=150, depths=[2, 2, 2, 2])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        every = [t for t in itertools.combinations(range(4), 3) if marginals.expected_rare(stats, t, 5) > 0]
        monkeypatch.setattr(marginals, "TRIPLES", 2)
        chosen = marginals.chosen_triples(stats, 5)
        assert len(chosen) == min(2, len(every))
        rest = [t for t in every if t not in chosen]
        assert all(marginals.expected_rare(stats, t, 5) >= max([marginals.expected_rare(stats, r, 5) for r in rest], default=0) for t in chosen)
        monkeypatch.setattr(marginals, "TRIPLE_SET_ROWS", stats.base.rows - 1)
        assert marginals.chosen_triples(stats, 5) == []
    finally:
        engine.close()


def test_optimal_with_triple_tags_finds_the_exhaustive_optimum(tmp_path):
    """Four QIs and budgets that allow suppression (triples read): the optimal search with the
    triple tags finds the exhaustive optimum, and every node tagged failing really fails."""
    tagged = 0
    for seed in range(4):
        tmp = tmp_path / str(seed)
        tmp.mkdir()
        rng = random.Random(86028121 * seed + 11)
        case = brute.random_case(rng, tmp, n_qi=4, n_rows=rng.randint(80, 220), depths=[rng.randint(1, 2) for _ in range(4)])
        engine = connect(threads=1)
        try:
            stats = make_stats(engine, case, ClassNeeds())
            for k in (3, 6):
                for fraction in (0.04, 0.1):
                    budget = math.floor(fraction * case.n + 1e-9)
                    table = brute.exhaustive(case, brute.Spec(k=k), budget)
                    sat = satisfying(table)
                    for mname in ("precision", "discernibility"):
                        lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=budget), METRICS[mname]())
                        if not sat:
                            with pytest.raises(UnsatisfiableError):
                                optimal.run(lattice, batch=4)
                            continue
                        res = optimal.run(lattice, batch=4)
                        tag = f"seed={seed} k={k} budget={budget} metric={mname} node={res.node}"
                        assert res.value == approx(min(m[mname] for m in sat.values())), tag
                        for idx in (lattice.status == FAILS).nonzero()[0]:
                            assert table[lattice.node(int(idx))][0] > budget or not table[lattice.node(int(idx))][1], tag
                        tagged += int((lattice.marginal_suppression() > budget).sum())
        finally:
            engine.close()
    assert tagged > 0


@pytest.mark.parametrize("seed", range(4))
def test_subset_counts_read_locally_equal_the_engines_grouping(seed, tmp_path, monkeypatch):
    """The leaf-code counts of QI pairs and triples: summed in numpy from the base set (small
    sets; dense bincount, or sorting when the bins are many) equal the engine's GROUPING SETS
    (large sets)."""
    from sqlanon.stats import marginals

    rng = random.Random(7919 * seed + 1)
    case = brute.random_case(rng, tmp_path, n_qi=4, n_rows=rng.randint(60, 220), depths=[rng.randint(1, 2) for _ in range(4)])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(distinct_s=True))  # several base rows per code combination
        subsets = [(0, 1), (1, 3), (0, 2, 3), (0, 1, 2)]

        def cells(counts):
            return {subset: sorted(zip(*[c.tolist() for c in codes], cnts.tolist())) for subset, (codes, cnts) in counts.items()}

        local = cells(marginals.subset_counts(stats, subsets))
        monkeypatch.setattr(marginals, "DENSE_BINS", 0)
        assert cells(marginals.subset_counts(stats, subsets)) == local
        monkeypatch.setattr(marginals, "LOCAL_ROWS", 0)
        assert cells(marginals.subset_counts(stats, subsets)) == local
        assert all(sum(n for *_, n in cs) == case.n for cs in local.values())
    finally:
        engine.close()


def test_arrow_ints_reads_chunks_offsets_and_nulls():
    import numpy as np
    import pyarrow as pa

    from sqlanon.stats.marginals import arrow_ints

    parts = [pa.array([3, None, 5, 9], pa.int16()).slice(1), pa.array([2**40, None], pa.int64()), pa.array([250], pa.uint8())]
    values, valid = [], []
    for part in parts:
        got, ok = arrow_ints(pa.chunked_array([part]))
        values += got.tolist()
        valid += ok.tolist()
    assert values == [0, 5, 9, 2**40, 0, 250] and valid == [False, True, True, True, False, True]
    got, ok = arrow_ints(pa.chunked_array([pa.array([1, 2], pa.int32()), pa.array([None, 4], pa.int32())]))
    assert got.tolist() == [1, 2, 0, 4] and ok.tolist() == [True, True, False, True] and got.dtype == np.int64
    with pytest.raises(TypeError):
        arrow_ints(pa.chunked_array([pa.array([1.5])]))


def test_a_lattice_search_imports_no_pandas(adult):
    """pyarrow's ``to_numpy`` imports pandas (0.5-1.7 s in a fresh process): the marginal bound,
    read before the first node of every lattice search, must not go through it."""
    import subprocess

    code = (
        "import sys, sqlanon; "
        f"sqlanon.anonymize(input={adult['csv']!r}, delimiter=';', qi={adult['qi']!r}, k=10, max_suppression=0, metric='loss', search='optimal'); "
        "assert 'pandas' not in sys.modules, 'pandas was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(paths.ROOT))
    assert done.returncode == 0, done.stderr[-2000:]
