"""Every search, by name: a plain dict of :class:`~sqlanon.search.spec.SearchSpec` (like sqlglot's
optimizer ``RULES``). Adding a search is adding its folder (``run(ctx) -> Plan`` and a
``spec.py``) and a line here; the CLI, the policy, its schema and the option parser read the
names and models from here.

``auto`` is resolved here (:func:`resolve_auto`): ``optimal`` when the lattice within the level
bounds has at most :data:`AUTO_EXACT_MAX_NODES` nodes, else ``lightning``.

>>> sorted(SEARCHES)
['auto', 'bottom-up', 'genetic', 'incognito', 'lightning', 'optimal', 'samarati', 'top-down']
>>> resolve_auto(12), resolve_auto(10**6)
('optimal', 'lightning')
"""

from __future__ import annotations

from pydantic import ConfigDict

from sqlanon.search.bottom_up.spec import BOTTOM_UP
from sqlanon.search.genetic.spec import GENETIC
from sqlanon.search.lattice.spec import INCOGNITO, OPTIMAL, SAMARATI
from sqlanon.search.lightning.spec import LIGHTNING, LightningOptions
from sqlanon.search.spec import SearchSpec
from sqlanon.search.top_down.spec import TOP_DOWN

#: ``--search auto``: exact search up to this many lattice nodes, the heuristic above it
AUTO_EXACT_MAX_NODES = 100_000


class AutoOptions(LightningOptions):
    """``--search auto``: optimal on small lattices, lightning (with these limits) on large ones."""

    model_config = ConfigDict(title="auto search options")


#: resolved to optimal or lightning before anything runs (:func:`resolve_auto`)
AUTO = SearchSpec("auto", None, AutoOptions, limits=LIGHTNING.limits, lattice=True)

SEARCHES: dict[str, SearchSpec] = {
    "optimal": OPTIMAL,
    "samarati": SAMARATI,
    "incognito": INCOGNITO,
    "bottom-up": BOTTOM_UP,
    "top-down": TOP_DOWN,
    "genetic": GENETIC,
    "lightning": LIGHTNING,
    "auto": AUTO,
}


def resolve_auto(nodes: int) -> str:
    """What ``auto`` runs on a lattice of ``nodes`` nodes."""
    return "optimal" if nodes <= AUTO_EXACT_MAX_NODES else "lightning"
