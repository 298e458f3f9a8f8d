"""Precision loss (1 - Sweeney's precision), as ARX computes it (``MetricMDNMPrecision``): per QI
the mean over rows of ``level / max level``, a suppressed row counting 1; the arithmetic mean over
QIs, each QI's value times its normalized attribute weight (1 without weights)."""

from sqlanon.metrics.base import Metric


def level_loss(stats, node, weights=None) -> float:
    ws = weights or [1.0] * len(node)
    parts = [w * (lvl / h.max_level if h.max_level else 0.0) for w, lvl, h in zip(ws, node, stats.hierarchies)]
    return sum(parts) / len(parts) if parts else 0.0


def suppressed_loss(weights, n_qis: int) -> float:
    """A suppressed row's loss: 1 in every QI, weighted and averaged."""
    return (sum(weights) / n_qis if weights else 1.0) if n_qis else 0.0


class Precision(Metric):
    name = "precision"
    weighted = True

    def value(self, stats, node, ns) -> float:
        p = level_loss(stats, node, self.weights)
        n = stats.rows
        return (p * (n - ns.suppressed) + ns.suppressed * suppressed_loss(self.weights, len(node))) / n

    def prior_bound(self, stats, node) -> float:
        return level_loss(stats, node, self.weights)

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        return prior + suppressed * (suppressed_loss(self.weights, len(node)) - prior) / stats.rows

    def suppressed_bounds(self, stats, nodes, prior, suppressed):
        return prior + suppressed * (suppressed_loss(self.weights, len(stats.qis)) - prior) / stats.rows

    def prior_terms(self, stats):
        nq = len(stats.hierarchies)
        return [[self.w(i) * (lvl / h.max_level if h.max_level else 0.0) / nq for lvl in range(h.max_level + 1)] for i, h in enumerate(stats.hierarchies)]

    def known_value(self, stats, node, budget: int) -> float | None:
        # exactly what value() gives with nothing suppressed (same floating-point steps)
        return self.prior_bound(stats, node) * stats.rows / stats.rows if budget == 0 else None
