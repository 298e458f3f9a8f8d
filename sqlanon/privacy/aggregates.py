"""The per-class aggregates of a run's needs, assembled from what the registered models declare.

A model declares its aggregates in its own module (:class:`sqlanon.privacy.needs.Aggregate`: a
name, its form over a class's per-sensitive-value rows and/or over its histogram); every statement
that builds equivalence classes (the lattice's one-node statement
:meth:`sqlanon.stats.Statistics.class_ctes`, which the bottom-up search, the release and the checker
use too, the batch statements of :mod:`sqlanon.stats.batch`, and the genetic search's batch
:meth:`sqlanon.search.genetic.stats.GeneticStats.batch_query`) asks this module for the columns of
the names asked (:class:`~sqlanon.privacy.needs.ClassNeeds`):

* :func:`value_aggregates`: the aggregates over a class's **per-sensitive-value rows** (one row per
  class and sensitive value ``s`` with its ``cnt``; with :func:`needs_shares` also the class total
  ``tot`` and the value's share of the table ``q``; with :func:`needs_rank` its rank ``rn`` in its
  class by count, largest first); :func:`value_columns` the columns they make;
* :func:`histogram_aggregates`: the same columns over a class's histogram (small domains).

Aggregates with neither form (ordered and hierarchical t-closeness, population counts) stay with
the statement that joins them in (:mod:`sqlanon.stats.models`), as they need the statement's class
keys; ``ranked`` (a table-level model) needs no column at all: its predicate ranks the class table
itself, so batch statements of many nodes leave it to the one-node statement
(:func:`sqlanon.stats.batch.supported`). The columns come in the order of :data:`AGGREGATES`
(the registry's order, each model's declarations in turn).

>>> from sqlanon.dialect import DUCKDB
>>> [DUCKDB.render(e) for e in value_aggregates(ClassNeeds(distinct_s=True, entropy_s=True))]
['COUNT(*) AS "distinct_s"', 'SUM(CAST("cnt" AS DOUBLE) * LN(CAST("cnt" AS DOUBLE))) AS "nlogn_s"']
>>> value_columns(ClassNeeds(beta_likeness=True)), needs_shares(ClassNeeds(beta_likeness=True))
(['blike_max', 'blike_ln'], True)
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from sqlanon.privacy.needs import Aggregate, ClassNeeds
from sqlanon.privacy.registry import MODELS

#: every aggregate the registered models declare, by name, in registry order
AGGREGATES: dict[str, Aggregate] = {}
for _model in MODELS.values():
    for _aggregate in _model.aggregates:
        AGGREGATES.setdefault(_aggregate.name, _aggregate)


def _asked(needs: ClassNeeds) -> list[Aggregate]:
    names = needs.names()
    return [agg for name, agg in AGGREGATES.items() if name in names]


def histogram_aggregates(needs: ClassNeeds, q: list[float]) -> list[exp.Expr] | None:
    """The aliased aggregates of ``needs`` over a class's histogram (``h0 .. h{m-1}`` beside
    ``cnt``, given the table's shares ``q`` of its sensitive values), the same columns as
    :func:`value_aggregates` (plus ``emd_ordered``); None when an asked sensitive aggregate has no
    histogram form (recursive diversity, hierarchical t-closeness, beta-likeness, delta-disclosure).

    >>> from sqlanon.dialect import DUCKDB
    >>> [DUCKDB.render(e) for e in histogram_aggregates(ClassNeeds(emd_equal=True), [0.75, 0.25])]
    ['0.5 * (ABS(CAST("h0" AS DOUBLE) / CAST("cnt" AS DOUBLE) - 0.75) + ABS(CAST("h1" AS DOUBLE) / CAST("cnt" AS DOUBLE) - 0.25)) AS "emd_equal"']
    """
    asked = [agg for agg in _asked(needs) if agg.sensitive]
    out: list[exp.Expr] = []
    for agg in asked:
        if agg.histogram is None:
            return None
        out += [exp.alias_(e, alias, quoted=True) for alias, e in agg.histogram(needs, q)]
    return out


def value_aggregates(needs: ClassNeeds, only: Callable[[str], bool] = lambda name: True) -> list[exp.Expr]:
    """The aliased aggregates over per-value rows for ``needs`` (``only``: a filter on aggregate names)."""
    out: list[exp.Expr] = []
    seen: set[str] = set()
    for agg in _asked(needs):
        if agg.value is None or not only(agg.name):
            continue
        for alias, e in agg.value(needs):
            if alias not in seen:
                seen.add(alias)
                out.append(exp.alias_(e, alias, quoted=True))
    return out


def value_columns(needs: ClassNeeds, only: Callable[[str], bool] = lambda name: True) -> list[str]:
    """The class-table columns :func:`value_aggregates` makes."""
    return [e.alias for e in value_aggregates(needs, only)]


def needs_shares(needs: ClassNeeds) -> bool:
    """Whether an asked aggregate reads ``tot`` and ``q`` beside the per-value rows."""
    return any(agg.shares for agg in _asked(needs) if agg.value is not None)


def needs_rank(needs: ClassNeeds) -> bool:
    """Whether an asked aggregate reads ``rn``, each value's rank in its class."""
    return any(agg.ranked for agg in _asked(needs) if agg.value is not None)
