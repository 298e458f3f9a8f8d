"""Iyengar's general loss metric LM, for full-domain levels.

Per row and QI: ``(M_P - 1) / (M - 1)`` where ``M_P`` is the number of leaves below the released
value and ``M`` the number of leaves of the hierarchy; a suppressed row counts 1 in every QI. The
value is the mean over QIs of the per-column means over rows; with attribute weights each column's
mean is multiplied by its normalized weight first (ARX's weighted ``MetricMDNMLoss``).
"""

from sqlglot import exp

from sqlanon.metrics.base import Metric, per_level, top_row_sums
from sqlanon.expr.atoms import col
from sqlanon.expr.atoms import if_, lit, sum_
from sqlanon.dialect import lookup


def loss_table(h, level: int) -> list[float]:
    m = len(h.rows)
    if m <= 1:
        return [0.0] * len(h.labels(level))
    return [(c - 1) / (m - 1) for c in h.leaves_under(level)]


def column_losses_one(stats, i: int, level: int) -> float:
    """QI ``i``'s LM at ``level`` over all rows as if nothing were suppressed."""
    losses = loss_table(stats.hierarchies[i], level)
    freq = stats.leaf_level_freq(i, level)
    return sum(f * l for f, l in zip(freq, losses)) / stats.rows


def column_losses(stats, node) -> list[float]:
    """Per-QI LM over all rows as if nothing were suppressed (data from per-column frequencies)."""
    return [column_losses_one(stats, i, level) for i, level in enumerate(node)]


class LM(Metric):
    name = "lm"
    weighted = True

    def aggregates(self, stats, node):
        return lambda params=None: self._aggregates(stats, node, params)

    def _aggregates(self, stats, node, params):
        terms = []
        for i, (h, level) in enumerate(zip(stats.hierarchies, node)):
            losses = loss_table(h, level)
            if self.weights is not None:
                losses = [self.w(i) * x for x in losses]
            terms.append(lookup(losses, col(stats.qcol(i)), stats.dialect, params))
        total = terms[0]
        for t in terms[1:]:
            total = exp.Add(this=total, expression=t)
        released = sum_(if_(col("ok"), exp.Mul(this=col("cnt"), expression=exp.Paren(this=total)), lit(0.0)))
        return [("lm_released", released)]

    def batch_terms(self, stats):
        """Per joined row, ``cnt * sum_i w_i * loss_i(level, code)``; per node the released sum."""
        parts = [(i, lambda lv, h=h, i=i: [self.w(i) * x for x in loss_table(h, lv)]) for i, h in enumerate(stats.hierarchies)]
        return [("lm_part", parts)], [("lm_released", sum_(if_(col("ok"), col("lm_part"), lit(0.0))))]

    def value(self, stats, node, ns) -> float:
        nq = len(stats.qis)
        released = float(ns.extra["lm_released"] or 0.0)
        return (released / nq + ns.suppressed * self._suppressed_loss(nq)) / stats.rows

    def _suppressed_loss(self, nq: int) -> float:
        return sum(self.weights) / nq if self.weights is not None else 1.0

    def per_column(self, stats, node, ns) -> dict:
        """Per-column LM; exact only when nothing is suppressed (else suppressed rows count 1)."""
        cols = column_losses(stats, node)
        return dict(zip(stats.qis, cols))

    def prior_bound(self, stats, node) -> float:
        cache = stats.memory.metrics.lm
        key = (tuple(node), tuple(self.weights) if self.weights is not None else None)
        if key not in cache:
            cols = column_losses(stats, node)
            cache[key] = sum(self.w(i) * c for i, c in enumerate(cols)) / len(cols)
        return cache[key]

    def suppressed_bound(self, stats, node, prior: float, suppressed: int) -> float:
        import numpy as np

        return float(self.suppressed_bounds(stats, np.asarray([node]), np.asarray([prior]), np.asarray([suppressed]))[0])

    def suppressed_bounds(self, stats, nodes, prior, suppressed):
        """Suppressing a row replaces its loss by 1 (the mean weight with weights); the rows
        suppressed are not known, so at most the ``s`` largest row losses of each QI leave with
        them (:func:`top_row_sums`: per QI, tighter than ``s`` times the largest loss)."""
        import numpy as np

        nq = len(stats.hierarchies)
        sup = np.asarray(suppressed, dtype=np.float64)
        removed = np.zeros(len(nodes), dtype=np.float64)
        for i, h in enumerate(stats.hierarchies):

            def one(level, mask, i=i, h=h):
                return self.w(i) * top_row_sums(loss_table(h, level), stats.leaf_level_freq(i, level), sup[mask])

            removed += per_level(nodes, i, range(h.max_level + 1), one)
        return np.asarray(prior, dtype=np.float64) + (sup * self._suppressed_loss(nq) - removed / nq) / stats.rows

    def prior_terms(self, stats):
        nq = len(stats.hierarchies)
        return [[self.w(i) * c / nq for c in (column_losses_one(stats, i, lv) for lv in range(h.max_level + 1))] for i, h in enumerate(stats.hierarchies)]

    def known_value(self, stats, node, budget: int) -> float | None:
        return self.prior_bound(stats, node) if budget == 0 else None


def leaf_share_loss(under: int, leaves: int) -> float:
    """LM's loss of a released value covering ``under`` of a hierarchy's ``leaves`` leaves:
    ``(M_P - 1) / (M - 1)`` (0 for a value covering no leaf, or a one-leaf hierarchy).

    >>> leaf_share_loss(3, 5), leaf_share_loss(1, 5), leaf_share_loss(0, 5), leaf_share_loss(1, 1)
    (0.5, 0.0, 0.0, 0.0)
    """
    return (under - 1) / (leaves - 1) if leaves > 1 and under else 0.0


def recoding_losses(recoding, hierarchies) -> list[list[float]]:
    """Per QI, the LM loss of each released code of a flexible :class:`Recoding`: ``(M_P - 1) /
    (M - 1)`` with ``M_P`` the leaves released under that code and ``M`` the hierarchy's leaves."""
    out = []
    for codes, h in zip(recoding.codes, hierarchies):
        m = len(h.rows)
        under = [0] * (max(codes, default=-1) + 1)
        for c in codes:
            under[c] += 1
        out.append([leaf_share_loss(u, m) for u in under])
    return out


def recoding_aggregates(stats, recoding, weights=None):
    """The aggregate ``lm_released`` (as :class:`LM`'s) for a flexible recoding's class table;
    ``weights`` (normalized, one per QI) multiply each QI's loss."""
    losses = recoding_losses(recoding, stats.hierarchies)
    if weights is not None:
        losses = [[w * x for x in l] for w, l in zip(weights, losses)]

    def build(params=None):
        terms = [lookup(l, col(stats.qcol(i)), stats.dialect, params) for i, l in enumerate(losses)]
        total = terms[0]
        for t in terms[1:]:
            total = exp.Add(this=total, expression=t)
        return [("lm_released", sum_(if_(col("ok"), exp.Mul(this=col("cnt"), expression=exp.Paren(this=total)), lit(0.0))))]

    return build


def recoding_value(stats, ns, weights=None) -> float:
    """LM of a flexible recoding from :func:`recoding_aggregates` (a suppressed row counts 1, or
    ``w_i`` in QI ``i`` with weights: the mean of the weights per row)."""
    nq = len(stats.qis)
    released = float(ns.extra["lm_released"] or 0.0)
    per_suppressed = 1 if weights is None else sum(weights) / nq
    return (released / nq + ns.suppressed * per_suppressed) / stats.rows if stats.rows else 0.0
