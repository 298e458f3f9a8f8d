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
from collections.abc import Callable, Sequence

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


# -- the same aggregates over a class's histogram ------------------------------------------------
# A batch statement over a small sensitive domain (:mod:`sqlanon.stats.batch`) sums, per class, one
# column per sensitive value: ``h0 .. h{m-1}``, the class's rows with the j-th value of the table's
# domain (in its order: :attr:`sqlanon.stats.Statistics.sensitive_domain`), beside ``cnt``. A need
# with a histogram form computes its columns from them (the same names as over per-value rows), so
# no per-value rows, window or join are needed.


def _h(j: int) -> exp.Expr:
    return as_double(col(f"h{j}"))


def _share(j: int) -> exp.Expr:
    return exp.Div(this=_h(j), expression=as_double(col("cnt")))


def _sum_all(terms: Sequence[exp.Expr]) -> exp.Expr:
    if not terms:
        return lit(0.0)
    out = terms[0]
    for t in terms[1:]:
        out = exp.Add(this=out, expression=t)
    return out


def _h_distinct(needs: ClassNeeds, q: list[float]) -> list[tuple[str, exp.Expr]]:
    return [("distinct_s", _sum_all([if_(exp.GT(this=col(f"h{j}"), expression=lit(0)), lit(1), lit(0)) for j in range(len(q))]))]


def _h_entropy(needs: ClassNeeds, q: list[float]) -> list[tuple[str, exp.Expr]]:
    # h ln h, 0 for an absent value (ln of at least 1: no engine is asked for ln 0)
    at_least_1 = [if_(exp.GT(this=col(f"h{j}"), expression=lit(1)), _h(j), lit(1.0)) for j in range(len(q))]
    return [("nlogn_s", _sum_all([exp.Mul(this=_h(j), expression=exp.Ln(this=a)) for j, a in enumerate(at_least_1)]))]


def _h_emd_equal(needs: ClassNeeds, q: list[float]) -> list[tuple[str, exp.Expr]]:
    # 0.5 * sum over the domain of |p - q| (an absent value's p is 0)
    terms = [exp.Abs(this=exp.Sub(this=_share(j), expression=lit(qj))) for j, qj in enumerate(q)]
    return [("emd_equal", exp.Mul(this=lit(0.5), expression=exp.Paren(this=_sum_all(terms))))]


def _h_emd_ordered(needs: ClassNeeds, q: list[float]) -> list[tuple[str, exp.Expr]]:
    # sum over ranks i < m of |sum_{j <= i} (p_j - q_j)| / (m - 1)
    m = len(q)
    terms, cum_q = [], 0.0
    for i in range(m - 1):
        cum_q += q[i]
        cum_p = exp.Div(this=exp.Paren(this=_sum_all([_h(j) for j in range(i + 1)])), expression=as_double(col("cnt")))
        terms.append(exp.Abs(this=exp.Sub(this=cum_p, expression=lit(cum_q))))
    return [("emd_ordered", exp.Div(this=exp.Paren(this=_sum_all(terms)), expression=lit(float(max(m - 1, 1)))))]


#: need -> its aggregates over a class's histogram (``h0..``, ``cnt``), given the table's shares ``q``
#: of its sensitive values; a need missing here is computed over per-value rows
HISTOGRAM_AGGREGATES: dict[str, Callable[[ClassNeeds, list[float]], list[tuple[str, exp.Expr]]]] = {
    "distinct_s": _h_distinct,
    "entropy_s": _h_entropy,
    "emd_equal": _h_emd_equal,
    "emd_ordered": _h_emd_ordered,
}
#: needs over the sensitive values (those a histogram may answer)
SENSITIVE_NEEDS = ("distinct_s", "entropy_s", "emd_equal", "emd_ordered", "recursive_l", "emd_hierarchical", "beta_likeness", "delta_disclosure")


def histogram_aggregates(needs: ClassNeeds, q: list[float]) -> list[exp.Expr] | None:
    """The aliased aggregates of ``needs`` over a class's histogram (see above), the same
    columns as :func:`value_aggregates` (plus ``emd_ordered``); None when a need has no histogram
    form (recursive diversity, hierarchical t-closeness, beta-likeness, delta-disclosure).

    >>> from sqlanon.dialect import DUCKDB
    >>> [DUCKDB.render(e) for e in histogram_aggregates(ClassNeeds(emd_equal=True), [0.75, 0.25])]
    ['0.5 * (ABS(CAST("h0" AS DOUBLE) / CAST("cnt" AS DOUBLE) - 0.75) + ABS(CAST("h1" AS DOUBLE) / CAST("cnt" AS DOUBLE) - 0.25)) AS "emd_equal"']
    """
    asked = [name for name in SENSITIVE_NEEDS if getattr(needs, name)]
    if any(name not in HISTOGRAM_AGGREGATES for name in asked):
        return None
    return [exp.alias_(e, alias, quoted=True) for name in asked for alias, e in HISTOGRAM_AGGREGATES[name](needs, q)]


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
