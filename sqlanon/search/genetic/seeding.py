"""Seeds for the genetic search: the full-domain lattice optimum for the same metric, as a
chromosome, so the genetic search starts from it and never ends worse than the lattice.

A full-domain node is a valid flexible solution (every QI cut at one level), so it is scored by the
genetic search's own evaluator like any chromosome; GENITOR keeps the best member, so the result
is at least as good as the seed under the genetic objective. Seeding runs only when it is cheap:
the objective is LM (the lattice's LM is the same definition) and the lattice has at most
``MAX_NODES`` nodes.

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
from sqlanon.search.lattice import optimal
from sqlanon.search.lattice.lattice import Lattice

MAX_NODES = 20_000


class _TimeUp(Exception):
    """The time limit ran out before the seed was found."""


def lattice_seed(ctx, layout, objective: str, limits=None) -> list[tuple]:
    """The lattice optimum under LM as a chromosome (``[]`` when not cheap or unsatisfiable, or
    when ``limits`` (:class:`~sqlanon.search.limits.Limits`) run out before it is found: the clock
    is read before each of its statements)."""
    if objective != "lm":
        return []
    if math.prod(h.max_level + 1 for h in ctx.hierarchies) > MAX_NODES:
        return []
    bounds, weights = getattr(ctx, "bounds", None), getattr(ctx, "weights", None)
    if bounds is not None and math.prod(hi - lo + 1 for lo, hi in bounds) > MAX_NODES:
        return []
    lattice = Lattice(ctx.stats, ctx.requirement, METRICS["lm"](weights=weights), bounds=bounds)
    if limits is not None and limits.time_limit is not None:
        def guard() -> None:
            if limits.left() <= 0 or (limits.per_unit() or 0.0) > limits.left():
                raise _TimeUp

        lattice.guard = guard
    try:
        # the same weighted LM and level bounds as the genetic search
        t0 = limits.now() if limits is not None else 0.0
        result = optimal.run(lattice)
        if limits is not None:
            limits.record(0, limits.now() - t0)
    except _TimeUp:
        ctx.progress("genetic: no lattice seed (the time limit ran out while looking for it)")
        return []
    except UnsatisfiableError:
        return []
    ctx.progress(f"genetic: seeded with the lattice optimum {list(result.node)} (LM {result.value:.4f}, {result.nodes_evaluated} nodes)")
    return [node_chromosome(layout, ctx.hierarchies, result.node)]


def interval_bits(coder, hierarchy, level: int) -> list[int]:
    """A numeric QI's level as interval cuts: end point ``j`` (between the ``j``-th and next value
    holding rows) is set when the level's bands part the two values."""
    group = hierarchy.leaf_to_level(level)
    band: dict[float, int] = {}
    for leaf, value in enumerate(coder.value):
        band.setdefault(value, group[leaf])
    return [int(band[coder.distinct[j]] != band[coder.distinct[j + 1]]) for j in coder.endpoints]


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
