"""The genetic search's per-attribute parts built with arrays (issue 44) and its in-process
fitness independent of the fetched rows' order.

Oracle: on random numeric hierarchies (unused leaves, gaps, repeated values) and random bit
strings, :meth:`IntervalCoder.group_arrays` gives exactly what :meth:`IntervalCoder.groups` gives
(per leaf its interval, per interval its LM loss and leaves), and the evaluator's parts (codes,
per-leaf losses, column sums) equal the per-leaf Python loop's, bit for bit. The local fitness
answers the same, to the last bit, whatever order the engine returned the frequency set in (the
kernel sums each candidate's classes in row order), so a seeded search is deterministic."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sqlanon.hierarchy.model import Hierarchy
from sqlanon.search.genetic import objective
from sqlanon.search.genetic.cut import IntervalCoder, Layout
from sqlanon.stats import local as stats_local
from sqlanon.search.genetic.local import LocalFitness


def numeric_hierarchy(rng: random.Random, n: int) -> tuple[Hierarchy, list[int]]:
    values = sorted(rng.sample(range(0, 4 * n), n))
    freq = [0 if rng.random() < 0.2 else rng.randint(1, 9) for _ in values]
    freq[rng.randrange(n)] = 3  # at least one used value
    return Hierarchy("x", [[str(v), "*"] for v in values], numeric=True), freq


@pytest.mark.parametrize("seed", range(8))
def test_group_arrays_equal_groups(seed):
    rng = random.Random(seed)
    h, freq = numeric_hierarchy(rng, rng.randint(2, 300))
    coder = IntervalCoder(h, freq, max_endpoints=rng.choice([4, 16, 128]))
    for _ in range(20):
        bits = [int(rng.random() < rng.random()) for _ in range(coder.nbits)]
        groups = coder.groups(bits)
        codes, loss, sizes = coder.group_arrays(bits)
        want = np.zeros(coder.n_leaves, dtype=np.int64)
        for g, (_, _, leaves) in enumerate(groups):
            want[leaves] = g
        assert codes.tolist() == want.tolist()
        assert loss.tolist() == [l for _, l, _ in groups]  # the same doubles
        assert sizes.tolist() == [len(leaves) for _, _, leaves in groups]


class _Stats:  # what FlexibleEvaluator.part reads
    pass


def loop_part(ev, i, bits):
    """The per-leaf loop the array path replaced (the reference)."""
    coder = ev.layout.coders[i]
    groups = coder.groups(bits)
    if ev.unit == "share":
        values = ev.objective.metric.group_values(groups, ev.stats.hierarchies[i])
    else:
        w = 1.0 if ev.weights is None else ev.weights[i]
        values = [l if ev.weights is None else w * l for _, l, _ in groups]
    codes, loss = np.zeros(coder.n_leaves, dtype=np.int64), np.zeros(coder.n_leaves)
    for g, ((_, _, leaves), v) in enumerate(zip(groups, values)):
        codes[leaves] = g
        loss[leaves] = v
    return codes, loss, sum(f * l for f, l in zip(ev.stats.column_freqs[i], loss.tolist()))


@pytest.mark.parametrize("unit,weights", [("lm", None), ("lm", [0.3, 1.7]), ("share", None)])
def test_parts_equal_the_per_leaf_loop(unit, weights):
    rng = random.Random(7)
    hs, freqs = zip(*(numeric_hierarchy(rng, n) for n in (40, 250)))
    stats = _Stats()
    stats.hierarchies, stats.column_freqs = list(hs), [list(f) for f in freqs]
    layout = Layout.build(["a", "b"], list(hs), stats.column_freqs)
    ev = objective.FlexibleEvaluator.__new__(objective.FlexibleEvaluator)
    ev.stats, ev.layout, ev.n, ev.weights, ev.unit = stats, layout, 2, weights, unit
    ev.objective = objective.build_objective("loss" if unit == "share" else "lm", {}, None)[0]
    ev.part_cache, ev.part_bytes, ev.part_limit, ev._freqs = [{}, {}], [0, 0], 1 << 20, [None, None]
    for _ in range(30):
        ch = tuple(int(rng.random() < 0.3) for _ in range(layout.nbits))
        for i, bits in enumerate(layout.split(ch)):
            got = ev.part(i, bits)
            codes, loss, colsum = loop_part(ev, i, bits)
            assert got["codes"].tolist() == codes.tolist() and got["loss"].tolist() == loss.tolist()
            assert got["colsum"] == colsum  # the same running sum, not merely close


def test_local_fitness_does_not_depend_on_the_fetched_order():
    assert stats_local.warm_up(wait=True)
    rng = np.random.default_rng(3)
    rows, q = 3000, 4
    codes = rng.integers(0, 30, size=(rows, q)).astype(np.int32)
    codes = np.unique(codes, axis=0)  # a frequency set: distinct tuples
    cnt = rng.integers(1, 5, size=len(codes)).astype(np.int64)
    cands = []
    for _ in range(12):
        maps = [(np.arange(30) // rng.integers(1, 8)).astype(np.int64) for _ in range(q)]
        cands.append({"codes": maps, "groups": [int(m.max()) + 1 for m in maps],
                      "leaf_loss": [rng.random(30) for _ in range(q)], "group_loss": [None] * q})
    names = ["c", "suppressed", "classes", "bad", "smallest", *[f"lm_sup{i}" for i in range(q)]]
    answers = []
    for perm_seed in range(4):
        order = np.random.default_rng(perm_seed).permutation(len(codes))
        fit = LocalFitness(stats_local.LocalSet(np.ascontiguousarray(codes[order]), cnt[order]), 5, [[i] for i in range(q)], [1] * q, threads=2)
        answers.append(fit.evaluate(cands, lm=True, per_column=True, names=names, lm_within=None))
    assert all(a == answers[0] for a in answers[1:])  # exactly, every float
    assert any(row["suppressed"] for row in answers[0])  # the sums were exercised


@pytest.mark.parametrize("seed", range(4))
def test_quantized_end_points_are_the_nearest_to_each_quantile(seed):
    """More distinct values than ``max_endpoints``: end point ``q`` is the first value whose
    running count is nearest to ``q / (max_endpoints + 1)`` of the rows (the plain-Python rule)."""
    rng = random.Random(seed)
    h, freq = numeric_hierarchy(rng, 400)
    coder = IntervalCoder(h, freq, max_endpoints=17)
    used = sorted({float(r[0]) for r, f in zip(h.rows, freq) if f > 0})
    weight = {v: 0 for v in used}
    for r, f in zip(h.rows, freq):
        if float(r[0]) in weight:
            weight[float(r[0])] += f
    cum, acc = [], 0
    for v in used[:-1]:
        acc += weight[v]
        cum.append(acc)
    total = sum(weight.values())
    want = sorted({min(range(len(cum)), key=lambda j: abs(cum[j] - total * q / 18)) for q in range(1, 18)})
    assert coder.endpoints == want and len(want) > 1
