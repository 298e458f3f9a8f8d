"""Iyengar's classification metric CM: penalty 1 for every suppressed row and for every released
row that is not of its class's majority class value, over the number of rows."""

from sqlglot import exp

from sqlanon.metrics.base import Metric
from sqlanon.expr.atoms import col
from sqlanon.privacy.needs import ClassNeeds
from sqlanon.expr.atoms import if_, lit, sum_


class CM(Metric):
    name = "cm"
    needs = ClassNeeds(majority_y=True)

    def aggregates(self, stats, node):
        minority = exp.Sub(this=col("cnt"), expression=col("maxy"))
        return [("cm_released", sum_(if_(col("ok"), minority, lit(0)))), ("cm_all", sum_(minority))]

    def value(self, stats, node, ns) -> float:
        return (float(ns.extra["cm_released"] or 0) + ns.suppressed) / stats.rows

    def prior_bound(self, stats, node) -> float:
        return 0.0

    def suppressed_bounds(self, stats, nodes, prior, suppressed):
        """Each suppressed row costs 1: at least ``s / N``."""
        import numpy as np

        return np.maximum(np.asarray(prior, dtype=np.float64), np.asarray(suppressed, dtype=np.float64) / stats.rows)

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        return max(prior, suppressed / stats.rows)

    def query_bound(self, stats, node, ns) -> float:
        return float(ns.extra["cm_all"] or 0) / stats.rows
