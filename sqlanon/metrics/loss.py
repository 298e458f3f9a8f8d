"""ARX's default utility metric "Loss" (``MetricMDNMLoss``) and its "granularity" measure.

Per QI ``i`` (with ``M_i`` leaves in its hierarchy and ``N`` rows), a released value's *domain
share* is ``|leaves under it| / M_i`` (``1/M_i`` for an original value, 1 for the root). With the
generalization/suppression factor ``gs`` (ARX default 0.5; ``g = 1`` if ``gs <= 0.5`` else
``2 - 2 gs``, ``s = 2 gs`` if ``gs < 0.5`` else 1)::

    agg_i  = sum over released classes   cnt * g * share_i(value)
           + sum over suppressed classes (s == 1 ? cnt : cnt*share_i + s*(cnt - cnt*share_i))
    loss_i = max(0, (agg_i - g*N/M_i) / (N - g*N/M_i))

so a suppressed row costs as much as a row generalized to the root (at ``gs = 0.5``). The QIs are
aggregated by the **geometric mean** ``prod_i ((loss_i + 1) * w_i)^(1/n) - 1`` (``loss``, ARX's
default) or the **arithmetic mean** ``sum_i w_i * loss_i / n`` (``loss-arithmetic``), ``w_i`` the
normalized attribute weights (1 without).

**Granularity** exactly as ARX reports it (``StatisticsQuality.getGranularity()
.getArithmeticMean()``, ``QualityModelColumnOrientedLoss`` over ``QualityDomainShareRaw``): per
QI ``i`` the mean over rows of the released value's share ``x_i`` (a suppressed row counts 1),
where a share is looked up **by label** in a map built level by level from the hierarchy (a label
on several levels takes the highest level's share; ``*`` counts 1); the QIs are aggregated
*before* normalizing, ``L = (mean_i x_i - mean_i 1/M_i) / (1 - mean_i 1/M_i)`` clamped to
``[0, 1]``, and ARX reports the quality ``1 - L`` (higher is better): that is ``arx_quality
.granularity``. As a metric to minimize, ``granularity`` is ``L``. It differs from
``loss-arithmetic`` (which normalizes each QI first) whenever the QIs' domains differ in size.
A flexible release's value missing from the label map (an interval the genetic search made)
takes its leaf count over ``M_i``.
"""

from __future__ import annotations

from collections import Counter

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.metrics.base import Metric, per_level, top_row_sums
from sqlanon.expr.atoms import col
from sqlanon.expr.atoms import if_, lit, sum_
from sqlanon.dialect import lookup

if TYPE_CHECKING:
    import numpy as np


def shares(h, level: int) -> list[float]:
    m = len(h.rows)
    return [c / m for c in h.leaves_under(level)] if m else [0.0] * len(h.labels(level))


def arx_share_map(h) -> dict[str, float]:
    """ARX's ``QualityDomainShareRaw``: label -> share of the hierarchy's leaves, levels merged
    from the leaves up (a later level's share replaces an earlier one of the same label)."""
    m = len(h.rows)
    out: dict[str, float] = {}
    if not m:
        return out
    for level in range(len(h.rows[0])):
        out.update({label: c / m for label, c in Counter(row[level] for row in h.rows).items()})
    return out


def arx_share(share_map: dict[str, float], label: str, leaves: int, m: int) -> float:
    """A released label's share: from ARX's map; ``*`` (suppressed) 1; else (a value ARX's
    hierarchy does not hold, e.g. a genetic interval) its leaves over ``m``."""
    hit = share_map.get(label)
    if hit is not None:
        return hit
    return 1.0 if label == "*" else (leaves / m if m else 0.0)


