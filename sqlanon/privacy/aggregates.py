"""The per-class aggregates privacy models (and metrics) need, keyed by need.

A model declares what it needs as a :class:`ClassNeeds`; every statement that builds equivalence
classes (the lattice's one-node statement :meth:`sqlanon.stats.Statistics.class_ctes`, which the
bottom-up search, the release and the checker use too, and the genetic search's batch
:meth:`sqlanon.search.genetic.stats.GeneticStats.batch_query`) asks this module for the columns:

* :data:`VALUE_AGGREGATES`: the aggregates computed over a class's **per-sensitive-value rows**
  (one row per class and sensitive value ``s`` with its ``cnt``; with ``shares`` also the class
  total ``tot`` and the value's share of the table ``q``; with ``ranked`` its rank ``rn`` in its
  class by count, largest first). :func:`value_aggregates` gives the aliased aggregates for a set
  of needs, :func:`value_columns` the columns they make.
* needs built from CTEs of their own (ordered and hierarchical t-closeness, population counts)
  stay with the statement that joins them in (:mod:`sqlanon.stats.models`), as they need the
  statement's class keys; ``ranked`` (the average-risk model) needs no column at all: its
  predicate ranks the class table itself, so batch statements of many nodes leave it to the
  one-node statement (:func:`sqlanon.stats.batch.supported`).

>>> from sqlanon.dialect import DUCKDB
>>> [DUCKDB.render(e) for e in value_aggregates(ClassNeeds(distinct_s=True, entropy_s=True))]
['COUNT(*) AS "distinct_s"', 'SUM(CAST("cnt" AS DOUBLE) * LN(CAST("cnt" AS DOUBLE))) AS "nlogn_s"']
>>> value_columns(ClassNeeds(beta_likeness=True)), needs_shares(ClassNeeds(beta_likeness=True))
(['blike_max', 'blike_ln'], True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable

from sqlglot import exp

from sqlanon.expr.atoms import as_double, col, if_, lit, sum_
from sqlanon.privacy.needs import ClassNeeds

LN2 = math.log(2.0)


def _p() -> exp.Expr:
    """The value's share of its class."""
    return exp.Div(this=as_double(col("cnt")), expression=as_double(col("tot")))


def _gain() -> exp.Expr:
    """``(p - q) / q``: the relative gain of the value in its class over the table."""
    return exp.Div(this=exp.Paren(this=exp.Sub(this=_p(), expression=col("q"))), expression=col("q"))


def _distinct(needs: ClassNeeds) -> list[tuple[str, exp.Expr]]:
    return [("distinct_s", exp.Count(this=exp.Star()))]


def _entropy(needs: ClassNeeds) -> list[tuple[str, exp.Expr]]:
    return [("nlogn_s", sum_(exp.Mul(this=as_double(col("cnt")), expression=exp.Ln(this=as_double(col("cnt"))))))]


def _emd_equal(needs: ClassNeeds) -> list[tuple[str, exp.Expr]]:
    # 0.5 * (sum over present s of (|p - q| - q) + 1): absent values contribute q each
    term = exp.Sub(this=exp.Abs(this=exp.Sub(this=_p(), expression=col("q"))), expression=col("q"))
    return [("emd_equal", exp.Mul(this=lit(0.5), expression=exp.Paren(this=exp.Add(this=sum_(term), expression=lit(1)))))]


def _recursive(needs: ClassNeeds) -> list[tuple[str, exp.Expr]]:
    top = sum_(if_(exp.EQ(this=col("rn"), expression=lit(1)), col("cnt"), lit(0)))
    tail = sum_(if_(exp.GTE(this=col("rn"), expression=lit(int(needs.recursive_l))), col("cnt"), lit(0)))
    return [("top_s", top), ("tail_s", tail)]


def _beta(needs: ClassNeeds) -> list[tuple[str, exp.Expr]]:
    return [("blike_max", exp.Max(this=_gain())), ("blike_ln", exp.Max(this=exp.Add(this=_gain(), expression=exp.Ln(this=col("q")))))]


def _delta_disclosure(needs: ClassNeeds) -> list[tuple[str, exp.Expr]]:
    ratio = exp.Div(this=_p(), expression=col("q"))
    return [("dd_max", exp.Div(this=exp.Max(this=exp.Abs(this=exp.Ln(this=ratio))), expression=lit(LN2)))]


@dataclass(frozen=True)
class ValueAggregate:
    """Aggregates over a class's per-sensitive-value rows for one need."""

    #: ``tot`` (the class's rows) and ``q`` (the value's share of the table) are joined in
    shares: bool
    #: ``rn`` (the value's rank in its class by count, largest first) is numbered
    ranked: bool
    build: Callable[[ClassNeeds], list[tuple[str, exp.Expr]]]


#: need -> its aggregates over the per-value rows (a need is a :class:`ClassNeeds` field)
VALUE_AGGREGATES: dict[str, ValueAggregate] = {
    "distinct_s": ValueAggregate(False, False, _distinct),
    "entropy_s": ValueAggregate(False, False, _entropy),
    "emd_equal": ValueAggregate(True, False, _emd_equal),
    "recursive_l": ValueAggregate(False, True, _recursive),
    "beta_likeness": ValueAggregate(True, False, _beta),
    "delta_disclosure": ValueAggregate(True, False, _delta_disclosure),
}


def _asked(needs: ClassNeeds) -> list[tuple[str, ValueAggregate]]:
    out = [(name, agg) for name, agg in VALUE_AGGREGATES.items() if getattr(needs, name)]
    if needs.delta_disclosure and not needs.distinct_s:  # a class missing a value fails: count them
        out.insert(0, ("distinct_s", VALUE_AGGREGATES["distinct_s"]))
    return out


def value_aggregates(needs: ClassNeeds, only: Callable[[str], bool] = lambda name: True) -> list[exp.Expr]:
    """The aliased aggregates over per-value rows for ``needs`` (``only``: a filter on need names)."""
    out: list[exp.Expr] = []
    seen: set[str] = set()
    for name, agg in _asked(needs):
        if not only(name):
            continue
        for alias, e in agg.build(needs):
            if alias not in seen:
                seen.add(alias)
                out.append(exp.alias_(e, alias, quoted=True))
    return out


def value_columns(needs: ClassNeeds, only: Callable[[str], bool] = lambda name: True) -> list[str]:
    """The class-table columns :func:`value_aggregates` makes."""
    return [e.alias for e in value_aggregates(needs, only)]


def needs_shares(needs: ClassNeeds) -> bool:
    return any(agg.shares for _, agg in _asked(needs))


def needs_rank(needs: ClassNeeds) -> bool:
    return any(agg.ranked for _, agg in _asked(needs))
