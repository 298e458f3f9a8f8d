"""Which search runs, and the refusals made before the base scan from the registry's specs
(:data:`sqlanon.search.registry.SEARCHES`): ``auto`` resolved, the search's own preflight
(lattice size, its options), the limits it would ignore, the privacy models it cannot honour.

``auto`` measures the lattice (within the level bounds) without building it: up to
:data:`sqlanon.search.registry.AUTO_EXACT_MAX_NODES` nodes it runs ``optimal`` (provably best),
above that ``lightning`` (time/step-limited heuristic). The report says what was chosen and why
(``search_auto``).
"""

from __future__ import annotations

from sqlanon.errors import ConfigError
from sqlanon.search.lattice.lattice import level_bounds
from sqlanon.search.lattice.spec import MAX_LATTICE_NODES, lattice_size
from sqlanon.search.registry import AUTO_EXACT_MAX_NODES, SEARCHES, resolve_auto

LIMITS = ("time_limit", "step_limit")


def preflight(policy, hierarchies, qis: list[str], requirement) -> None:
    """The refusals that depend on the inputs' shape alone, made before the base scan: the
    models it cannot honour, the search's own (the exact searches' lattice size, its options), and
    limits it would ignore."""
    levels = level_bounds(hierarchies, qis, policy.min_level, policy.max_level)
    search = policy.search
    if search == "auto":
        search = resolve_auto(lattice_size(levels))
    refuse_unhonoured(search, requirement)
    SEARCHES[search].check(policy, levels)
    refuse_limits(search, {k: v for k, v in policy.search_options.items() if policy.search != "auto"}, lattice_size(levels))


def refuse_unhonoured(search: str, requirement) -> None:
    """A privacy model whose class aggregates (``needs.names()``) the search cannot compute is
    refused, naming the model and the search."""
    spec = SEARCHES[search]
    for model in requirement.models:
        if spec.can_honour(model.needs.names()):
            continue
        lattice = ", ".join(name for name, other in SEARCHES.items() if other.lattice)
        others = [name for name, other in SEARCHES.items() if not other.lattice and other.can_honour(model.needs.names())]
        where = f"is computed by the lattice searches ({lattice})" + "".join(f" and the {name} search" for name in others)
        raise ConfigError(f"{model.label or model.name} {where}; search {search} cannot honour it")


def choose_search(policy, stats) -> tuple[str, dict]:
    """``(search name, report fields)``: ``auto`` resolved, anything else unchanged."""
    if policy.search != "auto":
        return policy.search, {}
    bounds = level_bounds(stats.hierarchies, stats.qis, policy.min_level, policy.max_level)
    size = lattice_size(bounds)
    name = resolve_auto(size)
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
    spec = SEARCHES[search]
    for key in LIMITS:
        if options.get(key) is None or spec.honours_limit(key, nodes):
            continue
        flag = "--" + key.replace("_", "-")
        users = f"lightning or auto, or optimal on a lattice above {MAX_LATTICE_NODES:,} nodes" + (" (and --time-limit: genetic, bottom-up)" if key == "time_limit" else "")
        raise ConfigError(f"{flag} applies to --search {users}; search {search} would ignore it")


__all__ = ["preflight", "choose_search", "refuse_limits", "refuse_unhonoured"]
