"""Average equivalence class size (LeFevre et al.), as ARX: rows / classes, where all
suppressed rows together form one class.

Bounds (the optimal search's): a released class holds at least ``k`` rows (the requirement's
class-size floor), so a node suppressing at least ``s`` rows has at most ``floor((N - s) / k)``
released classes, plus one for the suppressed rows, and at most ``C`` classes in all (``C`` from the
column frequencies), nor more released ones than ``sum_v f_v // k`` over the values of any QI. After a node is evaluated, a generalization's released classes are unions of
its classes of at least ``k`` rows: at most its released classes plus ``floor(suppressed / k)``.
"""

from sqlanon.metrics.discernibility import ClassFloorMetric, max_classes, max_classes_many, released_most


def most_classes(n: float, k: int, suppressed):
    """The most classes (the suppressed rows' one included) a release of ``n`` rows with released
    classes of at least ``k`` rows can have when at least ``suppressed`` rows are suppressed."""
    import numpy as np

    s = np.maximum(np.asarray(suppressed, dtype=np.float64), 1.0)  # none suppressed: floor(N/k) <= floor((N-1)/k) + 1
    return np.floor((n - np.minimum(s, n)) / k) + 1.0


class AECS(ClassFloorMetric):
    name = "aecs"

    def value(self, stats, node, ns) -> float:
        released_classes = ns.classes - ns.bad_classes + (1 if ns.suppressed else 0)
        return stats.rows / max(released_classes, 1)

    def prior_bound(self, stats, node) -> float:
        """At most one class per value combination, and at most ``ceil(N / k)`` classes (the
        suppressed rows' one included). It orders the search; :meth:`suppressed_bounds` (with the
        per-QI limit on released classes) prunes it. (Adult, k=10 at 5 %: 2,551 nodes; 3,039 when the
        per-QI limit orders the search too: a tighter order is not always a better one.)"""
        most = min(float(max_classes(stats, node)), float(most_classes(float(stats.rows), self.k, 0)))
        return stats.rows / max(most, 1.0)

    bounds_unsuppressed = True

    def suppressed_bounds(self, stats, nodes, prior, suppressed):
        import numpy as np

        most = np.minimum(max_classes_many(stats, nodes), most_classes(float(stats.rows), self.k, suppressed))
        most = np.minimum(most, released_most(stats, nodes, self.k) + 1.0)
        return np.maximum(np.asarray(prior, dtype=np.float64), stats.rows / np.maximum(most, 1.0))

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        import numpy as np

        return float(self.suppressed_bounds(stats, np.asarray([node]), [prior], [suppressed])[0])

    def query_bound(self, stats, node, ns) -> float:
        """For the node's generalizations: classes only merge (at most this node's), and their
        released ones are unions of this node's classes holding at least ``k`` rows."""
        released = ns.classes - ns.bad_classes + ns.suppressed // self.k + 1
        return stats.rows / max(min(ns.classes, released), 1)
