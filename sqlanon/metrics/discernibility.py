"""Discernibility (Bayardo & Agrawal): each released row costs the size of its class, each
suppressed row costs the table size. Without suppression it is the sum of squared class sizes,
which is monotone and bounds the metric for the node and every generalization."""

from sqlglot import exp

from sqlanon.metrics.base import Metric
from sqlanon.source import col
from sqlanon.stats import as_double, if_, lit, sum_


class Discernibility(Metric):
    name = "discernibility"

    def aggregates(self, stats, node):
        sq = exp.Mul(this=as_double(col("cnt")), expression=as_double(col("cnt")))
        return [("dm_released", sum_(if_(col("ok"), sq, lit(0.0)))), ("dm_all", sum_(sq))]

    def value(self, stats, node, ns) -> float:
        return float(ns.extra["dm_released"] or 0.0) + float(ns.suppressed) * stats.rows

    def prior_bound(self, stats, node) -> float:
        return float(stats.rows)

    def query_bound(self, stats, node, ns) -> float:
        return float(ns.extra["dm_all"] or 0.0)
