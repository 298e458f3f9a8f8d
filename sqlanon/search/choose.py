"""Which search runs, and the refusals made before the base scan from the registry's specs
(:data:`sqlanon.search.registry.SEARCHES`): ``auto`` resolved, the search's own preflight
(lattice size, its options), the limits it would ignore, the privacy models it cannot honour.

``auto`` measures the lattice (within the level bounds) without building it: up to
:data:`sqlanon.search.registry.AUTO_EXACT_MAX_NODES` nodes it runs ``optimal`` (provably best),
above that ``lightning`` (time/step-limited heuristic), followed, for a metric of
:data:`sqlanon.search.registry.AUTO_GENETIC_METRICS` and models the genetic search honours, by the
genetic search seeded from lightning's best node (:func:`auto_genetic`): the search runs as
``genetic`` and releases the better of the two, lightning's node when the genetic search found
nothing better. The report says what was chosen and why (``search_auto``: ``chose``, and on a wide
table the ``runs`` and which produced the answer, ``answer_from``).
"""

from __future__ import annotations

from sqlanon.errors import ConfigError
from sqlanon.search.lattice.lattice import level_bounds
from sqlanon.search.lattice.spec import MAX_LATTICE_NODES, lattice_size
from sqlanon.search.registry import AUTO_EXACT_MAX_NODES, AUTO_GENETIC_METRICS, SEARCHES, resolve_auto

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


def auto_genetic(policy, metric, requirement) -> bool:
    """Whether ``auto`` follows lightning by the genetic search seeded from it: asked
    (``genetic``, on by default), a metric of :data:`AUTO_GENETIC_METRICS`, models the genetic
    search honours, and no local recoding or SafePub run (they re-run the lattice search)."""
    if not policy.search_options.get("genetic", True) or metric is None or metric.name not in AUTO_GENETIC_METRICS:
        return False
    if policy.local_recoding or policy.epsilon is not None:
        return False
    models = requirement.models if requirement is not None else []
    return all(SEARCHES["genetic"].can_honour(model.needs.names()) for model in models)


def choose_search(policy, stats, metric=None, requirement=None) -> tuple[str, dict]:
    """``(search name, report fields)``: ``auto`` resolved, anything else unchanged. Above the
    exact limit, ``genetic`` seeded from lightning when :func:`auto_genetic` (its plan says which
    of the two produced the answer)."""
    if policy.search != "auto":
        return policy.search, {}
    bounds = level_bounds(stats.hierarchies, stats.qis, policy.min_level, policy.max_level)
    size = lattice_size(bounds)
    name = resolve_auto(size)
    info = {"search_auto": {"chose": name, "lattice_nodes": size, "exact_up_to_nodes": AUTO_EXACT_MAX_NODES}}
    if name == "lightning" and auto_genetic(policy, metric, requirement):
        name = "genetic"
        info["search_auto"].update({"chose": "lightning+genetic", "runs": ["lightning", "genetic"]})
    if name == "optimal":
        given = [k for k in LIMITS if policy.search_options.get(k) is not None]
        if given:
            # the exact search needs no limit: say so rather than pretend it was applied
            info["search_auto"]["limits_not_needed"] = given
            policy.search_options = {k: v for k, v in policy.search_options.items() if k not in LIMITS}
    return name, info


def refuse_limits(search: str, options: dict, nodes: int | None = None) -> None:
    """--time-limit / --step-limit are honoured by lightning, by optimal on a lattice above
    :data:`MAX_LATTICE_NODES` nodes (bounded), by genetic (and time_limit by bottom-up): refuse
    them for a search that would ignore them."""
    spec = SEARCHES[search]
    for key in LIMITS:
        if options.get(key) is None or spec.honours_limit(key, nodes):
            continue
        flag = "--" + key.replace("_", "-")
        users = f"lightning, genetic or auto, or optimal on a lattice above {MAX_LATTICE_NODES:,} nodes" + (" (and --time-limit: bottom-up)" if key == "time_limit" else "")
        raise ConfigError(f"{flag} applies to --search {users}; search {search} would ignore it")


__all__ = ["preflight", "choose_search", "auto_genetic", "refuse_limits", "refuse_unhonoured"]
