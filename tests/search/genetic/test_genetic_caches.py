"""The genetic search's caches stay within their bounds (issue 44): the per-attribute parts within
their byte bound (:data:`sqlanon.search.genetic.objective.PART_CACHE_BYTES`), the memo within its
entry cap (:data:`sqlanon.search.genetic.objective.MEMO_ENTRIES`); when the memo drops its oldest
entries, the search goes on (the population's results are its own) and returns the answer the
uncapped run does; and a dropped part, scored again, is the same part."""

from __future__ import annotations

import numpy as np
import pytest

import sqlanon
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.search.genetic import objective
from sqlanon.search.genetic.cut import Layout
from test_lightning import wide_table


def run(data, qi, **opts):
    return sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=3, max_suppression=0.1, metric="loss", search="genetic",
                             search_options={"iterations": 150, "seed": 1, "population": 20, "seed_lattice": False, "local_rows": 0, **opts}, dry_run=True)


def test_caps_hold_and_change_no_answer(tmp_path, monkeypatch):
    data, qi, _, _ = wide_table(tmp_path, n_qi=12, n_rows=300, seed=2)
    free = run(data, qi)
    seen: dict = {}
    original = objective.FlexibleEvaluator._evaluate

    def watched(self, todo, per_column):
        out = original(self, todo, per_column)
        seen["memo"] = max(seen.get("memo", 0), len(self.memo))
        seen["parts"] = max(seen.get("parts", 0), self.cache_bytes())
        share = seen["share"] = self.part_limit // self.n
        held = [sum(size for _, size in cache.values()) for cache in self.part_cache]
        assert held == self.part_bytes  # the count is the cache's own
        # after every call, each QI's cache within its share, or one part alone when a part is larger
        for b, cache in zip(held, self.part_cache):
            assert b <= share or len(cache) == 1, (b, share, len(cache))
        seen["calls"] = seen.get("calls", 0) + 1
        return out

    monkeypatch.setattr(objective, "MEMO_ENTRIES", 25)
    monkeypatch.setattr(objective, "PART_CACHE_BYTES", 12 * 600)
    monkeypatch.setattr(objective.FlexibleEvaluator, "_evaluate", watched)
    capped = run(data, qi)
    assert seen["memo"] <= 25
    assert seen["calls"] > 1 and seen["parts"] <= 12 * max(seen["share"], 600)
    # the SQL path's sums are rounded (ties rank alike): the capped run finds the same answer
    assert capped.transformation == free.transformation and capped.metric.value == pytest.approx(free.metric.value)
    assert capped.extra["evaluations"] >= free.extra["evaluations"]  # dropped results were scored again


def test_a_dropped_part_is_scored_again_to_the_same_arrays():
    class Stats:  # what FlexibleEvaluator.part reads
        pass

    layout_stats = Stats()
    h = Hierarchy("q", [[str(v), f"{v // 4}", "*"] for v in range(8)])
    layout_stats.hierarchies = [h]
    layout_stats.column_freqs = [[1, 2, 3, 4, 5, 6, 7, 8]]
    layout = Layout.build(["q"], [h], layout_stats.column_freqs)
    ev = objective.FlexibleEvaluator.__new__(objective.FlexibleEvaluator)
    ev.stats, ev.layout, ev.n, ev.weights, ev.unit = layout_stats, layout, 1, None, "lm"
    ev.objective = None
    ev.part_cache, ev.part_bytes, ev.part_limit, ev._freqs = [{}], [0], 1, [None]  # room for one part at a time
    bits = [tuple(layout.repair([1] * layout.nbits)), tuple(layout.repair([0] * layout.nbits))]
    first = ev.part(0, bits[0])
    ev.part(0, bits[1])  # drops the first
    assert bits[0] not in ev.part_cache[0] and len(ev.part_cache[0]) == 1
    again = ev.part(0, bits[0])
    assert again is not first and np.array_equal(again["codes"], first["codes"]) and again["colsum"] == first["colsum"]


def test_population_results_survive_the_memo(tmp_path, monkeypatch):
    """With a memo of one entry, every member's result is gone from it: the search reads its own."""
    data, qi, _, _ = wide_table(tmp_path, n_qi=6, n_rows=200, seed=4)
    free = run(data, qi, iterations=40)
    monkeypatch.setattr(objective, "MEMO_ENTRIES", 1)
    report = run(data, qi, iterations=40)
    assert report.extra["best_so_far"] and report.suppressed_rows <= report.suppression_budget
    # the same search (the memo only saves work): the same answer, its dropped results scored again
    assert report.transformation == free.transformation and report.extra["evaluations"] > free.extra["evaluations"]


def test_memo_keys_are_packed_bits_one_per_distinct_chromosome(tmp_path, monkeypatch):
    """The memo and the unique-solution count key a chromosome by its bits packed 8 to a byte
    (:func:`sqlanon.search.genetic.cut.chromosome_key`): distinct chromosomes never share a key
    (an oracle over random bit strings, trailing zeros included), the memo's keys are
    ``ceil(bits / 8)`` bytes, and ``unique_solutions`` counts the distinct chromosomes scored."""
    from sqlanon.search.genetic import planner
    from sqlanon.search.genetic.cut import chromosome_key

    rng = np.random.default_rng(3)
    for n in (1, 7, 8, 9, 61, 1196):
        chromosomes = {tuple(int(b) for b in rng.integers(0, 2, n)) for _ in range(200)} | {(0,) * n, (0,) * (n - 1) + (1,)}
        keys = {chromosome_key(ch) for ch in chromosomes}
        assert len(keys) == len(chromosomes) and {len(k) for k in keys} == {(n + 7) // 8}
        assert all(np.array_equal(np.unpackbits(np.frombuffer(chromosome_key(ch), dtype=np.uint8))[:n], ch) for ch in chromosomes)
    data, qi, _, _ = wide_table(tmp_path, n_qi=12, n_rows=300, seed=2)
    scored: set = set()
    seen: dict = {}
    original = planner.GA.score

    def watched(self, chromosomes):
        scored.update(chromosomes)
        out = original(self, chromosomes)
        seen["nbits"] = self.layout.nbits
        seen["key_sizes"] = {len(k) for k in self.ev.memo}
        return out

    monkeypatch.setattr(planner.GA, "score", watched)
    report = run(data, qi)
    assert seen["key_sizes"] == {(seen["nbits"] + 7) // 8}
    assert report.extra["unique_solutions"] == len(scored)
