"""The lattice family (optimal, Samarati, Incognito) as the registry knows it: options, preflight,
the models honoured (every one: the lattice's class table computes each aggregate)."""

from __future__ import annotations

import math

from pydantic import ConfigDict, Field

from sqlanon.search.options import SearchOptions, local_rows_field
from sqlanon.search.spec import SearchSpec

#: a lattice of more nodes is not built: optimal then runs bounded, the others are refused
MAX_LATTICE_NODES = 2_000_000
#: the searches that build the lattice (SafePub and local recoding need it built)
BUILT = ("optimal", "samarati", "incognito")


def lattice_size(bounds) -> int:
    """Nodes of the lattice within ``bounds`` (per QI ``(lowest, highest)``), without building it."""
    return math.prod(hi - lo + 1 for lo, hi in bounds)


def runs_bounded(nodes: int, local_recoding: bool, safepub: bool) -> bool:
    """Does ``optimal`` run as the bounded optimal search (:mod:`sqlanon.search.bounded.planner`)?
    On a lattice above :data:`MAX_LATTICE_NODES` nodes, unless the run needs the built lattice
    (local recoding re-searches it; SafePub samples it)."""
    return nodes > MAX_LATTICE_NODES and not local_recoding and not safepub


class OptimalOptions(SearchOptions):
    """``--search optimal``: the bound-ordered exhaustive lattice search."""

    model_config = ConfigDict(title="optimal search options")
    batch: int = Field(128, ge=1, description="Nodes evaluated by one statement.")
    probes: int = Field(64, ge=1, description="Flash-style probes (paths to the cheapest undecided nodes) run side by side.")
    lookahead_threads: bool = Field(False, description="On a large frequency set with several engine threads, each round also holds both possible next nodes of every probe (fewer, wider statements; more nodes).")
    time_limit: float | None = Field(None, gt=0, description="Lattices above 2,000,000 nodes (searched without building them): stop after this many seconds (default 60) and return the best node found, not proven optimal.")
    step_limit: int | None = Field(None, ge=1, description="Lattices above 2,000,000 nodes: stop after this many node evaluations.")
    local_rows: int = local_rows_field()


class SamaratiOptions(SearchOptions):
    """``--search samarati``: binary search on height."""

    model_config = ConfigDict(title="samarati search options")
    local_rows: int = local_rows_field()


class IncognitoOptions(SearchOptions):
    """``--search incognito``: subset-pruned lattice search (falls back to optimal when the
    requirement is not monotone, hence ``batch``)."""

    model_config = ConfigDict(title="incognito search options")
    batch: int = Field(128, ge=1, description="Optimal fallback: nodes evaluated by one statement.")
    probes: int = Field(64, ge=1, description="Optimal fallback: probes run side by side.")
    local_rows: int = local_rows_field()


_RUN = "sqlanon.search.lattice.run"
OPTIMAL = SearchSpec("optimal", f"{_RUN}:optimal", OptimalOptions, preflight=f"{_RUN}:optimal_preflight", limits_above=MAX_LATTICE_NODES, lattice=True)
SAMARATI = SearchSpec("samarati", f"{_RUN}:samarati", SamaratiOptions, preflight=f"{_RUN}:built_preflight", lattice=True)
INCOGNITO = SearchSpec("incognito", f"{_RUN}:incognito", IncognitoOptions, preflight=f"{_RUN}:built_preflight", lattice=True)
