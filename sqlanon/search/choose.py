"""Which lattice search runs: ``--search auto`` and the heuristic searches' plan.

``auto`` measures the lattice (within the level bounds) without building it: up to
:data:`sqlanon.search.AUTO_EXACT_MAX_NODES` nodes it runs ``optimal`` (provably best), above that
``lightning`` (time/step-limited heuristic). The report says what was chosen and why
(``search_auto``).
"""

from __future__ import annotations

import importlib

from sqlanon.errors import ConfigError
from sqlanon.plan import Plan
from sqlanon.search import AUTO_EXACT_MAX_NODES, HEURISTIC_SEARCHES, LATTICE_SEARCHES
from sqlanon.search.lattice.lattice import MAX_LATTICE_NODES, level_bounds, require_size
from sqlanon.search.lightning.planner import lattice_size
from sqlanon.search.genetic.objective import build_objective
from sqlanon.search.genetic.planner import parse_options

LIMITS = ("time_limit", "step_limit")


def preflight(policy, hierarchies, qis: list[str]) -> None:
    """The refusals that depend on the inputs' shape alone, made before the base scan: the
    exact searches' lattice size, and limits the search that will run would ignore."""
    bounds = level_bounds(hierarchies, qis, policy.min_level, policy.max_level)
    search = policy.search
    if search == "auto":
        search = "optimal" if lattice_size(bounds) <= AUTO_EXACT_MAX_NODES else "lightning"
    if search in LATTICE_SEARCHES and not bounded_optimal(policy, search, bounds):
        # optimal on a large lattice runs bounded (Flash without the lattice); what else needs the
        # built lattice (samarati, incognito, local recoding's rounds, SafePub) is refused here
        require_size(bounds)
    refuse_limits(search, {k: v for k, v in policy.search_options.items() if policy.search != "auto"}, lattice_size(bounds))
    planner_preflight(policy)


def bounded_optimal(policy, search: str, bounds) -> bool:
    """Does ``search`` run as the bounded optimal search (:mod:`sqlanon.search.bounded.planner`)?
    ``optimal`` on a lattice above :data:`MAX_LATTICE_NODES` nodes, unless the run needs the built
    lattice (local recoding re-searches it; SafePub samples it)."""
    return search == "optimal" and lattice_size(bounds) > MAX_LATTICE_NODES and not policy.local_recoding and policy.epsilon is None


def planner_preflight(policy) -> None:
    """The flexible planners' refusals that need no data: the genetic objective and its options,
    top-down's Y attributes."""
    options = policy.search_options
    if policy.search == "genetic":
        build_objective(str(options.get("objective") or policy.metric or "lm"), parse_options(options), policy.class_column)
    if policy.search == "top-down" and not options.get("y"):
        raise ConfigError("--y is required for --search top-down (the attributes X must not be linked to)")


def choose_search(policy, stats) -> tuple[str, dict]:
    """``(search name, report fields)``: ``auto`` resolved, anything else unchanged."""
    if policy.search != "auto":
        return policy.search, {}
    bounds = level_bounds(stats.hierarchies, stats.qis, policy.min_level, policy.max_level)
    size = lattice_size(bounds)
    name = "optimal" if size <= AUTO_EXACT_MAX_NODES else "lightning"
    info = {"search_auto": {"chose": name, "lattice_nodes": size, "exact_up_to_nodes": AUTO_EXACT_MAX_NODES}}
    if name == "optimal":
        given = [k for k in LIMITS if policy.search_options.get(k) is not None]
        if given:
            # the exact search needs no limit: say so rather than pretend it was applied
            info["search_auto"]["limits_not_needed"] = given
            policy.search_options = {k: v for k, v in policy.search_options.items() if k not in LIMITS}
    return name, info


def refuse_limits(search: str, options: dict, nodes: int | None = None) -> None:
    """--time-limit / --step-limit are honoured by lightning, by optimal on a lattice above
    :data:`MAX_LATTICE_NODES` nodes (bounded) (and time_limit by genetic and bottom-up): refuse
    them for a search that would ignore them."""
    if search in HEURISTIC_SEARCHES or (search == "optimal" and nodes is not None and nodes > MAX_LATTICE_NODES):
        return
    for key in LIMITS:
        if options.get(key) is None or (search in ("genetic", "bottom-up") and key == "time_limit"):
            continue
        flag = "--" + key.replace("_", "-")
        users = f"lightning or auto, or optimal on a lattice above {MAX_LATTICE_NODES:,} nodes" + (" (and --time-limit: genetic, bottom-up)" if key == "time_limit" else "")
        raise ConfigError(f"{flag} applies to --search {users}; search {search} would ignore it")


def run_heuristic(search: str, policy, stats, requirement, metric, say, chosen: dict, module: str | None = None) -> Plan:
    """Run a search that never builds the lattice: ``search``'s (``module``: another, as the
    bounded optimal search, reported under ``search``'s name)."""
    module_name, _, func = (module or HEURISTIC_SEARCHES[search]).partition(":")
    run = getattr(importlib.import_module(module_name), func)
    bounds = level_bounds(stats.hierarchies, stats.qis, policy.min_level, policy.max_level)
    result = run(stats, requirement, metric, bounds, policy.search_options, say)
    info = result.extra.get("heuristic", {})
    say(
        f"{search}: {info.get('evaluations')} nodes evaluated of {result.nodes_total:,} in {info.get('seconds')} s, "
        f"stopped by {info.get('stopped_by')}" + (" (optimum proven)" if info.get("optimal") else "")
    )
    bounded = bounds if policy.min_level or policy.max_level else None
    return Plan.from_lattice_result(search, stats, requirement, metric, result, bounded, **chosen, **result.extra)


__all__ = ["preflight", "choose_search", "refuse_limits", "run_heuristic", "LATTICE_SEARCHES"]
