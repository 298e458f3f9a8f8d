"""The lattice family's ``run(ctx) -> Plan``: the lattice built from the context (one shared
helper, :func:`lattice_plan`), searched by an algorithm of :data:`LATTICE_SEARCHES` (``run(lattice,
**options) -> LatticeResult``), SafePub's mechanism or local recoding's rounds on top; and their
preflights. ``optimal`` on a lattice above
:data:`~sqlanon.search.lattice.spec.MAX_LATTICE_NODES` nodes runs bounded, without the lattice."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from sqlanon.plan import Plan
from sqlanon.search.bounded import planner as bounded
from sqlanon.search.context import SearchContext, heuristic_plan
from sqlanon.search.lattice import incognito as incognito_mod, local_recoding, optimal as optimal_mod, safepub, samarati as samarati_mod
from sqlanon.search.lattice.lattice import Lattice, LatticeResult, require_size
from sqlanon.search.lattice.spec import lattice_size, runs_bounded

#: the lattice algorithms: ``run(lattice, **options) -> LatticeResult``
LATTICE_SEARCHES: dict[str, Callable[..., LatticeResult]] = {
    "optimal": optimal_mod.run,
    "samarati": samarati_mod.run,
    "incognito": incognito_mod.run,
}
#: a progress line every this many seconds on long searches
PROGRESS_SECONDS = 5.0


def optimal(ctx: SearchContext) -> Plan:
    if runs_bounded(lattice_size(ctx.levels), ctx.local_iterations is not None, ctx.safepub is not None):
        return heuristic_plan(ctx, bounded.run)
    return lattice_plan(ctx, LATTICE_SEARCHES["optimal"])


def samarati(ctx: SearchContext) -> Plan:
    return lattice_plan(ctx, LATTICE_SEARCHES["samarati"])


def incognito(ctx: SearchContext) -> Plan:
    return lattice_plan(ctx, LATTICE_SEARCHES["incognito"])


def built_preflight(policy: Any, levels: list[tuple[int, int]]) -> None:
    """A search that builds the lattice refuses one above the size it can hold."""
    require_size(levels)


def optimal_preflight(policy: Any, levels: list[tuple[int, int]]) -> None:
    """optimal on a large lattice runs bounded; what needs the built lattice (local recoding's
    rounds, SafePub) is refused there."""
    if not runs_bounded(lattice_size(levels), bool(policy.local_recoding), policy.epsilon is not None):
        require_size(levels)


def build_lattice(ctx: SearchContext) -> Lattice:
    """The lattice of the context's statistics within its levels, ticking its progress."""
    last = [time.perf_counter()]
    lattice: Lattice

    def tick(evaluated: int) -> None:  # a line every few seconds on long searches
        if ctx.phase is not None:
            ctx.phase.update(evaluated, len(lattice))
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            best = lattice.best_value
            name = ctx.metric.name if ctx.metric is not None else ""
            ctx.progress(f"{evaluated} nodes evaluated of {len(lattice):,}" + (f", best {name} so far {best:.6g}" if best < math.inf else ""))

    lattice = Lattice(ctx.stats, ctx.requirement, ctx.metric, progress=tick, bounds=ctx.levels)
    return lattice


def lattice_plan(ctx: SearchContext, algorithm: Callable[..., LatticeResult]) -> Plan:
    """Build the lattice, search it (or SafePub's mechanism over it), then local recoding's rounds."""
    lattice = build_lattice(ctx)
    searched = time.perf_counter()
    if ctx.safepub is not None:
        result = safepub.run(lattice, ctx.safepub, lattice.metric.name, ctx.progress)
    else:
        result = algorithm(lattice, **ctx.options)
    seconds = time.perf_counter() - searched
    plan = Plan.from_lattice_result(ctx.search, ctx.stats, ctx.requirement, ctx.metric, result, ctx.bounds, statements=result.statements, search_seconds=round(seconds, 3), **ctx.chosen)
    if ctx.safepub is not None:
        plan.extra["safepub"] = {**ctx.safepub.describe(), **result.extra["safepub"]}
    if ctx.local_iterations is not None:
        _recode(ctx, plan, result, algorithm)
    return plan


def _recode(ctx: SearchContext, plan: Plan, result: LatticeResult, algorithm: Callable[..., LatticeResult]) -> None:
    """Local recoding: the rows the optimum suppresses searched again, round by round."""
    stats, metric = ctx.stats, ctx.metric
    assert ctx.local_iterations is not None and metric is not None
    first = local_recoding.Step(tuple(result.node), stats, stats.rows, plan.suppressed_rows, plan.metric_value, result.nodes_evaluated)
    steps = local_recoding.recode(first, ctx.requirement, metric, algorithm, ctx.levels, ctx.local_iterations, ctx.progress)
    plan.local = steps
    plan.suppressed_rows = steps[-1].suppressed
    plan.metric_value = local_recoding.combined_value(steps, metric, len(stats.qis), stats.rows)
    plan.nodes_evaluated = sum(s.nodes_evaluated for s in steps)
    plan.extra["local_recoding"] = {
        "rounds": local_recoding.describe(steps, stats.qis),
        "global_optimum": {"suppressed_rows": first.suppressed, "metric": first.value},
    }