class Loss(Metric):
    name = "loss"
    weighted = True
    aggregate = "geometric"
    #: names of the per-QI sums (``{prefix}_rel{i}``) in a node's statistics
    prefix = "loss"

    def shares(self, h, level: int) -> list[float]:
        """Per code at ``level``, the released value's domain share."""
        return shares(h, level)

    def __init__(self, weights=None, gs_factor: float = 0.5) -> None:
        super().__init__(weights)
        if not 0.0 <= float(gs_factor) <= 1.0:
            raise ConfigError(f"the loss metric's gs_factor must lie in [0, 1], got {gs_factor!r}")
        self.gs = float(gs_factor)
        self.s_factor = 2.0 * self.gs if self.gs < 0.5 else 1.0
        self.g_factor = 1.0 if self.gs <= 0.5 else 1.0 - 2.0 * (self.gs - 0.5)

    # -- SQL ----------------------------------------------------------------------------------
    def aggregates(self, stats, node):
        return lambda params=None: self._aggregates(stats, node, params)

    def _aggregates(self, stats, node, params):
        out = []
        for i, (h, level) in enumerate(zip(stats.hierarchies, node)):
            share = exp.Mul(this=col("cnt"), expression=lookup(self.shares(h, level), col(stats.qcol(i)), stats.dialect, params))
            out.append((f"{self.prefix}_rel{i}", sum_(if_(col("ok"), share, lit(0.0)))))
            if self.s_factor != 1.0:
                out.append((f"{self.prefix}_sup{i}", sum_(if_(col("ok"), lit(0.0), share.copy()))))
        return out

    def batch_terms(self, stats):
        """For the batch statement: per joined row ``cnt * share_i`` with QI ``i``'s domain share
        at the node's level; per node the released (and, when ``s != 1``, the suppressed) sums,
        the same aggregates as the one-node statement."""
        rows, finals = [], []
        for i, h in enumerate(stats.hierarchies):
            part = f"{self.prefix}_part{i}"
            rows.append((part, [(i, lambda lv, h=h: self.shares(h, lv))]))
            finals.append((f"{self.prefix}_rel{i}", sum_(if_(col("ok"), col(part), lit(0.0)))))
            if self.s_factor != 1.0:
                finals.append((f"{self.prefix}_sup{i}", sum_(if_(col("ok"), lit(0.0), col(part)))))
        return rows, finals

    # -- formulas -----------------------------------------------------------------------------
    def columns(self, stats, node, ns) -> list[float]:
        """``loss_i`` per QI (before weights and aggregation)."""
        n = float(stats.rows)
        out = []
        for i, h in enumerate(stats.hierarchies):
            m = len(h.rows)
            agg = self.g_factor * float(ns.extra[f"{self.prefix}_rel{i}"] or 0.0)
            if self.s_factor == 1.0:
                agg += ns.suppressed
            else:
                sup_share = float(ns.extra[f"{self.prefix}_sup{i}"] or 0.0)
                agg += sup_share + self.s_factor * (ns.suppressed - sup_share)
            out.append(self._normalize(agg, n, m))
        return out

    def _normalize(self, agg: float, n: float, m: int) -> float:
        lo = self.g_factor * n / m if m else 0.0
        return max(0.0, (agg - lo) / (n - lo)) if n > lo else 0.0

    def combine(self, cols: list[float]) -> float:
        if not cols:
            return 0.0
        if self.aggregate == "geometric":
            result = 1.0
            for i, v in enumerate(cols):
                result *= ((v + 1.0) * self.w(i)) ** (1.0 / len(cols))
            return result - 1.0
        return sum(self.w(i) * v for i, v in enumerate(cols)) / len(cols)

    def value(self, stats, node, ns) -> float:
        return self.combine(self.columns(stats, node, ns))

    def per_column(self, stats, node, ns) -> dict:
        return dict(zip(stats.qis, self.columns(stats, node, ns)))

    def prior_bound(self, stats, node) -> float:
        """Every row released (no suppression): a lower bound, monotone under generalization."""
        cache = stats.memory.metrics.loss
        key = (tuple(node), self.g_factor, self.aggregate, tuple(self.weights) if self.weights is not None else None)
        if key not in cache:
            cache[key] = self._combined_terms([self._prior_term(stats, i, level, key[1:]) for i, level in enumerate(node)])
        return cache[key]

    def _prior_term(self, stats, i: int, level: int, kind: tuple) -> float:
        """QI ``i``'s part of :meth:`prior_bound` at ``level`` as :meth:`combine` folds it in (its
        factor of the geometric mean, its weighted loss of the arithmetic one), kept per QI and
        level: a node's bound is then one lookup a QI (wide lattices ask it of millions of nodes)."""
        terms = stats.memory.metrics.loss_prior_terms
        key = (kind, i, level)
        term = terms.get(key)
        if term is None:
            v = self._normalize(self.g_factor * self.released_sum(stats, i, level), float(stats.rows), len(stats.hierarchies[i].rows))
            q = len(stats.hierarchies)
            term = terms[key] = ((v + 1.0) * self.w(i)) ** (1.0 / q) if self.aggregate == "geometric" else self.w(i) * v
        return term

    def _combined_terms(self, terms: list[float]) -> float:
        """:meth:`combine` of the columns whose :meth:`_prior_term` are ``terms`` (the same
        operations in the same order, so the same value to the last bit)."""
        if not terms:
            return 0.0
        if self.aggregate == "geometric":
            result = 1.0
            for t in terms:
                result *= t
            return result - 1.0
        return sum(terms) / len(terms)

    # -- bounds for the optimal search ----------------------------------------------------------
    def released_sum(self, stats, i: int, level: int) -> float:
        """QI ``i``'s sum over all rows of their value's share at ``level`` (every row released)."""
        import numpy as np
        cache = stats.memory.metrics.loss_sums
        key = (type(self).__name__, i, level)
        if key not in cache:
            cache[key] = float(np.dot(np.asarray(stats.leaf_level_freq(i, level), dtype=np.float64), np.asarray(self.shares(stats.hierarchies[i], level), dtype=np.float64)))
        return cache[key]

    def bound_columns(self, stats, nodes, suppressed) -> list:
        """Per QI, a lower bound of ``loss_i`` of each node (rows of ``nodes``) that suppresses at
        least ``suppressed`` rows. A suppressed row adds ``s + (1 - s - g) * share`` to ``agg_i``
        against ``g * share`` released (never less: ``1 - s - g <= 0`` and ``share <= 1``), least
        for the largest shares, so ``agg_i >= g * all_i + s * rows + (1 - s - g) * (the rows'
        largest shares summed)`` (:func:`top_row_sums`); exact without suppression."""
        import numpy as np
        n = float(stats.rows)
        s_f, g = self.s_factor, self.g_factor
        sup = np.asarray(suppressed, dtype=np.float64)
        cols = []
        for i, h in enumerate(stats.hierarchies):
            m = len(h.rows)

            def one(level, mask, i=i, h=h):
                top = top_row_sums(self.shares(h, level), stats.leaf_level_freq(i, level), sup[mask])
                agg = g * self.released_sum(stats, i, level) + s_f * sup[mask] + (1.0 - s_f - g) * top
                lo = g * n / m if m else 0.0
                return np.maximum(0.0, (agg - lo) / (n - lo)) if n > lo else np.zeros(int(mask.sum()))

            cols.append(per_level(nodes, i, range(h.max_level + 1), one))
        return cols

    def combine_arrays(self, stats, cols) -> np.ndarray:
        """:meth:`combine` for arrays of nodes (one array per QI)."""
        import numpy as np
        nq = len(cols)
        if not nq:
            return np.zeros(0)
        if self.aggregate == "geometric":
            out = np.ones_like(cols[0])
            for i, v in enumerate(cols):
                out = out * ((v + 1.0) * self.w(i)) ** (1.0 / nq)
            return out - 1.0
        return sum(self.w(i) * v for i, v in enumerate(cols)) / nq

    def prior_array(self, stats, nodes) -> np.ndarray:
        """Every node's prior at once (the lattice's priors without a Python loop over nodes)."""
        import numpy as np
        return self.combine_arrays(stats, self.bound_columns(stats, nodes, np.zeros(len(nodes))))

    def suppressed_bounds(self, stats, nodes, prior, suppressed):
        import numpy as np
        return np.maximum(np.asarray(prior, dtype=np.float64), self.combine_arrays(stats, self.bound_columns(stats, nodes, suppressed)))

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        import numpy as np
        return float(self.suppressed_bounds(stats, np.asarray([node]), [prior], [suppressed])[0])

    def known_value(self, stats, node, budget: int) -> float | None:
        """Nothing may be suppressed: the value is the prior (every row released)."""
        return self.prior_bound(stats, node) if budget == 0 else None


