"""Flash probes that look ahead (``optimal.Probe.lookahead``): a round holding few nodes is filled
with the nodes the probes would ask in their next steps. The look-ahead must name exactly what the
binary search would ask after either outcome, and the search with it must still find the exhaustive
optimum (k-anonymity with and without a budget: the batch statement and look-ahead are used)."""

from __future__ import annotations

import copy
import itertools
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
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.search.lattice import optimal  # noqa: E402
from sqlanon.search.lattice.lattice import FAILS, SATISFIES, UNKNOWN, Lattice  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402


def _next_after(probe, lattice, decided: dict) -> int | None:
    """The node ``probe`` asks next once the nodes in ``decided`` have those statuses."""
    saved = lattice.status.copy()
    try:
        for idx, st in decided.items():
            lattice.status[idx] = st
        return copy.copy(probe).next_node(lattice)
    finally:
        lattice.status[:] = saved


@pytest.mark.parametrize("seed", range(4))
def test_lookahead_names_what_the_binary_search_asks_next(seed, tmp_path):
    rng = random.Random(7919 * seed + 1)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=120, depths=[3, 3, 2])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        lattice = Lattice(stats, Requirement([KAnonymity(2)], budget=0), METRICS["precision"]())
        prior = optimal.priors(lattice)
        for start in rng.sample(range(len(lattice)), 6):
            probe = optimal.Probe(lattice, start, prior)
            # some path nodes already decided (as earlier rounds would leave them)
            lattice.status[:] = UNKNOWN
            for idx in probe.path:
                lattice.status[idx] = rng.choice([UNKNOWN, UNKNOWN, SATISFIES, FAILS])
            ahead = probe.lookahead(lattice, 2)
            first = _next_after(probe, lattice, {})
            if first is None:
                assert ahead == []
                continue
            # one step ahead: what it asks after the next node satisfies or fails
            step1 = [_next_after(probe, lattice, {first: st}) for st in (SATISFIES, FAILS)]
            assert sorted(n for n in set(step1) if n is not None) == sorted(set(ahead[0] if ahead else []))
            # two steps ahead: after every outcome of the next two
            step2 = set()
            for st1, st2 in itertools.product((SATISFIES, FAILS), repeat=2):
                second = _next_after(probe, lattice, {first: st1})
                if second is None:
                    continue
                third = _next_after(probe, lattice, {first: st1, second: st2})
                if third is not None:
                    step2.add(third)
            assert sorted(step2) == sorted(set(ahead[1] if len(ahead) > 1 else []))
            assert probe.lo == 0 and not probe.done  # looking ahead changes nothing
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(6))
def test_optimal_with_lookahead_finds_the_exhaustive_optimum(seed, tmp_path, monkeypatch):
    rng = random.Random(104723 * seed + 11)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(60, 250), depths=[rng.randint(1, 3) for _ in range(3)])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        k = rng.randint(2, 6)
        rounds = [0, 0]
        for fraction in (0.0, 0.06):
            budget = math.floor(fraction * case.n + 1e-9)
            sat = satisfying(brute.exhaustive(case, brute.Spec(k=k), budget))
            if not sat:
                continue
            for mname in ("precision", "loss", "lm", "discernibility"):
                expected = min(m[mname] for m in sat.values())
                found = {}
                for fill in (0, 10**9):  # look-ahead off / every round filled
                    monkeypatch.setattr(optimal, "SPECULATE_ROWS", fill)
                    lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=budget), METRICS[mname]())
                    res = optimal.run(lattice, batch=8, probes=2)
                    tag = f"seed={seed} k={k} budget={budget} metric={mname} fill={fill} node={res.node}"
                    assert res.node in sat, tag
                    assert res.value == approx(expected), tag
                    found[fill] = (lattice.statements, len(lattice.evaluated))
                rounds[0] += found[0][0]
                rounds[1] += found[10**9][0]
        # filled rounds: fewer statements over the case's searches (what the look-ahead is for)
        assert rounds[1] < rounds[0], rounds
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(6))
def test_truncated_paths_find_the_exhaustive_optimum(seed, tmp_path, monkeypatch):
    """Probe paths cut at the incumbent's value (large base sets with a suppression budget,
    ``optimal.TRUNCATE_ROWS``; forced here on small cases) find the same optimum."""
    rng = random.Random(15485863 * seed + 5)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(60, 250), depths=[rng.randint(1, 3) for _ in range(3)])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        k = rng.randint(2, 6)
        budget = math.floor(0.06 * case.n + 1e-9)
        sat = satisfying(brute.exhaustive(case, brute.Spec(k=k), budget))
        if not sat:
            pytest.skip("no satisfying node in this case")
        for mname in ("precision", "loss", "lm", "discernibility"):
            expected = min(m[mname] for m in sat.values())
            # whole paths / paths cut at the incumbent (the module's default, or the engine's own
            # limit, as Spark's 0 overrides DuckDB's default)
            for cut, engine_cut in ((10**12, None), (0, None), (10**12, 0)):
                monkeypatch.setattr(optimal, "TRUNCATE_ROWS", cut)
                monkeypatch.setattr(engine, "truncate_rows", engine_cut, raising=False)
                lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=budget), METRICS[mname]())
                assert optimal.truncated_paths(lattice) == (cut == 0 or engine_cut == 0)
                res = optimal.run(lattice, batch=8, probes=2)
                tag = f"seed={seed} k={k} budget={budget} metric={mname} cut={cut} node={res.node}"
                assert res.node in sat, tag
                assert res.value == approx(expected), tag
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(4))
def test_thread_wide_rounds_find_the_exhaustive_optimum(seed, tmp_path, monkeypatch):
    """On a large base set (forced here: ``SPECULATE_ROWS`` 0) an engine with two threads gets
    rounds of each probe's next node and both of its successors (option ``lookahead_threads``):
    the same optimum as without, and with one thread nothing changes."""
    rng = random.Random(32452843 * seed + 3)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(60, 250), depths=[rng.randint(1, 3) for _ in range(3)])
    monkeypatch.setattr(optimal, "SPECULATE_ROWS", 0)
    k = rng.randint(2, 6)
    rounds = [0, 0]
    for threads in (1, 2):
        engine = connect(threads=threads)
        try:
            stats = make_stats(engine, case, ClassNeeds())
            for fraction in (0.0, 0.06):
                budget = math.floor(fraction * case.n + 1e-9)
                sat = satisfying(brute.exhaustive(case, brute.Spec(k=k), budget))
                if not sat:
                    continue
                for mname in ("precision", "loss", "discernibility"):
                    expected = min(m[mname] for m in sat.values())
                    found = {}
                    for wide in (False, True):
                        lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=budget), METRICS[mname]())
                        res = optimal.run(lattice, batch=8, probes=2, lookahead_threads=wide)
                        assert optimal.threads_wide(lattice, wide) == (wide and threads > 1)
                        tag = f"seed={seed} threads={threads} k={k} budget={budget} metric={mname} wide={wide} node={res.node}"
                        assert res.node in sat, tag
                        assert res.value == approx(expected), tag
                        found[wide] = (lattice.statements, len(lattice.evaluated))
                    if threads == 1:
                        assert found[True] == found[False]  # one thread: the same search
                    else:
                        rounds[0] += found[False][0]
                        rounds[1] += found[True][0]
        finally:
            engine.close()
    assert rounds[1] < rounds[0], rounds  # two threads: fewer, wider rounds
