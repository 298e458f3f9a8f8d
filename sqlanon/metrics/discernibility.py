"""Discernibility (Bayardo & Agrawal): each released row costs the size of its class, each
suppressed row costs the table size. Without suppression it is the sum of squared class sizes,
which is monotone and bounds the metric for the node and every generalization.

Bounds (the optimal search's): a released class holds at least ``k`` rows (the requirement's
class-size floor), so a node suppressing ``s`` rows costs at least ``s N + (N - s) k``, and its at
most ``C`` released classes at least ``(N - s)^2 / C`` (Cauchy-Schwarz; ``C`` from the column
frequencies). After a node is evaluated, every row of a class of ``c`` rows costs at least
``max(c, k)`` in any generalization (its class only grows, or it is suppressed at ``N``).
"""

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


def max_classes_many(stats, nodes):
    """:func:`max_classes` for many nodes (numpy: nodes x QIs)."""
    import numpy as np

    nodes = np.asarray(nodes)
    product = np.ones(len(nodes), dtype=np.float64)
    for i, h in enumerate(stats.hierarchies):
        present = np.array([sum(1 for f in stats.leaf_level_freq(i, lv) if f) for lv in range(h.max_level + 1)], dtype=np.float64)
        product *= present[nodes[:, i]]
    return np.minimum(product, float(stats.base.rows))


def released_most(stats, nodes, k: int):
    """Per node, the most classes of at least ``k`` rows it can release: each lies within one
    value of every QI (at the node's level), so a value of ``f`` rows holds at most ``f // k`` of
    them; the fewest over the QIs (numpy: nodes x QIs; column frequencies only)."""
    import numpy as np

    nodes = np.asarray(nodes)
    most = np.full(len(nodes), np.inf)
    for i, h in enumerate(stats.hierarchies):
        per_level = np.array([float(sum(f // k for f in stats.leaf_level_freq(i, lv))) for lv in range(h.max_level + 1)])
        most = np.minimum(most, per_level[nodes[:, i]])
    return most


class ClassFloorMetric(Metric):
    """A metric whose bounds use the fewest rows a released class holds: the requirement's k,
    bound by the search (:meth:`bind`); 1 before."""

    k = 1

    def bind(self, requirement) -> None:
        self.k = max(int(requirement.k), 1)


class Discernibility(ClassFloorMetric):
    name = "discernibility"

    def aggregates(self, stats, node):
        sq = exp.Mul(this=as_double(col("cnt")), expression=as_double(col("cnt")))
        return [("dm_released", sum_(if_(col("ok"), sq, lit(0.0)))), ("dm_all", sum_(sq))]

    def value(self, stats, node, ns) -> float:
        return float(ns.extra["dm_released"] or 0.0) + float(ns.suppressed) * stats.rows

    def prior_bound(self, stats, node) -> float:
        """Released rows cost their class size (>= k), suppressed ones N >= k; and with at most
        C classes, the sum of squared sizes is at least N^2 / C (Cauchy-Schwarz). It orders the
        search; :meth:`suppressed_bounds` (tighter: released classes only) prunes it."""
        n = stats.rows
        return max(float(n) * self.k, n * n / max_classes(stats, node))

    bounds_unsuppressed = True

    def suppressed_bounds(self, stats, nodes, prior, suppressed):
        """At least ``s`` rows suppressed: ``s N`` for them, and the released ``N - s`` rows cost
        at least ``k`` each and, in at most ``C`` classes, ``(N - s)^2 / C`` together (increasing
        in ``s`` once ``C >= 2``; for one class only the ``k`` term)."""
        import numpy as np

        n = float(stats.rows)
        s = np.minimum(np.asarray(suppressed, dtype=np.float64), n)
        c = np.minimum(max_classes_many(stats, nodes), released_most(stats, nodes, self.k))
        released = n - s
        square = np.where(c >= 2, released * released / np.maximum(c, 1.0), 0.0)
        bound = s * n + np.maximum(released * self.k, square)
        return np.maximum(np.asarray(prior, dtype=np.float64), bound)

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        import numpy as np

        return float(self.suppressed_bounds(stats, np.asarray([node]), [prior], [suppressed])[0])

    def query_bound(self, stats, node, ns) -> float:
        """For the node's generalizations: the sum of squared class sizes only grows, and a row of
        a class that is not released here (``suppressed`` rows) costs at least ``k`` there."""
        dm_all = float(ns.extra["dm_all"] or 0.0)
        floor = float(ns.extra["dm_released"] or 0.0) + self.k * float(ns.suppressed)
        return max(dm_all, floor)