class LossArithmetic(Loss):
    name = "loss-arithmetic"
    aggregate = "arithmetic"


class Granularity(Loss):
    """ARX's granularity as a loss to minimize: ``L`` above (ARX reports ``1 - L``)."""

    name = "granularity"
    aggregate = "arithmetic"
    weighted = False
    prefix = "gran"

    def __init__(self, weights=None) -> None:
        super().__init__(weights, gs_factor=0.5)
        self._maps: dict[int, dict[str, float]] = {}

    def share_map(self, h) -> dict[str, float]:
        key = id(h)
        if key not in self._maps:
            self._maps[key] = arx_share_map(h)
        return self._maps[key]

    def shares(self, h, level: int) -> list[float]:
        share_map, m = self.share_map(h), len(h.rows)
        return [arx_share(share_map, label, n, m) for label, n in zip(h.labels(level), h.leaves_under(level))]

    def columns(self, stats, node, ns) -> list[float]:
        """Per QI the mean share ``x_i`` over rows (suppressed rows 1), before normalization."""
        n = float(stats.rows)
        return [(float(ns.extra[f"gran_rel{i}"] or 0.0) + ns.suppressed) / n if n else 0.0 for i in range(len(stats.hierarchies))]

    def value(self, stats, node, ns) -> float:
        return arx_granularity_loss(self.columns(stats, node, ns), stats.hierarchies)

    def per_column(self, stats, node, ns) -> dict:
        return {q: arx_granularity_loss([x], [h]) for q, x, h in zip(stats.qis, self.columns(stats, node, ns), stats.hierarchies)}

    def prior_bound(self, stats, node) -> float:
        """Every row released (no suppression): a lower bound (monotone while no label repeats
        across levels)."""
        n = float(stats.rows)
        means = [self.released_sum(stats, i, level) / n if n else 0.0 for i, level in enumerate(node)]
        return arx_granularity_loss(means, stats.hierarchies)

    def bound_columns(self, stats, nodes, suppressed) -> list:
        """Per QI, a lower bound of the mean share ``x_i``: a suppressed row counts 1 instead of
        its share, least for the rows of the largest shares (:func:`top_row_sums`)."""
        import numpy as np
        n = float(stats.rows)
        sup = np.asarray(suppressed, dtype=np.float64)
        cols = []
        for i, h in enumerate(stats.hierarchies):

            def one(level, mask, i=i, h=h):
                top = top_row_sums(self.shares(h, level), stats.leaf_level_freq(i, level), sup[mask])
                return (self.released_sum(stats, i, level) + sup[mask] - top) / n if n else np.zeros(int(mask.sum()))

            cols.append(per_level(nodes, i, range(h.max_level + 1), one))
        return cols

    def combine_arrays(self, stats, cols) -> np.ndarray:
        import numpy as np
        if not cols:
            return np.zeros(0)
        mins = [1.0 / len(h.rows) if len(h.rows) else 0.0 for h in stats.hierarchies]
        lo = sum(mins) / len(mins)
        if lo >= 1.0:
            return np.zeros_like(cols[0])
        return np.clip((sum(cols) / len(cols) - lo) / (1.0 - lo), 0.0, 1.0)



