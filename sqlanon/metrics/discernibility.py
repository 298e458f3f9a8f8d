"""Discernibility (Bayardo & Agrawal): each released row costs the size of its class, each
suppressed row costs the table size. Without suppression it is the sum of squared class sizes,
which is monotone and bounds the metric for the node and every generalization."""

from sqlglot import exp

from sqlanon.metrics.base import Metric
from sqlanon.expr.atoms import col
from sqlanon.expr.atoms import as_double, if_, lit, sum_


def max_classes(stats, node) -> int:
    """An upper bound on the number of classes of a node, without touching the data."""
    bound = stats.base.rows
    product = 1
    for i, level in enumerate(node):
        product *= sum(1 for f in stats.leaf_level_freq(i, level) if f)
        if product >= bound:
            return bound
    return min(product, bound)


class Discernibility(Metric):
    name = "discernibility"

    def aggregates(self, stats, node):
        sq = exp.Mul(this=as_double(col("cnt")), expression=as_double(col("cnt")))
        return [("dm_released", sum_(if_(col("ok"), sq, lit(0.0)))), ("dm_all", sum_(sq))]

    def value(self, stats, node, ns) -> float:
        return float(ns.extra["dm_released"] or 0.0) + float(ns.suppressed) * stats.rows

    def prior_bound(self, stats, node) -> float:
        """Released rows cost their class size (>= k), suppressed ones N >= k; and with at most
        C classes, the sum of squared sizes is at least N^2 / C (Cauchy-Schwarz)."""
        n = stats.rows
        k = max(getattr(stats, "k_hint", 1), 1)
        return max(float(n) * k, n * n / max_classes(stats, node))

    def query_bound(self, stats, node, ns) -> float:
        return float(ns.extra["dm_all"] or 0.0)
