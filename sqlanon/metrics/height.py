"""Height: the sum of generalization levels (Samarati; Aggarwal 20.3); with attribute weights,
ARX's ``MetricMDHeight``: the sum of each level times its QI's normalized weight."""

from sqlanon.metrics.base import PriorMetric


class Height(PriorMetric):
    name = "height"
    weighted = True

    def prior_terms(self, stats):
        return [[float(self.w(i) * lv) for lv in range(h.max_level + 1)] for i, h in enumerate(stats.hierarchies)]

    def prior_bound(self, stats, node) -> float:
        if self.weights is None:
            return float(sum(node))
        return float(sum(w * lv for w, lv in zip(self.weights, node)))