def arx_granularity_loss(means: list[float], hierarchies) -> float:
    """ARX's ``getAggregate(ARITHMETIC_MEAN, false)``: the mean of the per-QI mean shares,
    normalized by the mean of the minima ``1/M_i`` (maxima 1), clamped to [0, 1].

    >>> round(arx_granularity_loss([0.5, 1.0], [type("H", (), {"rows": [0] * 4})(), type("H", (), {"rows": [0] * 2})()]), 6)
    0.6
    """
    if not means:
        return 0.0
    mins = [1.0 / len(h.rows) if len(h.rows) else 0.0 for h in hierarchies]
    agg, lo = sum(means) / len(means), sum(mins) / len(mins)
    value = (agg - lo) / (1.0 - lo) if lo < 1.0 else 0.0
    return min(1.0, max(0.0, value))


def measure(stats, plan, ns=None) -> dict:
    """ARX's Loss (geometric and arithmetic mean, gs 0.5) and granularity of a plan's release
    (any search's plan, levels or flexible cuts): one statement evaluating the plan's node or
    recoding with :func:`aggregates`, or ``ns``, its statistics already read with them (the
    plan's verification reads them in its statement: :func:`sqlanon.run.api.verify_plan`).
    ``granularity`` is ARX's figure (a quality: 1 is nothing lost), the others losses."""
    if ns is None:
        ns = stats.evaluate(target(plan), plan.requirement.predicate(), aggregates(stats, plan))
    out = {}
    for name, metric in (("loss", Loss()), ("loss_arithmetic", LossArithmetic())):
        out[name] = metric.combine(metric.columns(stats, None, ns))
    out["granularity"] = 1.0 - Granularity().value(stats, None, ns)
    return out


def target(plan):
    """What a plan's figures evaluate: a full-domain plan as its node, rolled up from the smallest
    saved set (at 10M Adult-like rows the optimum's own saved set, not the 1.6M-row base set);
    flexible cuts as their recoding."""
    return tuple(plan.node) if plan.node is not None else plan.recoding


def aggregates(stats, plan):
    """The per-QI sums Loss and granularity are computed from (``loss_rel{i}``: released rows
    times the share of the QI's leaves under their code; ``gran_rel{i}``: times ARX's label share),
    as ``f(params) -> [(name, expr)]``."""
    recoding = plan.recoding
    per_qi, per_qi_arx = [], []
    for codes, labels, h in zip(recoding.codes, recoding.labels, stats.hierarchies):
        m = len(h.rows)
        under = [0] * (max(codes, default=-1) + 1)
        for c in codes:
            under[c] += 1
        per_qi.append([u / m if m else 0.0 for u in under])
        share_map = arx_share_map(h)
        per_qi_arx.append([arx_share(share_map, label, u, m) for label, u in zip(labels, under)])

    def build(params=None):
        def released(name: str, values: list[float], i: int):
            return (name, sum_(if_(col("ok"), exp.Mul(this=col("cnt"), expression=lookup(values, col(stats.qcol(i)), stats.dialect, params)), lit(0.0))))

        return [released(f"loss_rel{i}", s, i) for i, s in enumerate(per_qi)] + [released(f"gran_rel{i}", s, i) for i, s in enumerate(per_qi_arx)]

    return build
