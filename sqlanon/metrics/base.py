"""A metric is a number over a node's frequency set (lower is better: information loss).

Each metric gives
* ``aggregates(stats, node)``: extra SQL aggregates over the flagged class table (``ok`` marks
  classes that are released, the others are suppressed);
* ``value(stats, node, ns)``: the metric from those aggregates;
* ``prior_bound(stats, node)``: a lower bound known without touching the data (or from per-column
  frequencies), used to order and stop the optimal search;
* ``query_bound(stats, node, ns)``: optionally a lower bound that holds for the node *and all its
  generalizations* (monotone), used to prune whole sub-lattices.

**Attribute weights** (ARX's ``ARXConfiguration.setAttributeWeight``): a multi-dimensional metric
(precision, LM, entropy, height) computes one value per QI and aggregates them; with weights, each
QI's value is multiplied by its weight divided by the largest weight (ARX's
``AbstractMetricMultiDimensional``), then aggregated as before (arithmetic mean for precision and
LM, sum for entropy and height). Single-dimensional metrics (discernibility, AECS, CM) score classes,
not attributes: they refuse weights.
"""

from __future__ import annotations

import math

from sqlanon.errors import ConfigError
from sqlanon.privacy.needs import ClassNeeds


def normalize_weights(weights) -> list[float]:
    """ARX's normalization: each weight over the largest (all 1 when every weight is 0)."""
    ws = [float(w) for w in weights]
    for w in ws:
        if not math.isfinite(w) or w < 0:
            raise ConfigError(f"attribute weights must be finite and >= 0, got {w!r}")
    top = max(ws, default=0.0)
    return [1.0] * len(ws) if top == 0 else [w / top for w in ws]


class Metric:
    name = "metric"
    needs = ClassNeeds()
    #: multi-dimensional (one value per QI): attribute weights apply
    weighted = False

    def __init__(self, weights=None) -> None:
        """``weights``: one number per QI (in QI order), or None (all equal)."""
        if weights is not None and not self.weighted:
            raise ConfigError(
                f"metric {self.name} scores equivalence classes, not attributes: attribute weights "
                "apply to precision, lm, entropy and height"
            )
        self.weights = normalize_weights(weights) if weights is not None else None

    def bind(self, requirement) -> None:
        """What the metric's bounds read of the requirement, given by the search that holds it
        (nothing by default; the class-size floor ``k`` for :mod:`sqlanon.metrics.discernibility`)."""

    def w(self, i: int) -> float:
        """The normalized weight of QI ``i`` (1 without weights)."""
        return 1.0 if self.weights is None else self.weights[i]

    def aggregates(self, stats, node) -> list:
        return []

    def value(self, stats, node, ns) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def prior_bound(self, stats, node) -> float:
        return float("-inf")

    def query_bound(self, stats, node, ns) -> float | None:
        return None

    #: :meth:`suppressed_bounds` can be tighter than the prior with nothing known suppressed (the
    #: search then asks it for every open node, not only those with suppressed rows known)
    bounds_unsuppressed = False

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        """A lower bound knowing at least ``suppressed`` rows are suppressed (default: prior)."""
        return prior

    def suppressed_bounds(self, stats, nodes, prior, suppressed):
        """:meth:`suppressed_bound` for many nodes at once (numpy arrays: nodes x QIs, priors,
        suppressed rows); metrics with a closed form vectorize it."""
        import numpy as np

        if type(self).suppressed_bound is Metric.suppressed_bound:
            return np.asarray(prior, dtype=np.float64)  # the default bound is the prior itself
        return np.array([self.suppressed_bound(stats, tuple(int(x) for x in n), float(p), int(s)) for n, p, s in zip(nodes, prior, suppressed)], dtype=np.float64)

    def batch_terms(self, stats):
        """For the batch statement (:mod:`sqlanon.stats.batch`): ``(row parts, final aggregates)``.

        A row part is ``(name, [(QI, values_at)])``: per joined row, ``cnt`` times the sum over its
        QIs of ``values_at(level)[code]`` (the value of the row's generalized code at the node's
        level), summed per class under ``name``. Final aggregates run over the flagged classes of
        each node (columns ``cnt``, ``ok`` and the parts). Default: no row parts and the one-node
        aggregates when they do not depend on the node; None otherwise (the search then uses one
        statement per node)."""
        aggs = self.aggregates(stats, None)
        if callable(aggs):
            return None
        return [], list(aggs)

    def prior_array(self, stats, nodes):
        """Every node's prior at once (numpy: nodes x QIs), when the metric computes it without a
        Python loop over nodes and its prior is not a sum (:meth:`prior_terms`); None otherwise."""
        return None

    def prior_terms(self, stats):
        """Per QI, the prior bound's term at each level, when the prior is their sum (so the
        priors of a whole lattice are one numpy gather); None otherwise."""
        return None

    def known_value(self, stats, node, budget: int) -> float | None:
        """The value of a node known to satisfy the requirement, when it needs no query (the
        metric does not depend on the data, or nothing may be suppressed and the prior is then
        exact); None when the node's frequency set is needed."""
        return None


class PriorMetric(Metric):
    """A metric known without the node's frequency set (from its levels, or per-column
    frequencies): its prior bound is its value, so a node is scored without a query."""

    def value(self, stats, node, ns) -> float:
        return self.prior_bound(stats, node)

    def known_value(self, stats, node, budget: int) -> float:
        return self.prior_bound(stats, node)


def top_row_sums(values, freqs, s):
    """The sum of the ``s`` largest per-row values, where ``freqs[c]`` rows carry ``values[c]``
    (``s``: an array of row counts; ``s`` beyond the rows takes them all). When ``s`` rows are
    suppressed but not known which, at most this much of a per-row sum leaves with them: the
    suppression bounds of LM and Loss.

    >>> top_row_sums([0.5, 1.0, 0.25], [4, 2, 10], [0, 1, 3, 100]).tolist()
    [0.0, 1.0, 2.5, 6.5]
    """
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    f = np.asarray(freqs, dtype=np.float64)
    order = np.argsort(-v, kind="stable")
    v, f = v[order], f[order]
    rows = np.concatenate(([0.0], np.cumsum(f)))
    sums = np.concatenate(([0.0], np.cumsum(f * v)))
    s = np.minimum(np.asarray(s, dtype=np.float64), rows[-1])
    j = np.searchsorted(rows, s, side="right") - 1  # rows[j] <= s < rows[j + 1]: the values before j taken whole
    partial = np.append(v, 0.0)[j]
    return sums[j] + (s - rows[j]) * partial


def per_level(nodes, i: int, levels, fn):
    """``fn(level, mask)`` for each level of QI ``i`` present in ``nodes`` (rows: nodes), writing
    into one array: the per-QI step of the vectorized bounds."""
    import numpy as np

    out = np.zeros(len(nodes), dtype=np.float64)
    column = np.asarray(nodes)[:, i]
    for level in levels:
        mask = column == level
        if mask.any():
            out[mask] = fn(level, mask)
    return out
