"""Average equivalence class size (LeFevre et al.), as ARX: rows / classes, where all
suppressed rows together form one class."""

from sqlanon.metrics.base import Metric
from sqlanon.metrics.discernibility import max_classes


class AECS(Metric):
    name = "aecs"

    def value(self, stats, node, ns) -> float:
        released_classes = ns.classes - ns.bad_classes + (1 if ns.suppressed else 0)
        return stats.rows / max(released_classes, 1)

    def prior_bound(self, stats, node) -> float:
        return stats.rows / max_classes(stats, node)

    def query_bound(self, stats, node, ns) -> float:
        return stats.rows / max(ns.classes, 1)
