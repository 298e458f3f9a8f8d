"""Seeds for the genetic search: the full-domain lattice optimum for the same metric, as a
chromosome, so the genetic search starts from it and never ends worse than the lattice.

A full-domain node is a valid flexible solution (every QI cut at one level), so it is scored by the
genetic search's own evaluator like any chromosome; GENITOR keeps the best member, so the result
is at least as good as the seed under the genetic objective. Seeding runs only when it is cheap:
the objective is LM (the lattice's LM is the same definition), every QI is categorical (a numeric
QI has no levels), and the lattice has at most ``MAX_NODES`` nodes.
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
    if objective != "lm" or any(c.numeric for c in layout.coders):
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


def node_chromosome(layout, hierarchies, node) -> tuple:
    """A full-domain node as a chromosome: a bit between two neighbouring leaves (in tree order)
    is set when the node's level separates them."""
    parts = []
    for coder, h, level in zip(layout.coders, hierarchies, node):
        group = h.leaf_to_level(level)
        parts.append([int(group[a] != group[b]) for a, b in zip(coder.order, coder.order[1:])])
    bits = layout.join(parts)
    return tuple(layout.repair(list(bits)))
