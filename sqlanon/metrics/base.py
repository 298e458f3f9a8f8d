"""A metric is a number over a node's frequency set (lower is better: information loss).

Each metric gives
* ``aggregates(stats, node)``: extra SQL aggregates over the flagged class table (``ok`` marks
  classes that are released, the others are suppressed);
* ``value(stats, node, ns)``: the metric from those aggregates;
* ``prior_bound(stats, node)``: a lower bound known without touching the data (or from per-column
  frequencies), used to order and stop the optimal search;
* ``query_bound(stats, node, ns)``: optionally a lower bound that holds for the node *and all its
  generalizations* (monotone), used to prune whole sub-lattices.
"""

from __future__ import annotations

from sqlanon.stats import ClassNeeds


class Metric:
    name = "metric"
    needs = ClassNeeds()
    #: True when the value never decreases under generalization *without* suppression.
    monotone_without_suppression = True

    def aggregates(self, stats, node) -> list:
        return []

    def value(self, stats, node, ns) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def prior_bound(self, stats, node) -> float:
        return float("-inf")

    def query_bound(self, stats, node, ns) -> float | None:
        return None

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        """A lower bound knowing at least ``suppressed`` rows are suppressed (default: prior)."""
        return prior

    def class_value(self, classes: list[dict], rows: int, hierarchies, levels) -> float:  # pragma: no cover
        """Brute-force Python computation over released classes, for oracle tests."""
        raise NotImplementedError
