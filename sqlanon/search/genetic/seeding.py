"""Seeds for the genetic search: the best full-domain node for the same metric, as a chromosome,
so the genetic search starts from it and never ends worse than it.

A full-domain node is a valid flexible solution (every QI cut at one level), so it is scored by the
genetic search's own evaluator like any chromosome, to the same value the lattice gives it (LM and
the share metrics, ARX's Loss among them, have one definition for both:
:class:`sqlanon.search.genetic.objective.FlexShare`); GENITOR keeps the best member, so the
result is at least as good as the seed under the genetic objective. The seed comes from

* the **optimal** search when the lattice has at most ``MAX_NODES`` nodes (its optimum);
* else **lightning** (:mod:`sqlanon.search.lightning.planner`), within at most ``LIGHTNING_SHARE``
  of the time and of the steps left, handing the rest on as soon as its walk stalls (its
  ``stall`` option, :data:`LIGHTNING_STALL`: its best node has not improved for as long as it took
  to find it, and for that share of its limit), or, without a limit, ``LIGHTNING_STEPS`` node
  evaluations: its best node, so the genetic search never returns worse than lightning given the
  same time.

Seeding runs for the objectives of :data:`SEED_OBJECTIVES` (``seed_lattice``, on by default).

A numeric QI (cut into intervals) is seeded from its hierarchy too: the lattice searches its levels
(``bands`` or an ARX-style age hierarchy; a flat numeric hierarchy has two, the values and ``*``)
and the optimum's bands become interval cuts: an end point between two neighbouring values is set
when the level puts them in different bands (:func:`interval_bits`). Bands are runs of values, so
the seed releases the same partition as the lattice optimum (its interval LM, ``(hi - lo) / (U -
L)``, is then the genetic search's own measure of it); with more values than end points
(``max_endpoints``) a band edge that is no end point cannot be cut and its bands are merged.
"""

from __future__ import annotations

import math

from sqlanon.errors import UnsatisfiableError
from sqlanon.metrics import METRICS
from sqlanon.search.genetic.objective import SHARE_METRICS
from sqlanon.search.lattice import optimal
from sqlanon.search.lattice.lattice import Lattice
from sqlanon.search.lightning import planner as lightning

MAX_NODES = 20_000
#: the objectives a full-domain node is seeded for (the lattice metric of the same name)
SEED_OBJECTIVES = ("lm", *SHARE_METRICS)
#: on a lattice above MAX_NODES, the most of the time left that lightning may take for the seed
#: (a quarter left the seed releasing nothing on a wide table under load; lightning's walk finds
#: its node early on an idle machine and late on a loaded one, so it may take most of the limit
#: and stops when it stalls: docs/measurements.md)
LIGHTNING_SHARE = 0.75
#: lightning's ``stall`` for the seed: it stops once its best node has not improved for as long
#: as it took to find it and for this share of its limit (under a limit only)
LIGHTNING_STALL = 0.1
#: ... and, without a time limit, its node evaluations
LIGHTNING_STEPS = 2_000


class _TimeUp(Exception):
    """The time limit ran out before the seed was found."""


def seed_metric(ctx, objective: str):
    """The lattice metric the seed optimizes: the run's metric when it is the objective (its
    weights and ``gs_factor``), else the objective's with the run's attribute weights."""
    if ctx.metric is not None and ctx.metric.name == objective:
        return ctx.metric
    return METRICS[objective](weights=ctx.weights)


def lattice_seed(ctx, layout, objective: str, limits=None, lightning_batch: int | None = None) -> list[tuple]:
    """The best full-domain node for ``objective`` as a chromosome (``[]`` for another objective,
    when no node releases, or when ``limits`` (:class:`~sqlanon.search.limits.Limits`) run out
    before the optimum is found: the clock is read before each of its statements; the seed's
    node checks count against their step limit). ``lightning_batch``: lightning's nodes per
    statement (its default when None). The node,
    its value and the search that found it are kept in ``ctx.genetic_seed`` (its
    :class:`~sqlanon.search.lattice.lattice.LatticeResult` in ``ctx.genetic_seed_result``)."""
    ctx.genetic_seed = ctx.genetic_seed_result = None
    if objective not in SEED_OBJECTIVES:
        return []
    bounds = ctx.bounds
    if bounds is None:
        bounds = [(0, h.max_level) for h in ctx.hierarchies]
    metric = seed_metric(ctx, objective)
    if math.prod(hi - lo + 1 for lo, hi in bounds) > MAX_NODES:
        return _lightning_seed(ctx, layout, metric, bounds, limits, lightning_batch)
    lattice = Lattice(ctx.stats, ctx.requirement, metric, bounds=ctx.bounds)
    if limits is not None and limits.time_limit is not None:
        def guard() -> None:
            if limits.left() <= 0 or (limits.per_unit() or 0.0) > limits.left():
                raise _TimeUp

        lattice.guard = guard
    try:
        # the same metric (weights, gs factor) and level bounds as the genetic search
        t0 = limits.now() if limits is not None else 0.0
        result = optimal.run(lattice)
        if limits is not None:
            limits.record(0, limits.now() - t0, steps=int(result.nodes_evaluated))
    except _TimeUp:
        ctx.progress("genetic: no lattice seed (the time limit ran out while looking for it)")
        return []
    except UnsatisfiableError:
        return []
    return _seeded(ctx, layout, "optimal", result, objective)


