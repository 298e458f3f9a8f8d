"""Node evaluation as an ordered tuple of routes (the way sqlglot's optimizer lists its ``RULES``).

:meth:`Statistics.evaluate_many <sqlanon.stats.core.Statistics.evaluate_many>` hands the nodes
to the first route of :data:`ROUTES` that accepts them; each route is one way of answering:

1. :data:`IN_PROCESS`: over the fetched base set, by the compiled kernels (:mod:`sqlanon.stats.local`);
1b. :data:`HISTOGRAMS`: the sensitive-attribute models over the fetched per-class sensitive
   histograms, rolled up in numpy (:mod:`sqlanon.stats.histograms`);
2. :data:`BATCH`: the batch statement (node table joined to the set, :mod:`sqlanon.stats.deltas`
   and :mod:`sqlanon.stats.batch`), when the metric gives its batch parts;
3. :data:`ONE_NODE`: one node, one statement (:meth:`Statistics.evaluate`);
4. :data:`UNION`: a ``UNION ALL`` of the nodes' roll-ups, one statement (accepts anything).

The order is the order of preference: the node counts and the path each node takes depend on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from sqlglot import exp

from sqlanon.expr.atoms import Params, lit
from sqlanon.plan import Recoding
from sqlanon.privacy.needs import NodeStats
import sqlanon.stats.deltas as deltas
import sqlanon.stats.batch as batch
import sqlanon.stats.histograms as histograms
import sqlanon.stats.local as local
import sqlanon.stats.store as store


class Ask(NamedTuple):
    """What :meth:`Statistics.evaluate_many` is asked: the nodes (tuples of levels or
    Recodings), the predicate of a released class, ``aggregates`` (None or ``node -> aggregates``),
    the metric (or None) and the extra finals of every node."""

    nodes: list
    ok: exp.Expr
    aggregates: Callable[[Any], Any] | None
    metric: Any
    extra_finals: Sequence[tuple[str, exp.Expr]]


class Route(NamedTuple):
    """One way of answering nodes: ``accepts(stats, ask)``, then ``evaluate(stats, ask)``."""

    name: str
    accepts: Callable[[Any, Ask], bool]
    evaluate: Callable[[Any, Ask], list[NodeStats]]


def _in_process_accepts(stats, ask: Ask) -> bool:
    return (ask.metric is not None or ask.aggregates is None) and local.applies(stats, ask.nodes, ask.ok, ask.metric, ask.extra_finals)


def _in_process(stats, ask: Ask) -> list[NodeStats]:
    return local.evaluate(stats, ask.nodes, ask.ok, ask.metric, ask.extra_finals)


def _histograms_accepts(stats, ask: Ask) -> bool:
    return (ask.metric is not None or ask.aggregates is None) and histograms.accepts(stats, ask.nodes, ask.ok, ask.metric, ask.extra_finals)


def _histograms(stats, ask: Ask) -> list[NodeStats]:
    return histograms.evaluate(stats, ask.nodes, ask.ok, ask.metric, ask.extra_finals)


def _batch_accepts(stats, ask: Ask) -> bool:
    return ask.metric is not None and len(ask.nodes) > 1 and all(isinstance(n, tuple) for n in ask.nodes) and batch.supported(stats, ask.metric)


def _batch(stats, ask: Ask) -> list[NodeStats]:
    return deltas.evaluate_batch(stats, ask.nodes, ask.ok, ask.metric, ask.extra_finals)


def _one_node_accepts(stats, ask: Ask) -> bool:
    return len(ask.nodes) == 1


def _one_node(stats, ask: Ask) -> list[NodeStats]:
    node = ask.nodes[0]
    return [stats.evaluate(node, ask.ok, ask.aggregates(node) if ask.aggregates else ())]


def _union_accepts(stats, ask: Ask) -> bool:
    return True


def _union(stats, ask: Ask) -> list[NodeStats]:
    """The nodes' roll-ups in one ``UNION ALL`` statement, each tagged with its position
    (cheaper per node than one statement each: ``bench/grouping_sets.py``, docs/measurements.md)."""
    nodes, aggregates = ask.nodes, ask.aggregates
    params = Params() if stats.dialect.binds_lists else None
    parts, names, sources = [], [], []
    for i, node in enumerate(nodes):
        frm = stats.pick_set(node)
        aggs = aggregates(node) if aggregates else ()
        built = aggs(params) if callable(aggs) else list(aggs)
        q = stats.node_query(node, ask.ok, built, frm, params)
        q = q.select(exp.alias_(lit(i), "node_index", quoted=True), copy=False)
        parts.append(exp.select("*").from_(exp.alias_(exp.Subquery(this=q), f"n{i}", table=True, quoted=True)))
        names.append([name for name, _ in built])
        sources.append(frm)
    union: exp.Query = parts[0]
    for part in parts[1:]:
        union = exp.union(union, part, distinct=False, copy=False)
    rows = stats.engine.fetch_all(union, params or None)
    out: list = [None] * len(nodes)
    for row in rows:
        i = int(row[-1])
        out[i] = stats.node_stats(nodes[i], row[:-1], names[i])
    stats.nodes_evaluated += len(nodes)
    store.remember(stats, [(n, f, ns.classes) for n, f, ns in zip(nodes, sources, out)])
    return out


IN_PROCESS = Route("in_process", _in_process_accepts, _in_process)
HISTOGRAMS = Route("histograms", _histograms_accepts, _histograms)
BATCH = Route("batch", _batch_accepts, _batch)
ONE_NODE = Route("one_node", _one_node_accepts, _one_node)
UNION = Route("union", _union_accepts, _union)

#: the routes in order of preference: the first that accepts the nodes answers them
ROUTES: tuple[Route, ...] = (IN_PROCESS, HISTOGRAMS, BATCH, ONE_NODE, UNION)


def route_of(stats, ask: Ask) -> Route:
    """The first route of :data:`ROUTES` that accepts ``ask``."""
    for route in ROUTES:
        if route.accepts(stats, ask):
            return route
    raise AssertionError("UNION accepts every ask")  # pragma: no cover


def evaluate_many(stats, nodes: Sequence, ok: exp.Expr, aggregates=None, metric=None, extra_finals=()) -> list[NodeStats]:
    """The nodes' statistics, answered by the first route that accepts them."""
    ask = Ask([n if isinstance(n, Recoding) else tuple(n) for n in nodes], ok, aggregates, metric, extra_finals)
    return route_of(stats, ask).evaluate(stats, ask)
