"""Precision loss (1 - Sweeney's precision), as ARX computes it: the mean over rows and QIs of
``level / max level``, with every QI of a suppressed row counting 1."""

from sqlanon.metrics.base import Metric


def level_loss(stats, node) -> float:
    parts = [lvl / h.max_level if h.max_level else 0.0 for lvl, h in zip(node, stats.hierarchies)]
    return sum(parts) / len(parts) if parts else 0.0


class Precision(Metric):
    name = "precision"
    monotone_without_suppression = True

    def value(self, stats, node, ns) -> float:
        p = level_loss(stats, node)
        n = stats.rows
        return (p * (n - ns.suppressed) + ns.suppressed) / n

    def prior_bound(self, stats, node) -> float:
        return level_loss(stats, node)

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        return prior + suppressed * (1.0 - prior) / stats.rows
