"""Height: the sum of generalization levels (Samarati; Aggarwal 20.3)."""

from sqlanon.metrics.base import Metric


class Height(Metric):
    name = "height"

    def value(self, stats, node, ns) -> float:
        return float(sum(node))

    def prior_bound(self, stats, node) -> float:
        return float(sum(node))
