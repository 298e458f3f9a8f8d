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

**Granularity** (ARX's ``QualityModelColumnOrientedLoss``): per QI the mean domain share over rows
(a suppressed row counts 1), normalized ``(x - 1/M_i) / (1 - 1/M_i)``, arithmetic mean over QIs.
At ``gs = 0.5`` both ``loss-arithmetic`` and granularity equal Iyengar's LM (``(M_P - 1)/(M - 1)``
per row, suppressed 1): the three are the same number written three ways, and the tests check it.
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.metrics.base import Metric
from sqlanon.source import col
from sqlanon.stats import if_, lit, lookup, sum_


def shares(h, level: int) -> list[float]:
    m = len(h.rows)
    return [c / m for c in h.leaves_under(level)] if m else [0.0] * len(h.labels(level))


class Loss(Metric):
    name = "loss"
    weighted = True
    aggregate = "geometric"

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
            share = exp.Mul(this=col("cnt"), expression=lookup(shares(h, level), col(stats.qcol(i)), stats.dialect, params))
            out.append((f"loss_rel{i}", sum_(if_(col("ok"), share, lit(0.0)))))
            if self.s_factor != 1.0:
                out.append((f"loss_sup{i}", sum_(if_(col("ok"), lit(0.0), share.copy()))))
        return out

    def batch_terms(self, stats):
        """For the batch statement: per joined row ``cnt * share_i`` with QI ``i``'s domain share
        at the node's level; per node the released (and, when ``s != 1``, the suppressed) sums,
        the same aggregates as the one-node statement."""
        rows, finals = [], []
        for i, h in enumerate(stats.hierarchies):
            part = f"loss_part{i}"
            rows.append((part, [(i, lambda lv, h=h: shares(h, lv))]))
            finals.append((f"loss_rel{i}", sum_(if_(col("ok"), col(part), lit(0.0)))))
            if self.s_factor != 1.0:
                finals.append((f"loss_sup{i}", sum_(if_(col("ok"), lit(0.0), col(part)))))
        return rows, finals

    # -- formulas -----------------------------------------------------------------------------
    def columns(self, stats, node, ns) -> list[float]:
        """``loss_i`` per QI (before weights and aggregation)."""
        n = float(stats.rows)
        out = []
        for i, h in enumerate(stats.hierarchies):
            m = len(h.rows)
            agg = self.g_factor * float(ns.extra[f"loss_rel{i}"] or 0.0)
            if self.s_factor == 1.0:
                agg += ns.suppressed
            else:
                sup_share = float(ns.extra[f"loss_sup{i}"] or 0.0)
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
        cache = stats.__dict__.setdefault("_loss_cache", {})
        key = (tuple(node), self.g_factor, self.aggregate, tuple(self.weights) if self.weights is not None else None)
        if key not in cache:
            cols = []
            n = float(stats.rows)
            for i, (h, level) in enumerate(zip(stats.hierarchies, node)):
                freq = stats.leaf_level_freq(i, level)
                agg = self.g_factor * sum(f * s for f, s in zip(freq, shares(h, level)))
                cols.append(self._normalize(agg, n, len(h.rows)))
            cache[key] = self.combine(cols)
        return cache[key]


class LossArithmetic(Loss):
    name = "loss-arithmetic"
    aggregate = "arithmetic"


class Granularity(Loss):
    """ARX's granularity: arithmetic mean of per-QI normalized mean shares (suppressed: 1)."""

    name = "granularity"
    aggregate = "arithmetic"
    weighted = False

    def __init__(self, weights=None) -> None:
        super().__init__(weights, gs_factor=0.5)

    def columns(self, stats, node, ns) -> list[float]:
        n = float(stats.rows)
        out = []
        for i, h in enumerate(stats.hierarchies):
            m = len(h.rows)
            mean = (float(ns.extra[f"loss_rel{i}"] or 0.0) + ns.suppressed) / n if n else 0.0
            out.append((mean - 1.0 / m) / (1.0 - 1.0 / m) if m > 1 else 0.0)
        return out


def measure(stats, plan, ns=None) -> dict:
    """ARX's Loss (geometric and arithmetic mean, gs 0.5) and granularity of a plan's release
    (any search's plan, levels or flexible cuts): one statement evaluating the plan's node or
    recoding with :func:`aggregates`, or ``ns``, its statistics already read with them (the
    plan's verification reads them in its statement: :func:`sqlanon.api.verify_plan`)."""
    if ns is None:
        ns = stats.evaluate(target(plan), plan.requirement.predicate(), aggregates(stats, plan))
    out = {}
    for name, metric in (("loss", Loss()), ("loss_arithmetic", LossArithmetic()), ("granularity", Granularity())):
        out[name] = metric.combine(metric.columns(stats, None, ns))
    return out


def target(plan):
    """What a plan's figures evaluate: a full-domain plan as its node, rolled up from the smallest
    saved set (at 10M Adult-like rows the optimum's own saved set, not the 1.6M-row base set);
    flexible cuts as their recoding."""
    return tuple(plan.node) if plan.node is not None else plan.recoding


def aggregates(stats, plan):
    """The per-QI sums Loss and granularity are computed from (``loss_rel{i}``: released rows
    times the share of the QI's leaves under their code), as ``f(params) -> [(name, expr)]``."""
    recoding = plan.recoding
    per_qi = []
    for codes, h in zip(recoding.codes, stats.hierarchies):
        m = len(h.rows)
        under = [0] * (max(codes, default=-1) + 1)
        for c in codes:
            under[c] += 1
        per_qi.append([u / m if m else 0.0 for u in under])

    def build(params=None):
        return [(f"loss_rel{i}", sum_(if_(col("ok"), exp.Mul(this=col("cnt"), expression=lookup(s, col(stats.qcol(i)), stats.dialect, params)), lit(0.0))))
                for i, s in enumerate(per_qi)]

    return build