def lightning_options(limits, batch: int | None = None) -> dict | None:
    """Lightning's limits for the seed: at most :data:`LIGHTNING_SHARE` of the time left and of
    the steps left, stopping when it stalls (:data:`LIGHTNING_STALL`); without either limit,
    :data:`LIGHTNING_STEPS` evaluations, no stall; None when nothing is left.

    >>> from sqlanon.search.limits import Limits
    >>> lightning_options(Limits(None, 100)), lightning_options(None, 8)
    ({'step_limit': 75, 'stall': 0.1}, {'step_limit': 2000, 'batch': 8})
    """
    options: dict = {}
    if limits is not None and limits.time_limit is not None:
        left = limits.left()
        if left <= 0:
            return None
        options["time_limit"] = LIGHTNING_SHARE * left
    if limits is not None and limits.step_limit is not None:
        steps = limits.step_limit - limits.steps
        if steps <= 1:
            return None
        options["step_limit"] = max(1, int(LIGHTNING_SHARE * steps))
    if not options:
        options["step_limit"] = LIGHTNING_STEPS
    else:
        options["stall"] = LIGHTNING_STALL
    if batch is not None:
        options["batch"] = int(batch)
    return options


def _lightning_seed(ctx, layout, metric, bounds, limits, batch: int | None = None) -> list[tuple]:
    """Lightning's best node within :func:`lightning_options` as the seed."""
    options = lightning_options(limits, batch)
    if options is None:
        return []
    try:
        t0 = limits.now() if limits is not None else 0.0
        result = lightning.run(ctx.stats, ctx.requirement, metric, bounds, options, ctx.progress)
        if limits is not None:
            limits.record(0, limits.now() - t0, steps=int(result.nodes_evaluated))
    except UnsatisfiableError:
        ctx.progress("genetic: no lightning seed (no node it evaluated releases)")
        return []
    return _seeded(ctx, layout, "lightning", result, metric.name)


def _seeded(ctx, layout, search: str, result, objective: str) -> list[tuple]:
    ctx.genetic_seed_result = result
    ctx.genetic_seed = {"search": search, "node": [int(v) for v in result.node], "value": float(result.value), "nodes_evaluated": int(result.nodes_evaluated),
                        "stopped_by": result.extra.get("stopped_by")}
    ctx.progress(f"genetic: seeded with {search}'s best node {list(result.node)} ({objective} {result.value:.4f}, {result.nodes_evaluated} nodes)")
    return [node_chromosome(layout, ctx.hierarchies, result.node)]


def interval_bits(coder, hierarchy, level: int) -> list[int]:
    """A numeric QI's level as interval cuts: end point ``j`` (between the ``j``-th and next value
    holding rows) is set when the level's bands part the two values."""
    group = hierarchy.leaf_to_level(level)
    band: dict[float, int] = {}
    for leaf, value in enumerate(coder.value):
        band.setdefault(value, group[leaf])
    return [int(band[coder.distinct[j]] != band[coder.distinct[j + 1]]) for j in coder.endpoints]


def level_parts(layout, hierarchies, bounds=None) -> list[list[tuple]]:
    """Per QI, the chromosome parts of its full-domain levels (within ``bounds``, distinct):
    the genes of the genetic search's level mutation (ARX's GA mutates a QI to a random level)."""
    out = []
    for i, (coder, h) in enumerate(zip(layout.coders, hierarchies)):
        lo, hi = bounds[i] if bounds is not None else (0, h.max_level)
        parts: list[tuple] = []
        for level in range(lo, hi + 1):
            if coder.numeric:
                bits = interval_bits(coder, h, level)
            else:
                group = h.leaf_to_level(level)
                bits = [int(group[a] != group[b]) for a, b in zip(coder.order, coder.order[1:])]
            parts.append(tuple(coder.repair(bits)))
        out.append(list(dict.fromkeys(parts)))
    return out


def node_chromosome(layout, hierarchies, node) -> tuple:
    """A full-domain node as a chromosome: a bit between two neighbouring leaves (in tree order)
    is set when the node's level separates them; a numeric QI's bits are its bands' edges
    (:func:`interval_bits`)."""
    parts = []
    for coder, h, level in zip(layout.coders, hierarchies, node):
        if coder.numeric:
            parts.append(interval_bits(coder, h, level))
            continue
        group = h.leaf_to_level(level)
        parts.append([int(group[a] != group[b]) for a, b in zip(coder.order, coder.order[1:])])
    bits = layout.join(parts)
    return tuple(layout.repair(list(bits)))
