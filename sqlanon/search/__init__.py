"""Searches, by name. ``HEURISTIC_SEARCHES`` walk the lattice without building it (wide tables);
``auto`` picks ``optimal`` when the lattice is small enough to search exactly, else ``lightning``. A lattice search is ``run(lattice, **options) -> LatticeResult``; other
searches (bottom-up, top-down, genetic, generate) are ``run(context, **options) -> Plan`` and are
registered in ``PLANNERS``. Adding one is adding a module and a line here."""

from collections.abc import Callable
from typing import Any

from sqlanon.search.lattice import incognito, optimal, samarati

LATTICE_SEARCHES: dict[str, Callable[..., Any]] = {
    "optimal": optimal.run,
    "samarati": samarati.run,
    "incognito": incognito.run,
}

#: lattice searches that never build the lattice: ``run(stats, requirement, metric, bounds, options,
#: progress) -> LatticeResult``
HEURISTIC_SEARCHES = {"lightning": "sqlanon.search.lightning.planner:run"}

#: ``optimal`` on a lattice above ``MAX_LATTICE_NODES`` nodes (sqlanon.search.lattice.lattice): Flash
#: bounded by time and steps, without building the lattice (same signature as the heuristics)
BOUNDED_OPTIMAL = "sqlanon.search.bounded.planner:run"

#: ``--search auto``: exact search up to this many lattice nodes, the heuristic above it
AUTO_EXACT_MAX_NODES = 100_000

#: flexible planners: name -> "module:function" (imported lazily so one broken module cannot
#: take the others down)
PLANNERS: dict[str, str] = {
    "bottom-up": "sqlanon.search.bottom_up.planner:run",
    "top-down": "sqlanon.search.top_down.planner:run",
    "genetic": "sqlanon.search.genetic.planner:run",
}

SEARCHES = sorted(set(LATTICE_SEARCHES) | set(PLANNERS) | set(HEURISTIC_SEARCHES) | {"auto"})
