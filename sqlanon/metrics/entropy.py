"""Non-uniform entropy, exactly as ARX's ``createPrecomputedEntropyMetric`` (monotonic variant):

``sum over QIs and rows of -log2(f(original value) / f(released value))`` where ``f`` counts rows
of the *input* with that value (or with a value generalizing to it). As in ARX the value does not
depend on which rows are suppressed, so it is known from per-column frequencies alone: a node is
scored without a query, and the data is only asked whether it satisfies the privacy model.
With attribute weights each QI's sum is multiplied by its normalized weight (ARX: SUM aggregate).
"""

import math

from sqlanon.metrics.base import PriorMetric


def column_entropy(stats, i: int, level: int) -> float:
    h = stats.hierarchies[i]
    leaf_freq = stats.column_freqs[i]
    gen_freq = stats.leaf_level_freq(i, level)
    to_level = h.leaf_to_level(level)
    total = 0.0
    for leaf, f in enumerate(leaf_freq):
        if f:
            total += f * math.log2(f / gen_freq[to_level[leaf]])
    return -total if total else 0.0


class Entropy(PriorMetric):
    name = "entropy"
    weighted = True

    def prior_terms(self, stats):
        return [[self.w(i) * column_entropy(stats, i, lv) for lv in range(h.max_level + 1)] for i, h in enumerate(stats.hierarchies)]

    def prior_bound(self, stats, node) -> float:
        cache = stats.memory.metrics.entropy
        total = 0.0
        for i, level in enumerate(node):
            key = (i, level)
            if key not in cache:
                cache[key] = column_entropy(stats, i, level)
            total += self.w(i) * cache[key]
        return total
