"""Every search, by name: a plain dict of :class:`~sqlanon.search.spec.SearchSpec` (like sqlglot's
optimizer ``RULES``). Adding a search is adding its folder (``run(ctx) -> Plan`` and a
``spec.py``) and a line here; the CLI, the policy, its schema and the option parser read the
names and models from here.

``auto`` is resolved here (:func:`resolve_auto`): ``optimal`` when the lattice within the level
bounds has at most :data:`AUTO_EXACT_MAX_NODES` nodes, else ``lightning``; and on such a wide
lattice, for a metric the genetic search optimizes from a lattice seed (:data:`AUTO_GENETIC_METRICS`)
and privacy models it honours, lightning then the genetic search seeded from lightning's best
node (:func:`sqlanon.search.choose.choose_search`, :func:`sqlanon.search.genetic.spec.genetic_options`).

>>> sorted(SEARCHES)
['auto', 'bottom-up', 'genetic', 'incognito', 'lattice-genetic', 'lightning', 'optimal', 'samarati', 'top-down']
>>> resolve_auto(12), resolve_auto(10**6)
('optimal', 'lightning')
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from sqlanon.search.bottom_up.spec import BOTTOM_UP
from sqlanon.search.genetic.spec import GENETIC
from sqlanon.search.lattice.spec import INCOGNITO, OPTIMAL, SAMARATI
from sqlanon.search.lattice_genetic.spec import LATTICE_GENETIC
from sqlanon.search.lightning.spec import LIGHTNING, LightningOptions
from sqlanon.search.spec import SearchSpec
from sqlanon.search.top_down.spec import TOP_DOWN

#: ``--search auto``: exact search up to this many lattice nodes, the heuristic above it
AUTO_EXACT_MAX_NODES = 100_000


class AutoOptions(LightningOptions):
    """``--search auto``: optimal on small lattices, lightning (with these limits) on large ones,
    then the genetic search seeded from lightning's best node (the limits bound both together)."""

    model_config = ConfigDict(title="auto search options")
    genetic: bool = Field(True, description="On a lattice too large for the optimal search, run the genetic search after lightning, seeded from its best node (false: lightning alone).")
    genetic_seed: int = Field(1, description="The genetic search's random seed (the same seed, the same answer under a step limit).")


#: the metrics ``auto`` runs the genetic search for on a wide lattice (those it is seeded for by
#: a lattice node: :data:`sqlanon.search.genetic.seeding.SEED_OBJECTIVES`; tests compare them)
AUTO_GENETIC_METRICS = ("lm", "loss", "loss-arithmetic", "granularity")


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
    "lattice-genetic": LATTICE_GENETIC,
    "auto": AUTO,
}


def resolve_auto(nodes: int) -> str:
    """What ``auto`` runs on a lattice of ``nodes`` nodes."""
    return "optimal" if nodes <= AUTO_EXACT_MAX_NODES else "lightning"
